package io.github.zklock.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockContext;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LockMode;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.test.CountingZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ZooKeeper requests of one uncontended lock cycle through {@code @DistributedLock}, counted
 * at the ZooKeeper client: the annotation, SpEL and the registry add nothing to what the Curator
 * recipe sends (create, getChildren, delete once the parent znode exists), and the fencing token
 * costs one read, only when asked. Under contention, a hand-over between threads of one
 * application costs what the recipe costs between processes.
 */
class RequestBudgetTests {

	private static TestingServer server;

	private static final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withUserConfiguration(CountingClient.class);

	@BeforeAll
	static void start() throws Exception {
		server = new TestingServer(true);
	}

	@AfterAll
	static void stop() throws Exception {
		server.close();
	}

	@Test
	void exclusiveCycleIsThreeRequestsTwoWrites() {
		assertCycle((service) -> service.exclusive("sku-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void readCycleIsThreeRequestsTwoWrites() {
		assertCycle((service) -> service.read("sku-1"), 3, 2, Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void writeCycleIsThreeRequestsTwoWrites() {
		assertCycle((service) -> service.write("sku-1"), 3, 2, Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void fencingTokenAddsOneReadOnlyWhenAsked() {
		assertCycle((service) -> service.exclusiveWithToken("sku-1"), 4, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L, "exists", 1L));
	}

	@Test
	void nestedReentrantCallAddsNoRequest() {
		assertCycle((service) -> service.nested("sku-1"), 3, 2, Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void contendedGrantWakesOnlyTheSuccessor() {
		int threads = 8;
		int cyclesPerThread = 25;
		this.contextRunner.withPropertyValues("zk.lock.default-wait-time=30s").run((context) -> {
			assertThat(context).hasNotFailed();
			LockTemplate locks = context.getBean(LockTemplate.class);
			locks.execute("/budget/contended", (handle) -> null);
			counts.reset();
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					workers.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < cyclesPerThread; i++) {
							// Hold briefly so that the other threads queue up behind the holder.
							locks.execute("/budget/contended", (handle) -> {
								Thread.sleep(1);
								return null;
							});
						}
						return null;
					}));
				}
				start.countDown();
				for (Future<?> worker : workers) {
					worker.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				pool.shutdownNow();
			}
			double grants = threads * cyclesPerThread;
			Map<String, Long> byOperation = counts.snapshot();
			// Threads did wait: a waiter watches its predecessor with one getData.
			assertThat(byOperation.getOrDefault("getData", 0L)).as("%s", byOperation).isPositive();
			// create + getChildren + delete, plus getData + getChildren for a waiter: 5 per
			// grant when each waiting thread is woken only by its predecessor's delete. A recipe
			// instance shared by the threads wakes them all at every hand-over (about 18 here).
			assertThat(counts.total() / grants).as("requests per grant %s", byOperation).isLessThanOrEqualTo(5.5);
		});
	}

	private void assertCycle(Consumer<Budgeted> cycle, long requests, long writes, Map<String, Long> byOperation) {
		this.contextRunner.withPropertyValues("zk.lock.default-wait-time=5s").run((context) -> {
			Budgeted service = service(context);
			// The first cycle creates the parent znodes (containers); measure the next ones.
			cycle.accept(service);
			for (int i = 0; i < 3; i++) {
				counts.reset();
				cycle.accept(service);
				assertThat(counts.total()).as("requests %s", counts).isEqualTo(requests);
				assertThat(counts.writes()).as("writes %s", counts).isEqualTo(writes);
				assertThat(counts.snapshot()).isEqualTo(byOperation);
			}
		});
	}

	private static Budgeted service(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		return context.getBean(Budgeted.class);
	}

	@Configuration(proxyBeanMethods = false)
	static class CountingClient {

		@Bean(initMethod = "start", destroyMethod = "close")
		CuratorFramework countingCuratorFramework() {
			return CuratorFrameworkFactory.builder()
				.connectString(server.getConnectString())
				.retryPolicy(new RetryOneTime(100))
				.zookeeperFactory(CountingZooKeeper.factory(counts))
				.build();
		}

		@Bean
		Budgeted budgeted(ObjectProvider<LockTemplate> locks) {
			return new Budgeted(locks);
		}

	}

	static class Budgeted {

		private final ObjectProvider<LockTemplate> locks;

		Budgeted(ObjectProvider<LockTemplate> locks) {
			this.locks = locks;
		}

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public void exclusive(String sku) {
		}

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public long exclusiveWithToken(String sku) {
			return LockContext.require().fencingToken();
		}

		@DistributedLock(path = "/budget/rw/#{#sku}", mode = LockMode.READ)
		public void read(String sku) {
		}

		@DistributedLock(path = "/budget/rw/#{#sku}", mode = LockMode.WRITE)
		public void write(String sku) {
		}

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public void nested(String sku) {
			// Re-enters the lock this thread holds: Curator counts it locally.
			this.locks.getObject().execute("/budget/exclusive/" + sku, (handle) -> null);
		}

	}

}
