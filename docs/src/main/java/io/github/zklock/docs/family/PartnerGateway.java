package io.github.zklock.docs.family;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.stereotype.Service;

import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedSemaphore;

/**
 * The guide's semaphore examples: at most N calls at once, across every instance.
 */
@Service
public class PartnerGateway {

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger mostInFlight = new AtomicInteger();

	private final LockTemplate locks;

	/**
	 * @param locks the template
	 */
	public PartnerGateway(LockTemplate locks) {
		this.locks = locks;
	}

	// tag::annotated[]
	@DistributedSemaphore(path = "/partner/#{#partnerId}", permits = 3, waitTime = "5s")
	public String quote(String partnerId, String order) throws InterruptedException {
		// at most 3 calls of one partner in flight, over all instances
		// end::annotated[]
		int now = this.inFlight.incrementAndGet();
		this.mostInFlight.accumulateAndGet(now, Math::max);
		try {
			Thread.sleep(20);
			return partnerId + ":" + order;
		}
		finally {
			this.inFlight.decrementAndGet();
		}
		// tag::annotated[]
	}
	// end::annotated[]

	/**
	 * A permit taken programmatically.
	 * @return the permit's fencing token
	 */
	public long export() {
		// tag::programmatic[]
		try (LockHandle permit = this.locks.acquire(LockRequest.permit("/exports", 2)
			.withWaitTime(Duration.ofSeconds(10)))) {
			return permit.fencingToken(); // the token of the permit's lease znode
		}
		// end::programmatic[]
	}

	/**
	 * The most calls of {@link #quote} seen in flight at once in this application.
	 * @return the count
	 */
	public int mostInFlight() {
		return this.mostInFlight.get();
	}

}
