package io.github.zklock.docs.family;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.github.zklock.LockTemplate;

/**
 * The guide's distributed condition: a quota of exports running at once across every instance,
 * whose count lives in a store all instances share.
 */
public class ExportQuota {

	/** The count of exports running, shared by every instance (a table row, say). */
	public interface RunningExports {

		/**
		 * @return how many exports run now
		 */
		int count();

		/**
		 * @param count how many run from now on
		 */
		void set(int count);

	}

	private final RunningExports running;

	private final int limit;

	private final Lock lock;

	private final Condition freed;

	/**
	 * @param locks the template
	 * @param running the shared count
	 * @param limit how many exports may run at once
	 */
	public ExportQuota(LockTemplate locks, RunningExports running, int limit) {
		this.running = running;
		this.limit = limit;
		// tag::condition[]
		this.lock = locks.lock("/quota/exports");
		this.freed = this.lock.newCondition(); // the same condition in every instance
		// end::condition[]
	}

	// tag::await[]
	/**
	 * Take a place in the quota, waiting at most {@code maxWait} for one to be freed.
	 * @param maxWait the longest wait
	 * @return whether a place was taken
	 * @throws InterruptedException if interrupted while waiting
	 */
	public boolean take(Duration maxWait) throws InterruptedException {
		long nanos = maxWait.toNanos();
		this.lock.lock();
		try {
			while (this.running.count() >= this.limit) {
				if (nanos <= 0) {
					return false;
				}
				nanos = this.freed.awaitNanos(nanos); // lock released while waiting, held again after
			}
			this.running.set(this.running.count() + 1);
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Give a place back, waking the longest waiter of any instance. */
	public void give() {
		this.lock.lock();
		try {
			this.running.set(this.running.count() - 1);
			this.freed.signal();
		}
		finally {
			this.lock.unlock();
		}
	}
	// end::await[]

}
