package io.github.zklock.curator;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.PermitsMismatchException;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The znode holding a semaphore's number of permits is a container: ZooKeeper's container reaper
 * (made to run every 100 ms here) removes it, number included, once the semaphore is unused, and a
 * new number may then be used, which an application that checked the old number before compares
 * with; while a lease is held the znode stays, number included.
 */
class SemaphoreReapingTests {

	/** A server per test, reaping empty containers every 100 ms instead of once a minute. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension().withContainerCheckInterval(Duration.ofMillis(100));

	@Test
	void unusedSemaphoreIsReapedWithItsNumberAndAHeldOneKeepsIt() throws Exception {
		CuratorFramework client = this.zooKeeper.newClient();
		CuratorFramework otherClient = this.zooKeeper.newClient();
		try (CuratorLockRegistry application = new CuratorLockRegistry(client, "/locks", 100);
				CuratorLockRegistry otherApplication = new CuratorLockRegistry(otherClient, "/locks", 100)) {
			LockHandle held = application.tryAcquire(permits("/held", 2)).orElseThrow();
			LockHandle unused = application.tryAcquire(permits("/unused", 2)).orElseThrow();
			// Read while held: once released, the reaper may remove it at any moment.
			assertThat(data(client, "/locks/unused")).isEqualTo("permits=2");
			unused.release();

			await().atMost(Duration.ofSeconds(10)).until(() -> client.checkExists().forPath("/locks/unused") == null);
			// The reaper ran since the lease of the other key was taken: that key keeps its number.
			assertThat(data(client, "/locks/held")).isEqualTo("permits=2");
			assertThatExceptionOfType(PermitsMismatchException.class)
				.isThrownBy(() -> otherApplication.tryAcquire(permits("/held", 3)));

			// Another number for the reaped key, from an application that did not use it before.
			LockHandle renumbered = otherApplication.tryAcquire(permits("/unused", 3)).orElseThrow();
			assertThat(data(client, "/locks/unused")).isEqualTo("permits=3");
			// The application that checked its number before the znode was reaped compares again.
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThatExceptionOfType(PermitsMismatchException.class)
					.isThrownBy(() -> application.tryAcquire(permits("/unused", 2)).ifPresent(LockHandle::release))
					.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(3)));
			renumbered.release();
			held.release();
		}
	}

	private static LockTarget permits(String key, int permits) {
		return new LockTarget(key, LockMode.EXCLUSIVE, false, permits, Duration.ZERO);
	}

	private static String data(CuratorFramework client, String path) throws Exception {
		return new String(client.getData().forPath(path), StandardCharsets.UTF_8);
	}

}
