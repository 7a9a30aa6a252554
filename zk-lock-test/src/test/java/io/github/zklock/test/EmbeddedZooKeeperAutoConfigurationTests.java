package io.github.zklock.test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.ensemble.EnsembleProvider;
import org.apache.curator.ensemble.fixed.FixedEnsembleProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.validation.ObjectError;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link EmbeddedZooKeeperAutoConfiguration} on its own (zk-lock's client is wired in
 * the auto-configuration module): off by default; with {@code zk.lock.embedded.enabled=true} a
 * real server for the context's lifetime and a Curator {@link EnsembleProvider} pointing at it.
 */
class EmbeddedZooKeeperAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class));

	@Test
	void startsNoServerByDefault() {
		for (String[] properties : List.of(new String[0], new String[] { "zk.lock.embedded.enabled=false" })) {
			this.contextRunner.withPropertyValues(properties)
				.run((context) -> assertThat(context).hasNotFailed()
					.doesNotHaveBean(EmbeddedZooKeeper.class)
					.doesNotHaveBean(EnsembleProvider.class)
					.doesNotHaveBean(EmbeddedZooKeeperProperties.class));
		}
	}

	@Test
	void startsAServerOnAFreePortAndProvidesItsEnsemble() throws Exception {
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(EmbeddedZooKeeper.class).hasSingleBean(EnsembleProvider.class);
			EmbeddedZooKeeperProperties properties = context.getBean(EmbeddedZooKeeperProperties.class);
			assertThat(properties.isEnabled()).isTrue();
			assertThat(properties.getPort()).isZero();
			EmbeddedZooKeeper server = context.getBean(EmbeddedZooKeeper.class);
			assertThat(server.getPort()).isPositive();
			assertThat(server.getConnectString()).endsWith(":" + server.getPort());
			assertThat(acceptsConnections(server.getPort())).isTrue();
			EnsembleProvider ensemble = context.getBean(EnsembleProvider.class);
			assertThat(ensemble).isInstanceOf(FixedEnsembleProvider.class);
			assertThat(ensemble.getConnectionString()).isEqualTo(server.getConnectString());
			assertConnectsThrough(ensemble);
		});
	}

	@Test
	void eachContextStartsItsOwnServer() {
		ApplicationContextRunner embedded = this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true");
		embedded.run((first) -> embedded.run((second) -> assertThat(second.getBean(EmbeddedZooKeeper.class).getPort())
			.isNotEqualTo(first.getBean(EmbeddedZooKeeper.class).getPort())));
	}

	@Test
	void usesAFixedPort() throws IOException {
		int port = freePort();
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true", "zk.lock.embedded.port=" + port)
			.run((context) -> {
				assertThat(context.getBean(EmbeddedZooKeeper.class).getPort()).isEqualTo(port);
				assertThat(context.getBean(EnsembleProvider.class).getConnectionString()).endsWith(":" + port);
				assertThat(acceptsConnections(port)).isTrue();
			});
	}

	@Test
	void stopsTheServerWhenTheContextCloses() {
		AtomicInteger port = new AtomicInteger();
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true").run((context) -> {
			port.set(context.getBean(EmbeddedZooKeeper.class).getPort());
			assertThat(acceptsConnections(port.get())).isTrue();
		});
		assertThat(port.get()).isPositive();
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(port.get()));
	}

	@Test
	void backsOffWhenZkLockIsDisabled() {
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true", "zk.lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(EmbeddedZooKeeper.class)
				.doesNotHaveBean(EnsembleProvider.class));
	}

	@Test
	void backsOffStartingNoServerWhenTheApplicationDefinesAnEnsembleProvider() {
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true")
			.withUserConfiguration(UserEnsembleConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(EmbeddedZooKeeper.class);
				assertThat(context).getBean(EnsembleProvider.class)
					.isSameAs(context.getBean("userEnsembleProvider"));
				assertThat(context.getBean(EnsembleProvider.class).getConnectionString()).isEqualTo("zk1:2181");
			});
	}

	@Test
	void pointsTheEnsembleAtTheApplicationsOwnServer() {
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true")
			.withUserConfiguration(UserServerConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(EmbeddedZooKeeper.class);
				EmbeddedZooKeeper server = context.getBean("userEmbeddedZooKeeper", EmbeddedZooKeeper.class);
				assertThat(context.getBean(EnsembleProvider.class).getConnectionString())
					.isEqualTo(server.getConnectString());
			});
	}

	@Test
	void backsOffWithoutCuratorTest() {
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true")
			.withClassLoader(new FilteredClassLoader(TestingServer.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(EmbeddedZooKeeper.class)
				.doesNotHaveBean(EnsembleProvider.class));
	}

	@Test
	void failsOnAPortOutOfRangeNamingTheProperty() {
		for (int port : new int[] { 70000, 65536, -1 }) {
			this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true", "zk.lock.embedded.port=" + port)
				.run((context) -> {
					assertThat(context).hasFailed();
					assertThat(errorMessages(context)).containsExactly(
							"zk.lock.embedded.port must be between 0 (a free port) and 65535, was " + port);
				});
		}
	}

	@Test
	void acceptsTheBoundariesOfThePortRange() {
		// Bound without starting a server: the validation alone.
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnlyConfiguration.class)
			.withPropertyValues("zk.lock.embedded.port=65535")
			.run((context) -> assertThat(context).hasNotFailed());
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnlyConfiguration.class)
			.withPropertyValues("zk.lock.embedded.port=0")
			.run((context) -> assertThat(context.getBean(EmbeddedZooKeeperProperties.class).isEnabled()).isFalse());
	}

	private static void assertConnectsThrough(EnsembleProvider ensemble) throws Exception {
		// A client of the bean's own, as zk-lock's auto-configured client is built.
		try (CuratorFramework client = CuratorFrameworkFactory.builder()
			.ensembleProvider(ensemble)
			.retryPolicy(new RetryOneTime(100))
			.build()) {
			client.start();
			assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
			client.create().forPath("/reached");
			assertThat(client.checkExists().forPath("/reached")).isNotNull();
		}
	}

	private static List<String> errorMessages(AssertableApplicationContext context) {
		for (Throwable current = context.getStartupFailure(); current != null; current = current.getCause()) {
			if (current instanceof BindValidationException ex) {
				return ex.getValidationErrors().getAllErrors().stream().map(ObjectError::getDefaultMessage).toList();
			}
		}
		throw new AssertionError("No BindValidationException in " + context.getStartupFailure());
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
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

	@Configuration(proxyBeanMethods = false)
	static class UserEnsembleConfiguration {

		@Bean
		EnsembleProvider userEnsembleProvider() {
			return new FixedEnsembleProvider("zk1:2181");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserServerConfiguration {

		@Bean
		EmbeddedZooKeeper userEmbeddedZooKeeper() throws Exception {
			return new EmbeddedZooKeeper(0);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(EmbeddedZooKeeperProperties.class)
	static class PropertiesOnlyConfiguration {

	}

}
