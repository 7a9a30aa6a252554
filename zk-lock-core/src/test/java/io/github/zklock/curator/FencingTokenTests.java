package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fencing tokens stay strictly increasing when the server reaps an empty container parent and
 * the lock path is created again, which restarts the sequence suffix of the lock znodes.
 */
class FencingTokenTests {

	/** A server per test, reaping empty containers every 100 ms instead of once a minute. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension().withContainerCheckInterval(Duration.ofMillis(100));

	@Test
	void tokensIncreaseAcrossReapedContainerParent() throws Exception {
		CuratorFramework client = this.zooKeeper.newClient();
		try (CuratorLockRegistry registry = new CuratorLockRegistry(client, "/locks", 100)) {
			for (LockMode mode : new LockMode[] { LockMode.EXCLUSIVE, LockMode.WRITE }) {
				String path = "/fencing-" + mode.name().toLowerCase();
				long previous = 0;
				String previousSuffix = null;
				for (int round = 0; round < 3; round++) {
					LockHandle handle = registry.tryAcquire(new LockTarget(path, mode, true, 0, Duration.ofSeconds(5)))
						.orElseThrow();
					long token = handle.fencingToken();
					String suffix = ZKPaths.extractSequentialSuffix(((CuratorLockHandle) handle).nodePath());
					handle.release();

					assertThat(token).as("%s round %d", mode, round).isGreaterThan(previous);
					if (previousSuffix != null) {
						// The parent was recreated: the sequence restarted, so it cannot serve as a token.
						assertThat(suffix).isEqualTo(previousSuffix);
					}
					previous = token;
					previousSuffix = suffix;
					await().atMost(Duration.ofSeconds(10))
						.until(() -> client.checkExists().forPath("/locks" + path) == null);
				}
			}
		}
	}

}
