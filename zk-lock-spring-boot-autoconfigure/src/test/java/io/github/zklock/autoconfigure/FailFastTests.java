package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockTemplate;
import io.github.zklock.test.EmbeddedZooKeeper;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for {@code zk.lock.fail-fast}: the start waits up to the connection timeout for a first
 * connection to a real ZooKeeper server, and fails with {@link ZooKeeperUnreachableException} when
 * there is none.
 */
class FailFastTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.fail-fast=true");

	@Test
	void failsTheStartAfterTheConnectionTimeoutWhenZooKeeperIsUnreachable() throws IOException {
		int closedPort = closedPort();
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
			long start = System.nanoTime();
			this.contextRunner
				.withPropertyValues("zk.lock.connect-string=127.0.0.1:" + closedPort, "zk.lock.connection-timeout=1s")
				.run((context) -> {
					assertThat(context).hasFailed();
					assertThat(context.getStartupFailure()).rootCause()
						.isInstanceOfSatisfying(ZooKeeperUnreachableException.class, (ex) -> {
							assertThat(ex.getConnectString()).isEqualTo("127.0.0.1:" + closedPort);
							assertThat(ex.getTimeout()).isEqualTo(Duration.ofSeconds(1));
							assertThat(ex).hasMessage("Could not connect to ZooKeeper at '127.0.0.1:" + closedPort
									+ "' within 1000 ms (zk.lock.connection-timeout) while starting with "
									+ "zk.lock.fail-fast=true");
						});
				});
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
		});
	}

	@Test
	void startsConnectedWhenZooKeeperIsUp() {
		this.contextRunner.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(CuratorFramework.class).getZookeeperClient().isConnected()).isTrue();
				String path = context.getBean(LockTemplate.class).execute("/fail-fast", (handle) -> handle.path());
				assertThat(path).isEqualTo("/locks/fail-fast");
			});
	}

	@Test
	void waitsForAServerThatComesUpWithinTheTimeout() throws Exception {
		// A server of its own, not the extension's: on a port known before it starts, started late.
		int port = closedPort();
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
		TestingServer server = new TestingServer(port, false);
		try {
			ScheduledFuture<?> started = executor.schedule(() -> {
				server.start();
				return null;
			}, 1, TimeUnit.SECONDS);
			assertTimeoutPreemptively(Duration.ofSeconds(30), () -> this.contextRunner
				.withPropertyValues("zk.lock.connect-string=" + server.getConnectString(),
						"zk.lock.connection-timeout=20s")
				.run((context) -> {
					assertThat(started.isDone()).as("the server came up while the start waited").isTrue();
					assertThat(context).hasNotFailed();
					assertThat(context.getBean(CuratorFramework.class).getZookeeperClient().isConnected()).isTrue();
				}));
			started.get(10, TimeUnit.SECONDS);
		}
		finally {
			executor.shutdownNow();
			server.close();
		}
	}

	@Test
	void startsWithoutZooKeeperWhenNotFailingFast() throws IOException {
		int closedPort = closedPort();
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> this.contextRunner
			.withPropertyValues("zk.lock.fail-fast=false", "zk.lock.connect-string=127.0.0.1:" + closedPort,
					"zk.lock.connection-timeout=10s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(CuratorFramework.class).getZookeeperClient().isConnected()).isFalse();
			}));
	}

	@Test
	void connectsToTheEmbeddedServerWhenFailingFast() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.fail-fast=true", "zk.lock.embedded.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CuratorFramework client = context.getBean(CuratorFramework.class);
				assertThat(client.getZookeeperClient().isConnected()).isTrue();
				assertThat(client.getZookeeperClient().getCurrentConnectionString())
					.isEqualTo(context.getBean(EmbeddedZooKeeper.class).getConnectString());
			});
	}

	static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
