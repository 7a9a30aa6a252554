package io.github.zklock.aop;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Bad input gets a typed error in bounded time, the method is not invoked and nothing is left in
 * ZooKeeper, also when only one key of a multi-lock is bad; an unreachable ZooKeeper is never
 * reported as a busy lock. Plain Spring contexts with {@code @EnableDistributedLocks}, on a real
 * ZooKeeper.
 */
class BadInputTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void megabyteKeyIsRefusedBeforeAnyRequestAndTheSessionIsUndisturbed() throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Keys.class,
				LockBeans.class, ExtensionClient.class)) {
			CuratorFramework client = context.getBean(CuratorFramework.class);
			List<ConnectionState> states = new CopyOnWriteArrayList<>();
			client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
			KeyedService service = context.getBean(KeyedService.class);
			String megabyte = "k".repeat(1024 * 1024);

			assertTimeoutPreemptively(Duration.ofSeconds(10),
					() -> assertThatExceptionOfType(InvalidLockPathException.class)
						.isThrownBy(() -> service.lock(megabyte))
						.withMessageContaining(String.valueOf(CuratorLockRegistry.MAX_PATH_LENGTH)));
			assertThatExceptionOfType(InvalidLockPathException.class)
				.isThrownBy(() -> context.getBean(LockTemplate.class).execute("/" + megabyte, (handle) -> "ran"));
			assertThat(service.invocations()).isZero();
			assertThat(client.checkExists().forPath("/locks/keys")).isNull();
			assertThat(client.getZookeeperClient().isConnected()).isTrue();
			assertThat(states).doesNotContain(ConnectionState.SUSPENDED, ConnectionState.LOST);
		}
	}

	@Test
	void illegalValuesAreRefusedWithoutInvokingTheMethod() throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Keys.class,
				LockBeans.class, ExtensionClient.class)) {
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
		}
	}

	@Test
	void badValueInAnyKeyOfAMultiLockIsRefusedBeforeAnyRequest() throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Keys.class,
				LockBeans.class, ExtensionClient.class)) {
			KeyedService service = context.getBean(KeyedService.class);
			String megabyte = "k".repeat(1024 * 1024);
			assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
				for (String value : new String[] { null, "", megabyte }) {
					assertThatExceptionOfType(InvalidLockPathException.class)
						.isThrownBy(() -> service.lockBoth("valid", value));
					assertThatExceptionOfType(InvalidLockPathException.class)
						.isThrownBy(() -> service.lockBoth(value, "valid"));
				}
			});
			assertThat(service.invocations()).isZero();
			// Not even the valid key was asked for.
			assertThat(context.getBean(CuratorFramework.class).checkExists().forPath("/locks")).isNull();
		}
	}

	@Test
	void zooKeeperDownAtStartIsALockExceptionAtTheFirstCallNotBusy() throws Exception {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			closedPort = socket.getLocalPort();
		}
		// Nothing listens on the port: the client never connects. The Boot test set the same
		// client up through zk.lock.connection-timeout=1s, session-timeout=3s, retry 1 x 100 ms.
		CuratorFramework client = zooKeeper.newStartedClient((builder) -> builder
			.connectString("127.0.0.1:" + closedPort)
			.connectionTimeoutMs(1000)
			.sessionTimeoutMs(3000)
			.retryPolicy(new ExponentialBackoffRetry(100, 1)));
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.registerBean(CuratorFramework.class, () -> client);
			context.register(Keys.class, LockBeans.class);
			// The application starts: ZooKeeper may come up later.
			context.refresh();
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
		}
	}

	/** The advice and the service; the client comes from elsewhere. */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Keys {

		@Bean
		KeyedService keyedService() {
			return new KeyedService();
		}

	}

	/**
	 * What an application defines on its Curator client; the template waits without limit by
	 * default, as with {@code zk.lock.default-wait-time} left out.
	 */
	@Configuration(proxyBeanMethods = false)
	static class LockBeans {

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, LockRequest.WAIT_FOREVER);
		}

	}

	/** A client of the extension's server. */
	@Configuration(proxyBeanMethods = false)
	static class ExtensionClient {

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient();
		}

	}

	static class KeyedService {

		private final AtomicInteger invocations = new AtomicInteger();

		@DistributedLock(path = "/keys/#{#key}", waitTime = "0")
		public String lock(String key) {
			this.invocations.incrementAndGet();
			return key;
		}

		@DistributedLock(path = { "/keys/#{#first}", "/keys/#{#second}" }, waitTime = "0")
		public String lockBoth(String first, String second) {
			this.invocations.incrementAndGet();
			return first + second;
		}

		public int invocations() {
			return this.invocations.get();
		}

	}

}
