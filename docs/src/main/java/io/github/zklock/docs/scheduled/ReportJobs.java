package io.github.zklock.docs.scheduled;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LeaderOnly;

/**
 * The guide's scheduled jobs: one run per tick across instances, and leader-only work.
 */
@Component
public class ReportJobs {

	private final Queue<String> runs = new ConcurrentLinkedQueue<>();

	// tag::tick[]
	@Scheduled(cron = "${reports.cron:0 */5 * * * *}")
	@DistributedLock(path = "/jobs/report", waitTime = "0", onBusy = OnBusy.SKIP, lockAtLeastFor = "${reports.lock-at-least-for:1m}")
	public void report() {
		// runs on one instance per tick; the others find the key taken and skip
		// end::tick[]
		this.runs.add("report");
		// tag::tick[]
	}
	// end::tick[]

	// tag::leader[]
	@Scheduled(fixedDelay = 10_000)
	@LeaderOnly(group = "billing")
	public void chargeDueInvoices() {
		// runs only on the instance that leads the group "billing"
		// end::leader[]
		this.runs.add("billing");
		// tag::leader[]
	}
	// end::leader[]

	/**
	 * The runs of this instance, in order.
	 * @return the job names
	 */
	public Queue<String> runs() {
		return this.runs;
	}

}
