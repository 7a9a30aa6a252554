package io.github.zklock.aop;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LockMode;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Bad input gets a typed error in bounded time, the method is not invoked and nothing is left in
 * ZooKeeper; an unreachable ZooKeeper is never reported as a busy lock.
 */
class BadInputTests {

	private static TestingServer server;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withUserConfiguration(Keys.class);

	@BeforeAll
	static void start() throws Exception {
		server = new TestingServer(true);
	}

	@AfterAll
	static void stop() throws Exception {
		server.close();
	}

	@Test
	void megabyteKeyIsRefusedBeforeAnyRequestAndTheSessionIsUndisturbed() {
		this.contextRunner.withPropertyValues("zk.lock.connect-string=" + server.getConnectString())
			.run((context) -> {
				CuratorFramework client = context.getBean(CuratorFramework.class);
				List<ConnectionState> states = new CopyOnWriteArrayList<>();
				client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
				KeyedService service = context.getBean(KeyedService.class);
				String megabyte = "k".repeat(1024 * 1024);

				assertTimeoutPreemptively(Duration.ofSeconds(10),
						() -> assertThatExceptionOfType(InvalidLockPathException.class)
							.isThrownBy(() -> service.lock(megabyte))
							.withMessageContaining(String.valueOf(CuratorLockRegistry.MAX_PATH_LENGTH)));
				assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(
						() -> context.getBean(LockTemplate.class).execute("/" + megabyte, (handle) -> "ran"));
				assertThat(service.invocations()).isZero();
				assertThat(client.checkExists().forPath("/locks/keys")).isNull();
				assertThat(client.getZookeeperClient().isConnected()).isTrue();
				assertThat(states).doesNotContain(ConnectionState.SUSPENDED, ConnectionState.LOST);
			});
	}

	@Test
	void illegalValuesAreRefusedWithoutInvokingTheMethod() {
		this.contextRunner.withPropertyValues("zk.lock.connect-string=" + server.getConnectString())
			.run((context) -> {
				KeyedService service = context.getBean(KeyedService.class);
				for (String value : new String[] { null, "" }) {
					assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.lock(value));
				}
				LockTemplate template = context.getBean(LockTemplate.class);
				for (String path : new String[] { "/", "no-slash", "/a/../b", "/a//b", "/a\u0000b", "/a\ud800b" }) {
					assertThatExceptionOfType(InvalidLockPathException.class).as(path)
						.isThrownBy(() -> template.execute(path, (handle) -> "ran"));
				}
				assertThat(service.invocations()).isZero();
				assertThat(context.getBean(CuratorFramework.class).checkExists().forPath("/locks")).isNull();
			});
	}

	@Test
	void zooKeeperDownAtStartIsALockExceptionAtTheFirstCallNotBusy() throws Exception {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			closedPort = socket.getLocalPort();
		}
		this.contextRunner
			.withPropertyValues("zk.lock.connect-string=127.0.0.1:" + closedPort, "zk.lock.connection-timeout=1s",
					"zk.lock.session-timeout=3s", "zk.lock.retry.max-retries=1", "zk.lock.retry.base-sleep=100ms")
			.run((context) -> {
				// The application starts: ZooKeeper may come up later.
				assertThat(context).hasNotFailed();
				KeyedService service = context.getBean(KeyedService.class);
				LockTemplate template = context.getBean(LockTemplate.class);
				assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
					assertThatExceptionOfType(LockException.class).isThrownBy(() -> service.lock("sku-1"))
						.isNotInstanceOf(LockAcquisitionException.class)
						.withMessageContaining("ZooKeeper is unreachable")
						.withMessageContaining("127.0.0.1:" + closedPort);
					assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> template.tryAcquire("/keys/x", LockMode.READ, Duration.ZERO))
						.isNotInstanceOf(LockAcquisitionException.class);
				});
				assertThat(service.invocations()).isZero();
			});
	}

	@Test
	void malformedConnectStringFailsTheStart() {
		this.contextRunner.withPropertyValues("zk.lock.connect-string=localhost:notaport")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("notaport"));
	}

	@Configuration(proxyBeanMethods = false)
	static class Keys {

		@Bean
		KeyedService keyedService() {
			return new KeyedService();
		}

	}

	static class KeyedService {

		private final AtomicInteger invocations = new AtomicInteger();

		@DistributedLock(path = "/keys/#{#key}", waitTime = 0)
		public String lock(String key) {
			this.invocations.incrementAndGet();
			return key;
		}

		public int invocations() {
			return this.invocations.get();
		}

	}

}
