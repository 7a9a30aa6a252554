package io.github.zklock.docs.family;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import io.github.zklock.LockTemplate;

/**
 * The guide's {@code java.util.concurrent} views.
 */
public class ConcurrentViews {

	private final LockTemplate locks;

	private int counter;

	/**
	 * @param locks the template
	 */
	public ConcurrentViews(LockTemplate locks) {
		this.locks = locks;
	}

	/**
	 * Count under the lock view of a key.
	 * @return the counter
	 */
	public int increment() {
		// tag::lock[]
		Lock lock = this.locks.lock("/counters/orders");
		lock.lock();
		try {
			return ++this.counter;
		}
		finally {
			lock.unlock();
		}
		// end::lock[]
	}

	/**
	 * Read under the read side of a key's read/write view.
	 * @return the counter, or -1 when the read lock was not granted in time
	 * @throws InterruptedException if interrupted while waiting
	 */
	public int read() throws InterruptedException {
		// tag::read-write[]
		ReadWriteLock prices = this.locks.readWriteLock("/prices");
		if (prices.readLock().tryLock(2, TimeUnit.SECONDS)) {
			try {
				return this.counter;
			}
			finally {
				prices.readLock().unlock();
			}
		}
		// end::read-write[]
		return -1;
	}

}
