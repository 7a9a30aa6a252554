package io.github.zklock.docs.scheduled;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The snippets of the guide's chapter on scheduled jobs and leadership run as written, in two
 * applications on one real ZooKeeper: a tick runs on one of them only, leader-only work runs on
 * the leader only, and the programmatic leadership leads and yields.
 */
class ScheduledSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
		.withBean(ReportJobs.class)
		.withBean(LeadershipUsage.class);

	@Test
	void aTickRunsOnOneInstanceAndTheOtherSkipsIt() {
		this.contextRunner.run((first) -> this.contextRunner.run((second) -> {
			ReportJobs one = first.getBean(ReportJobs.class);
			ReportJobs two = second.getBean(ReportJobs.class);
			one.report();
			// The key is kept for lockAtLeastFor (1 minute) after the quick run: the late instance skips.
			two.report();
			one.report();
			assertThat(one.runs()).containsExactly("report");
			assertThat(two.runs()).isEmpty();
		}));
	}

	@Test
	void leaderOnlyWorkRunsOnTheLeaderAlone() {
		this.contextRunner.run((first) -> this.contextRunner.run((second) -> {
			ReportJobs one = first.getBean(ReportJobs.class);
			ReportJobs two = second.getBean(ReportJobs.class);
			// The groups are joined at start-up; within a few seconds one of the two leads.
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				one.chargeDueInvoices();
				two.chargeDueInvoices();
				return !one.runs().isEmpty() || !two.runs().isEmpty();
			});
			one.chargeDueInvoices();
			two.chargeDueInvoices();
			assertThat(one.runs().isEmpty() || two.runs().isEmpty()).as("only one instance ran").isTrue();
		}));
	}

	@Test
	void programmaticLeadershipLeadsAndYields() {
		this.contextRunner.run((context) -> {
			LeadershipUsage usage = context.getBean(LeadershipUsage.class);
			assertThat(usage.importOnce()).isTrue();
			await().atMost(Duration.ofSeconds(20)).until(usage::sawRevocation);
		});
	}

}
