package io.github.zklock.sample.chaos;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The pause of a workload between its read and its write: the calling thread is parked, no CPU
 * spent, so that CPU starvation of the process does not lengthen it much.
 */
final class ThinkTime {

	private ThinkTime() {
	}

	/**
	 * Park the calling thread for the given time.
	 * @param time how long; zero or negative returns at once
	 * @param what what the thread was doing, for the exception's message
	 * @throws IllegalStateException if the thread is interrupted meanwhile (its interrupt status is
	 * set again), so that the transaction around it rolls back
	 */
	static void park(Duration time, String what) {
		if (time.isZero() || time.isNegative()) {
			return;
		}
		long deadline = System.nanoTime() + time.toNanos();
		for (long left = time.toNanos(); left > 0; left = deadline - System.nanoTime()) {
			LockSupport.parkNanos(left);
			if (Thread.interrupted()) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while " + what);
			}
		}
	}

}
