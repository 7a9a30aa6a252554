package io.github.zklock.docs.operations;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.Revocation;
import io.github.zklock.curator.RevocationAction;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The snippet of the guide's chapter on operations runs as written, on a real ZooKeeper: a lock
 * with more waiters than tolerated is revoked, its holder's grant becomes LOST and the waiter is
 * granted.
 */
class AdminSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"zk.lock.revocation-check-interval=100ms");

	@Test
	void revokesAStuckLockWithTooManyWaiters() {
		this.contextRunner.run((holderApp) -> this.contextRunner.run((waiterApp) -> {
			LockHandle stuck = holderApp.getBean(LockTemplate.class)
				.acquire("/reports/daily", LockMode.EXCLUSIVE, Duration.ZERO);
			// Held longer than the revocation check interval: the holder watches its znode.
			Thread.sleep(300);
			CompletableFuture<Boolean> waiter = waiterApp.getBean(LockTemplate.class)
				.executeAsync("/reports/daily", LockMode.EXCLUSIVE, Duration.ofSeconds(20),
						(handle) -> CompletableFuture.completedFuture(handle.isHeld()));
			AdminUsage usage = new AdminUsage(waiterApp.getBean(CuratorLockAdmin.class));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> waiterApp.getBean(CuratorLockAdmin.class).describeQueue("/reports/daily").waiters() == 1);
			assertThat(usage.unstick("/reports/daily", 5)).as("one waiter is tolerated").isNull();
			Revocation revocation = usage.unstick("/reports/daily", 0);
			assertThat(revocation.action()).isEqualTo(RevocationAction.REVOCATION_REQUESTED);
			assertThat(revocation.released()).isTrue();
			assertThat(stuck.state()).isEqualTo(LockState.LOST);
			assertThat(waiter).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(true);
			stuck.release();
		}));
	}

}
