package io.github.zklock.docs.migrating;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;

import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The guide's migration from another ShedLock provider: the job keeps its annotations; only the
 * provider changes (zk-lock-shedlock's, which the starter defines).
 */
@Component
public class NightlyJobs {

	private int exports;

	// tag::shedlock[]
	@Scheduled(cron = "0 0 2 * * *")
	@SchedulerLock(name = "nightly-export", lockAtMostFor = "PT30M", lockAtLeastFor = "PT1M")
	public void export() {
		this.exports++; // runs on one instance per tick
	}
	// end::shedlock[]

	/**
	 * @return how many exports ran in this instance
	 */
	public int exports() {
		return this.exports;
	}

	/** What a ShedLock application has already: scheduling, and ShedLock's own switch. */
	// tag::shedlock-configuration[]
	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	@EnableSchedulerLock(defaultLockAtMostFor = "PT30M")
	public static class SchedulingConfiguration {

	}
	// end::shedlock-configuration[]

}
