package io.github.zklock.docs.family;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Service;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;

/**
 * The guide's multi-lock examples: both accounts of a transfer, all or nothing.
 */
@Service
public class TransferService {

	private final Map<String, Long> balances = new ConcurrentHashMap<>();

	private final LockTemplate locks;

	/**
	 * @param locks the template
	 */
	public TransferService(LockTemplate locks) {
		this.locks = locks;
	}

	// tag::annotated[]
	@DistributedLock(path = { "/account/#{#from}", "/account/#{#to}" }, waitTime = "2s")
	public void transfer(String from, String to, long cents) {
		LockHandle both = LockContext.require(); // a multi-lock: one part per account
		for (LockHandle account : both.parts()) {
			account.checkHeld(); // each part has its own path and fencing token
		}
		this.balances.merge(from, -cents, Long::sum);
		this.balances.merge(to, cents, Long::sum);
	}
	// end::annotated[]

	/**
	 * The same, programmatically.
	 * @param from the debited account
	 * @param to the credited account
	 * @param cents the amount
	 */
	public void transferProgrammatically(String from, String to, long cents) {
		// tag::programmatic[]
		LockRequest accounts = LockRequest.of(List.of("/account/" + from, "/account/" + to))
			.withWaitTime(Duration.ofSeconds(2));
		try (LockHandle both = this.locks.acquire(accounts)) {
			this.balances.merge(from, -cents, Long::sum);
			this.balances.merge(to, cents, Long::sum);
		}
		// end::programmatic[]
	}

	/**
	 * The balance of an account.
	 * @param account the account
	 * @return its balance in cents
	 */
	public long balance(String account) {
		return this.balances.getOrDefault(account, 0L);
	}

}
