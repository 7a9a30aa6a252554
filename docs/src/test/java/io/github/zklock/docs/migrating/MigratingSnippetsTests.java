package io.github.zklock.docs.migrating;

import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.docs.testing.OrderApplication;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The migration chapter's code, on a real ZooKeeper: a ShedLock job keeps its annotations and locks
 * a znode through zk-lock's provider (a second run within {@code lockAtLeastFor} is skipped); the
 * lock4j method's replacement and the Redisson {@code RLock}'s replacement run under their locks.
 */
class MigratingSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void shedLockJobKeepsItsAnnotationsAndLocksThroughZooKeeper() throws Exception {
		try (ConfigurableApplicationContext context = start()) {
			NightlyJobs jobs = context.getBean(NightlyJobs.class);
			jobs.export();
			jobs.export(); // within lockAtLeastFor: the lock is still kept, the run skipped
			assertThat(jobs.exports()).isEqualTo(1);
			CuratorFramework client = zooKeeper.newClient();
			// Kept for lockAtLeastFor: one lease znode below the job's path.
			assertThat(client.getChildren().forPath("/locks/shedlock/nightly-export/leases")).hasSize(1);
		}
	}

	@Test
	void lock4jAndRedissonReplacementsRunUnderTheirLocks() throws Exception {
		try (ConfigurableApplicationContext context = start()) {
			CuratorLockAdmin admin = context.getBean(CuratorLockAdmin.class);
			InventoryService inventory = context.getBean(InventoryService.class);
			assertThat(inventory.reserve("apple", 2)).isEqualTo(2);
			assertThat(inventory.reserve("apple", 3)).isEqualTo(5);
			AtomicInteger heldDuringCapture = new AtomicInteger(-1);
			assertThat(context.getBean(PaymentClient.class)
				.capture("42", () -> heldDuringCapture.set(admin.heldLockCount()))).isTrue();
			assertThat(heldDuringCapture).hasValue(1);
			assertThat(admin.heldLockCount()).isZero();
		}
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(OrderApplication.class, NightlyJobs.class,
				NightlyJobs.SchedulingConfiguration.class, InventoryService.class, PaymentClient.class)
			.web(WebApplicationType.NONE)
			.run("--zk.lock.connect-string=" + zooKeeper.getConnectString(), "--zk.lock.default-wait-time=5s");
	}

}
