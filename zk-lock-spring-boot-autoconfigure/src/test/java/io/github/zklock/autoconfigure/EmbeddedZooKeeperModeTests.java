package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.ensemble.EnsembleProvider;
import org.apache.curator.ensemble.fixed.FixedEnsembleProvider;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockTemplate;
import io.github.zklock.test.EmbeddedZooKeeper;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * zk-lock on the embedded server of zk-lock-test, end to end: {@link ZkLockAutoConfiguration} and
 * {@link EmbeddedZooKeeperAutoConfiguration} together, as in an application with zk-lock-test on
 * its class path and {@code zk.lock.embedded.enabled=true}. The extension's server stands for the
 * ensemble that {@code zk.lock.connect-string} names.
 */
class EmbeddedZooKeeperModeTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Looks at the connect string's server from outside the applications. */
	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.embedded.enabled=true", "zk.lock.connection-timeout=5s",
				"zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void observer() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void startsEmbeddedZooKeeperLocksThereAndStopsItWithTheContext() {
		AtomicReference<InetSocketAddress> embeddedAddress = new AtomicReference<>();
		this.contextRunner.withPropertyValues("zk.lock.embedded.port=0").run((context) -> {
			assertThat(context).hasSingleBean(EmbeddedZooKeeper.class).hasSingleBean(EnsembleProvider.class);
			EmbeddedZooKeeper embedded = context.getBean(EmbeddedZooKeeper.class);
			assertThat(embedded.getPort()).isPositive().isNotEqualTo(zooKeeper.getPort());
			assertThat(embedded.getConnectString()).endsWith(":" + embedded.getPort());
			CuratorFramework client = context.getBean(CuratorFramework.class);
			assertThat(client.getZookeeperClient().getCurrentConnectionString())
				.isEqualTo(embedded.getConnectString());
			String lockPath = context.getBean(LockTemplate.class).execute("/embedded-check", (handle) -> {
				assertThat(client.getChildren().forPath(handle.path())).hasSize(1);
				return handle.path();
			});
			assertThat(lockPath).isEqualTo("/locks/embedded-check");
			assertThat(zk.checkExists().forPath(lockPath)).as("not on the connect string's server").isNull();
			String host = embedded.getConnectString().substring(0, embedded.getConnectString().lastIndexOf(':'));
			embeddedAddress.set(new InetSocketAddress(host, embedded.getPort()));
			assertThat(acceptsConnections(embeddedAddress.get())).isTrue();
		});
		assertThat(embeddedAddress.get()).isNotNull();
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(embeddedAddress.get()));
	}

	@Test
	void startsNoServerWhenTheApplicationDefinesAnEnsembleProvider() {
		this.contextRunner.withUserConfiguration(UserEnsembleConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(EmbeddedZooKeeper.class);
			CuratorFramework client = context.getBean(CuratorFramework.class);
			assertThat(client.getZookeeperClient().getCurrentConnectionString())
				.isEqualTo(zooKeeper.getConnectString());
			context.getBean(LockTemplate.class).execute("/user-ensemble-check", (handle) -> {
				assertThat(zk.getChildren().forPath(handle.path())).hasSize(1);
				return null;
			});
		});
	}

	private static boolean acceptsConnections(InetSocketAddress address) {
		try (Socket socket = new Socket()) {
			socket.connect(address, 500);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class UserEnsembleConfiguration {

		@Bean
		EnsembleProvider userEnsembleProvider() {
			return new FixedEnsembleProvider(zooKeeper.getConnectString());
		}

	}

}
