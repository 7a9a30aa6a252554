package io.github.zklock.sample;

import java.time.Duration;
import java.util.Optional;

/**
 * Measures, per request thread, how long a purchase waited before its method body started: from
 * the controller's call into the {@link StockService} proxy to the first statement of the method.
 *
 * <p>For the locked purchase that time is the wait for the ZooKeeper lock (queueing behind other
 * holders plus the ZooKeeper round trips of the grant), followed by the start of the transaction
 * (a pooled connection); for the unlocked purchase it is the start of the transaction alone. The
 * controller returns it in the {@code X-Lock-Wait-Ms} response header.
 *
 * <p>Thread-confined: {@link #start()}, {@link #bodyStarted()} and {@link #stop()} must be called
 * on the same thread, which holds because the lock advice and the transaction run the method on
 * the calling thread.
 */
public final class LockWaitTimer {

	private static final ThreadLocal<long[]> marks = new ThreadLocal<>();

	private LockWaitTimer() {
	}

	/**
	 * Start timing on this thread, just before calling the guarded service method.
	 */
	public static void start() {
		marks.set(new long[] { System.nanoTime(), 0 });
	}

	/**
	 * Record that the guarded method body starts. Has no effect on a thread that is not timing
	 * (the service called from elsewhere) or that already recorded it.
	 */
	public static void bodyStarted() {
		long[] timing = marks.get();
		if (timing != null && timing[1] == 0) {
			timing[1] = System.nanoTime();
		}
	}

	/**
	 * Stop timing on this thread.
	 * @return the time from {@link #start()} to {@link #bodyStarted()}, or empty when the body did
	 * not start (the lock was not granted, or the call failed before)
	 */
	public static Optional<Duration> stop() {
		long[] timing = marks.get();
		marks.remove();
		if (timing == null || timing[1] == 0) {
			return Optional.empty();
		}
		return Optional.of(Duration.ofNanos(timing[1] - timing[0]));
	}

}
