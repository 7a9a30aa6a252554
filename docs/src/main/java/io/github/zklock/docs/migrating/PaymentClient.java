package io.github.zklock.docs.migrating;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.springframework.stereotype.Component;

import io.github.zklock.LockTemplate;

/**
 * The guide's migration from Redisson's {@code RLock}: a {@link Lock} of the key, from the
 * template, used as the {@code RLock} was.
 */
@Component
public class PaymentClient {

	private final LockTemplate locks;

	/**
	 * @param locks the template
	 */
	public PaymentClient(LockTemplate locks) {
		this.locks = locks;
	}

	/**
	 * Capture a payment once, under the order's lock.
	 * @param orderId the order
	 * @param capture what captures it
	 * @return whether the lock was granted and the capture ran
	 * @throws InterruptedException if interrupted while waiting
	 */
	public boolean capture(String orderId, Runnable capture) throws InterruptedException {
		// tag::redisson[]
		Lock lock = this.locks.lock("/payments/" + orderId); // was: redisson.getLock("payments:" + orderId)
		if (!lock.tryLock(5, TimeUnit.SECONDS)) {
			return false;
		}
		try {
			capture.run();
		}
		finally {
			lock.unlock();
		}
		// end::redisson[]
		return true;
	}

}
