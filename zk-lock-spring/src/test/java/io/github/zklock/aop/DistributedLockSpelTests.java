package io.github.zklock.aop;

import java.io.IOException;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for SpEL lock paths of {@code @DistributedLock} methods: each value stays inside one path
 * segment of the lock znode, and a null or empty value fails the call before any ZooKeeper
 * request. Runs against a real ZooKeeper server.
 */
class DistributedLockSpelTests {

	private static TestingServer server;

	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withUserConfiguration(StockConfiguration.class)
		.withPropertyValues("zk.lock.connect-string=" + server.getConnectString(), "zk.lock.default-wait-time=10s");

	@BeforeAll
	static void startZooKeeper() throws Exception {
		server = new TestingServer();
		zk = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
		zk.start();
	}

	@AfterAll
	static void stopZooKeeper() throws IOException {
		if (zk != null) {
			zk.close();
		}
		if (server != null) {
			server.close();
		}
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "sku-1|sku-1", "a/b|a%2Fb", ".|%2E", "..|%2E%2E", "../../x|..%2F..%2Fx" })
	void locksEncodedValueInOneSegment(String sku, String segment) {
		this.contextRunner.run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> heldDuringCall = service.reserve(sku);
			assertThat(service.invocations()).isEqualTo(1);
			assertThat(heldDuringCall).containsExactly("/locks/stock/" + segment);
			assertThat(heldLocks("/")).as("released after the call").isEmpty();
		});
	}

	@Test
	void resolvesBeanReference() {
		this.contextRunner.run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> heldDuringCall = service.reserveForTenant("sku/9");
			assertThat(service.invocations()).isEqualTo(1);
			assertThat(heldDuringCall).containsExactly("/locks/stock/tenant-7/sku%2F9");
		});
	}

	@Test
	void rejectsNullValueWithoutInvokingOrTouchingZooKeeper() {
		this.contextRunner.run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> before = allZnodes("/");
			assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.reserve(null))
				.withMessageContaining("/stock/#{#sku}");
			assertThat(service.invocations()).isEqualTo(0);
			assertThat(allZnodes("/")).as("no znode created").isSubsetOf(before);
		});
	}

	@Test
	void rejectsEmptyValueWithoutInvokingOrTouchingZooKeeper() {
		this.contextRunner.run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> before = allZnodes("/");
			assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.reserve(""))
				.withMessageContaining("/stock/#{#sku}");
			assertThat(service.invocations()).isEqualTo(0);
			assertThat(allZnodes("/")).as("no znode created").isSubsetOf(before);
		});
	}

	@Test
	void rejectsFailingExpressionWithoutInvoking() {
		this.contextRunner.run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> before = allZnodes("/");
			assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.reserveItem(null));
			assertThat(service.invocations()).isEqualTo(0);
			assertThat(allZnodes("/")).as("no znode created").isSubsetOf(before);
		});
	}

	@Test
	void resolvesNestedPropertyOfArgument() {
		this.contextRunner.run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> heldDuringCall = service.reserveItem(new Item(".."));
			assertThat(service.invocations()).isEqualTo(1);
			assertThat(heldDuringCall).containsExactly("/locks/stock/%2E%2E");
		});
	}

	/**
	 * Return the nodes under {@code path} (inclusive) that currently have an ephemeral child: the
	 * lock paths whose lock is held or waited on.
	 */
	static Set<String> heldLocks(CuratorFramework client, String path) throws Exception {
		Set<String> held = new TreeSet<>();
		for (String child : client.getChildren().forPath(path)) {
			String childPath = ZKPaths.makePath(path, child);
			Stat stat = client.checkExists().forPath(childPath);
			if (stat == null) {
				continue;
			}
			if (stat.getEphemeralOwner() != 0) {
				held.add(path);
			}
			else {
				held.addAll(heldLocks(client, childPath));
			}
		}
		return held;
	}

	private static Set<String> heldLocks(String path) throws Exception {
		return heldLocks(zk, path);
	}

	private static Set<String> allZnodes(String path) throws Exception {
		Set<String> all = new TreeSet<>();
		all.add(path);
		for (String child : zk.getChildren().forPath(path)) {
			all.addAll(allZnodes(ZKPaths.makePath(path, child)));
		}
		return all;
	}

	@Configuration(proxyBeanMethods = false)
	static class StockConfiguration {

		@Bean
		StockService stockService(CuratorFramework client) {
			return new StockService(client);
		}

		@Bean
		Keys keys() {
			return new Keys();
		}

	}

	static class Keys {

		public String prefix() {
			return "tenant-7";
		}

	}

	record Item(String sku) {

		public String getSku() {
			return this.sku;
		}

	}

	static class StockService {

		private final AtomicInteger invocations = new AtomicInteger();

		private final CuratorFramework client;

		StockService(CuratorFramework client) {
			this.client = client;
		}

		/** How often a locked method ran (read through the proxy, hence a method). */
		public int invocations() {
			return this.invocations.get();
		}

		@DistributedLock(path = "/stock/#{#sku}")
		public Set<String> reserve(String sku) throws Exception {
			this.invocations.incrementAndGet();
			return heldLocks(this.client, "/locks");
		}

		@DistributedLock(path = "/stock/#{@keys.prefix()}/#{#sku}")
		public Set<String> reserveForTenant(String sku) throws Exception {
			this.invocations.incrementAndGet();
			return heldLocks(this.client, "/locks");
		}

		@DistributedLock(path = "/stock/#{#item.sku}")
		public Set<String> reserveItem(Item item) throws Exception {
			this.invocations.incrementAndGet();
			return heldLocks(this.client, "/locks");
		}

	}

}
