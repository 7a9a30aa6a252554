package io.github.zklock.docs.troubleshooting;

import org.springframework.stereotype.Service;

import io.github.zklock.LockAssert;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;

/**
 * The guide's troubleshooting example: a locked method called from its own class runs without
 * its lock, which {@link LockAssert#assertHeld()} reports; the call through another bean locks.
 */
@Service
public class InvoiceService {

	// tag::self-invocation[]
	@DistributedLock(path = "/invoices/#{#invoiceId}", mode = LockMode.EXCLUSIVE, waitTime = "2s")
	public String issue(String invoiceId) {
		LockAssert.assertHeld(); // throws IllegalStateException when the call bypassed the proxy
		return "issued " + invoiceId;
	}

	public String issueAll(String... invoiceIds) {
		StringBuilder issued = new StringBuilder();
		for (String invoiceId : invoiceIds) {
			issued.append(issue(invoiceId)); // this.issue(...): no proxy in between, no lock
		}
		return issued.toString();
	}
	// end::self-invocation[]

}
