package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ZooKeeper client socket of the auto-configured client, {@code zk.lock.client-socket}: Netty
 * when not set (it tells lock holders at once that the server closed their connection, see
 * {@link ZkLockClientConfiguration#clientConfig}), NIO or Netty when set, the socket that the
 * {@code zookeeper.clientCnxnSocket} system property names when the property is not set; a
 * customizer's own {@link ZKClientConfig} or ZooKeeper factory over all of them. The client
 * connects to a real server and locks with each socket. The socket is read from the client's ZooKeeper handle, whose
 * configuration ZooKeeper picks the socket implementation from.
 */
class ClientSocketAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String NETTY = ClientCnxnSocketNetty.class.getName();

	private static final String NIO = ClientCnxnSocketNIO.class.getName();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@Test
	void usesNettyWhenNotSet() {
		this.contextRunner.run((context) -> {
			assertThat(context.getBean(ZkLockProperties.class).getClientSocket()).isNull();
			assertThat(clientSocket(context)).isEqualTo(NETTY);
			assertLocks(context);
		});
	}

	@Test
	void usesTheSocketSet() {
		this.contextRunner.withPropertyValues("zk.lock.client-socket=nio").run((context) -> {
			assertThat(clientSocket(context)).isEqualTo(NIO);
			assertLocks(context);
		});
		this.contextRunner.withPropertyValues("zk.lock.client-socket=NETTY")
			.run((context) -> assertThat(clientSocket(context)).isEqualTo(NETTY));
	}

	@Test
	void keepsTheSocketOfTheSystemPropertyWhenNotSet() {
		String previous = System.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, NIO);
		try {
			this.contextRunner.run((context) -> assertThat(clientSocket(context)).isEqualTo(NIO));
			this.contextRunner.withPropertyValues("zk.lock.client-socket=netty")
				.run((context) -> assertThat(clientSocket(context)).isEqualTo(NETTY));
		}
		finally {
			if (previous == null) {
				System.clearProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET);
			}
			else {
				System.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, previous);
			}
		}
	}

	@Test
	void usesTheClientConfigOfACustomizer() {
		this.contextRunner.withUserConfiguration(NioCustomizerConfiguration.class)
			.withPropertyValues("zk.lock.client-socket=netty")
			.run((context) -> assertThat(clientSocket(context)).isEqualTo(NIO));
	}

	/**
	 * A ZooKeeper factory implementing only the four-argument {@code newZooKeeper} would be bypassed
	 * if the builder had a {@code ZKClientConfig}: the client keeps the factory and the socket that
	 * ZooKeeper chooses.
	 */
	@Test
	void keepsTheZooKeeperFactoryOfACustomizer() {
		CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();
		this.contextRunner.withBean(CountingZooKeeper.Counts.class, () -> counts)
			.withUserConfiguration(CountingFactoryCustomizerConfiguration.class)
			.run((context) -> {
				CuratorFramework client = context.getBean(CuratorFramework.class);
				assertThat(client.getZookeeperClient().getZooKeeper()).isInstanceOf(CountingZooKeeper.class);
				assertThat(clientSocket(context)).isNull();
				assertLocks(context);
				assertThat(counts.total()).as("requests counted by the customizer's factory").isPositive();
			});
	}

	@Test
	void failsOnAnUnknownSocketNamingTheProperty() {
		this.contextRunner.withPropertyValues("zk.lock.client-socket=epoll").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("epoll");
			assertThat(context.getStartupFailure()).hasStackTraceContaining("zk.lock.client-socket");
		});
	}

	private static String clientSocket(AssertableApplicationContext context) throws Exception {
		CuratorFramework client = context.getBean(CuratorFramework.class);
		return client.getZookeeperClient().getZooKeeper().getClientConfig()
			.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET);
	}

	private static void assertLocks(AssertableApplicationContext context) throws InterruptedException {
		CuratorFramework client = context.getBean(CuratorFramework.class);
		assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).as("connected").isTrue();
		Long token = context.getBean(LockTemplate.class)
			.execute("/client-socket", LockMode.EXCLUSIVE, Duration.ofSeconds(10), (handle) -> handle.fencingToken());
		assertThat(token).isPositive();
	}

	@Configuration(proxyBeanMethods = false)
	static class CountingFactoryCustomizerConfiguration {

		@Bean
		CuratorFrameworkBuilderCustomizer countingFactoryCustomizer(CountingZooKeeper.Counts counts) {
			return (builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(counts));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NioCustomizerConfiguration {

		@Bean
		CuratorFrameworkBuilderCustomizer nioCustomizer() {
			return (builder) -> {
				ZKClientConfig config = new ZKClientConfig();
				config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, NIO);
				builder.zkClientConfig(config);
			};
		}

	}

}
