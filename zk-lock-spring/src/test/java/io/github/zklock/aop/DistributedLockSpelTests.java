package io.github.zklock.aop;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for SpEL lock paths of {@code @DistributedLock} methods: each value stays inside one path
 * segment of the lock znode, and a null or empty value fails the call before any ZooKeeper
 * request. A plain Spring context per test with {@code @EnableDistributedLocks}, on a real
 * ZooKeeper server.
 */
class DistributedLockSpelTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Looks at the tree from outside the application. */
	private static CuratorFramework zk;

	@BeforeAll
	static void connect() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "sku-1|sku-1", "a/b|a%2Fb", ".|%2E", "..|%2E%2E", "../../x|..%2F..%2Fx" })
	void locksEncodedValueInOneSegment(String sku, String segment) throws Exception {
		run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> heldDuringCall = service.reserve(sku);
			assertThat(service.invocations()).isEqualTo(1);
			assertThat(heldDuringCall).containsExactly("/locks/stock/" + segment);
			assertThat(heldLocks("/")).as("released after the call").isEmpty();
		});
	}

	@Test
	void resolvesBeanReference() throws Exception {
		run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> heldDuringCall = service.reserveForTenant("sku/9");
			assertThat(service.invocations()).isEqualTo(1);
			assertThat(heldDuringCall).containsExactly("/locks/stock/tenant-7/sku%2F9");
		});
	}

	@Test
	void rejectsNullValueWithoutInvokingOrTouchingZooKeeper() throws Exception {
		run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> before = allZnodes("/");
			assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.reserve(null))
				.withMessageContaining("/stock/#{#sku}");
			assertThat(service.invocations()).isEqualTo(0);
			assertThat(allZnodes("/")).as("no znode created").isSubsetOf(before);
		});
	}

	@Test
	void rejectsEmptyValueWithoutInvokingOrTouchingZooKeeper() throws Exception {
		run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> before = allZnodes("/");
			assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.reserve(""))
				.withMessageContaining("/stock/#{#sku}");
			assertThat(service.invocations()).isEqualTo(0);
			assertThat(allZnodes("/")).as("no znode created").isSubsetOf(before);
		});
	}

	@Test
	void rejectsFailingExpressionWithoutInvoking() throws Exception {
		run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> before = allZnodes("/");
			assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.reserveItem(null));
			assertThat(service.invocations()).isEqualTo(0);
			assertThat(allZnodes("/")).as("no znode created").isSubsetOf(before);
		});
	}

	@Test
	void resolvesNestedPropertyOfArgument() throws Exception {
		run((context) -> {
			StockService service = context.getBean(StockService.class);
			Set<String> heldDuringCall = service.reserveItem(new Item(".."));
			assertThat(service.invocations()).isEqualTo(1);
			assertThat(heldDuringCall).containsExactly("/locks/stock/%2E%2E");
		});
	}

	/** Run the checks on a fresh context, closed afterwards. */
	private static void run(ContextCheck check) throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				StockConfiguration.class, LockBeans.class)) {
			check.accept(context);
		}
	}

	@FunctionalInterface
	interface ContextCheck {

		void accept(AnnotationConfigApplicationContext context) throws Exception;

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

	/**
	 * A plain application's client, registry and template; the template's default wait time is
	 * what {@code zk.lock.default-wait-time=10s} set in the Boot version.
	 */
	@Configuration(proxyBeanMethods = false)
	static class LockBeans {

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient();
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, Duration.ofSeconds(10));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
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
