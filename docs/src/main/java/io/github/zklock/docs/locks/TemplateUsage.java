package io.github.zklock.docs.locks;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;
import io.github.zklock.OnBusy;

/**
 * The guide's programmatic examples on {@link LockTemplate}.
 */
public class TemplateUsage {

	private final LockTemplate locks;

	private final Map<String, Integer> store = new ConcurrentHashMap<>();

	/**
	 * @param locks the template
	 */
	public TemplateUsage(LockTemplate locks) {
		this.locks = locks;
	}

	/**
	 * A key-first {@code execute}.
	 * @param sku the SKU
	 * @return what is left
	 */
	public Integer take(String sku) {
		// tag::execute[]
		Integer remaining = this.locks.execute("/stock/" + sku, LockMode.EXCLUSIVE, Duration.ofSeconds(2),
				(handle) -> this.store.merge(sku, -1, Integer::sum));
		// end::execute[]
		return remaining;
	}

	/**
	 * A grant held across a block.
	 * @return the fencing token the block saw
	 */
	public long report() {
		// tag::acquire[]
		try (LockHandle handle = this.locks.acquire("/report", LockMode.EXCLUSIVE, Duration.ZERO)) {
			return handle.fencingToken(); // the lock is released when the block ends
		}
		// end::acquire[]
	}

	/**
	 * A request with options, run or skipped.
	 * @return whether the work ran
	 */
	public boolean rebuildIndex() {
		// tag::request[]
		LockRequest request = LockRequest.of("/jobs/rebuild-index")
			.withWaitTime(Duration.ZERO) // one attempt
			.withOnBusy(OnBusy.SKIP); // busy: skip instead of LockAcquisitionException
		LockResult<Integer> result = this.locks.execute(request, (handle) -> rebuild());
		if (!result.wasExecuted()) {
			return false; // another instance holds the lock: it rebuilds the index
		}
		// end::request[]
		return result.result() != null;
	}

	private int rebuild() {
		return this.store.size();
	}

}
