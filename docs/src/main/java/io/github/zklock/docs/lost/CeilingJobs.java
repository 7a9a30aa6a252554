package io.github.zklock.docs.lost;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.springframework.stereotype.Service;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;

/**
 * The guide's ceiling on a hold: a report rebuilt under a lock held at most ten minutes, and an
 * import that may be held at most five minutes at a time and moves its ceiling as it makes
 * progress.
 */
@Service
public class CeilingJobs {

	private final LockTemplate locks;

	/**
	 * @param locks the template
	 */
	public CeilingJobs(LockTemplate locks) {
		this.locks = locks;
	}

	/**
	 * Rebuild the daily report: held at most ten minutes, even if the export hangs.
	 * @param export what exports the report
	 */
	// tag::annotation[]
	@DistributedLock(path = "/reports/daily", lockAtMostFor = "10m")
	public void rebuildDailyReport(Runnable export) {
		export.run(); // a hung call here no longer keeps every other instance waiting
	}
	// end::annotation[]

	/**
	 * Import the batches under one lock, moving the ceiling after each.
	 * @param batches the batches
	 * @param importer what imports one batch
	 * @return how many batches were imported
	 */
	// tag::extend[]
	public Integer importAll(List<String> batches, Consumer<String> importer) {
		LockRequest request = LockRequest.of("/jobs/import").withLockAtMostFor(Duration.ofMinutes(5));
		return this.locks.execute(request, (handle) -> {
			int imported = 0;
			for (String batch : batches) {
				handle.checkHeld(); // LockLostException once the ceiling (or anything else) ended it
				importer.accept(batch);
				imported++;
				handle.extend(Duration.ofMinutes(5)); // five more minutes from now
			}
			return imported;
		}).orElse(0);
	}
	// end::extend[]

}
