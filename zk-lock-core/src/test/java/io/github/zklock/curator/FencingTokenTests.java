package io.github.zklock.curator;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.zklock.LockHandle;
import io.github.zklock.annotation.LockMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fencing tokens stay strictly increasing when the server reaps an empty container parent and
 * the lock path is created again, which restarts the sequence suffix of the lock znodes.
 */
class FencingTokenTests {

	private static final String CHECK_INTERVAL = "znode.container.checkIntervalMs";

	private static TestingServer server;

	private static CuratorFramework client;

	private static CuratorLockRegistry registry;

	@BeforeAll
	static void start() throws Exception {
		// Read by the server's container manager when it starts: reap empty containers quickly.
		String previous = System.setProperty(CHECK_INTERVAL, "100");
		try {
			server = new TestingServer(true);
		}
		finally {
			if (previous == null) {
				System.clearProperty(CHECK_INTERVAL);
			}
			else {
				System.setProperty(CHECK_INTERVAL, previous);
			}
		}
		client = CuratorFrameworkFactory.newClient(server.getConnectString(), new ExponentialBackoffRetry(100, 3));
		client.start();
		assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
		registry = new CuratorLockRegistry(client, "/locks", 100);
	}

	@AfterAll
	static void stop() throws Exception {
		registry.close();
		client.close();
		server.close();
	}

	@Test
	void tokensIncreaseAcrossReapedContainerParent() {
		for (LockMode mode : new LockMode[] { LockMode.EXCLUSIVE, LockMode.WRITE }) {
			String path = "/fencing-" + mode.name().toLowerCase();
			long previous = 0;
			String previousSuffix = null;
			for (int round = 0; round < 3; round++) {
				LockHandle handle = registry.tryAcquire(path, mode, true, Duration.ofSeconds(5)).orElseThrow();
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
				await().atMost(Duration.ofSeconds(10)).until(() -> client.checkExists().forPath("/locks" + path) == null);
			}
		}
	}

}
