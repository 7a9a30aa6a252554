package io.github.zklock.docs.troubleshooting;

import org.springframework.stereotype.Service;

/**
 * The fix of the guide's self-invocation example: the loop lives in another bean, so each call
 * goes through the proxy of {@link InvoiceService} and takes its lock.
 */
// tag::fix[]
@Service
public class InvoiceBatch {

	private final InvoiceService invoices; // the proxy

	public InvoiceBatch(InvoiceService invoices) {
		this.invoices = invoices;
	}

	public String issueAll(String... invoiceIds) {
		StringBuilder issued = new StringBuilder();
		for (String invoiceId : invoiceIds) {
			issued.append(this.invoices.issue(invoiceId)); // locked, one invoice at a time
		}
		return issued.toString();
	}

}
// end::fix[]
