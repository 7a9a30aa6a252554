package io.github.zklock.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockHandle;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.LockMode;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link ZooKeeperExtension}: registered on a static field here, it serves every test
 * of the class; its lifecycle is also driven directly.
 */
class ZooKeeperExtensionTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void twoApplicationsShareTheServerAndExcludeEachOther() {
		ApplicationContextRunner instance = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());
		instance.run((first) -> instance.run((second) -> {
			try (LockHandle held = first.getBean(LockTemplate.class).acquire("/shared", LockMode.EXCLUSIVE,
					Duration.ZERO)) {
				assertThat(held.isHeld()).isTrue();
				assertThat(second.getBean(LockTemplate.class)
					.tryAcquire("/shared", LockMode.EXCLUSIVE, Duration.ofMillis(200))).isEmpty();
			}
			assertThat(second.getBean(LockTemplate.class).tryAcquire("/shared", LockMode.EXCLUSIVE, Duration.ZERO))
				.hasValueSatisfying(LockHandle::release);
		}));
	}

	@Test
	void exposesTheRunningServer() throws Exception {
		assertThat(zooKeeper.getConnectString()).endsWith(":" + zooKeeper.getPort());
		assertThat(zooKeeper.getServer().getPort()).isEqualTo(zooKeeper.getPort());
		try (CuratorFramework client = CuratorFrameworkFactory.newClient(zooKeeper.getConnectString(),
				new RetryOneTime(100))) {
			client.start();
			assertThat(client.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
			assertThat(client.checkExists().forPath("/")).isNotNull();
		}
	}

	@Test
	void perClassServerLivesFromBeforeAllToAfterAll() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		assertThatIllegalStateException().isThrownBy(extension::getConnectString)
			.withMessageContaining("@RegisterExtension");
		extension.beforeAll(null);
		int port = extension.getPort();
		extension.beforeEach(null);
		extension.afterEach(null);
		extension.beforeEach(null);
		assertThat(extension.getPort()).as("the same server for every test").isEqualTo(port);
		assertThat(acceptsConnections(port)).isTrue();
		extension.afterEach(null);
		assertThat(acceptsConnections(port)).isTrue();
		extension.afterAll(null);
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(port));
		assertThatIllegalStateException().isThrownBy(extension::getServer);
	}

	@Test
	void perTestServerStopsAfterEachTest() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeEach(null);
		int port = extension.getPort();
		assertThat(acceptsConnections(port)).isTrue();
		extension.afterEach(null);
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(port));
		assertThatIllegalStateException().isThrownBy(extension::getPort);
	}

	@Test
	void keepsItsPortAcrossARestart() throws Exception {
		int port = zooKeeper.getPort();
		zooKeeper.getServer().restart();
		assertThat(zooKeeper.getPort()).isEqualTo(port);
		await().atMost(Duration.ofSeconds(10)).until(() -> acceptsConnections(port));
	}

	@Test
	void rejectsAPortOutOfRange() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperExtension(0));
		assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperExtension(65536));
	}

	private static boolean acceptsConnections(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
