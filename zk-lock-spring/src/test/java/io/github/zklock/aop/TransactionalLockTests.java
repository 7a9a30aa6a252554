package io.github.zklock.aop;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests that a {@code @DistributedLock} method that is also {@code @Transactional} holds the lock
 * around the whole transaction, so that read-then-write updates from concurrent callers are not
 * lost. Runs against a real ZooKeeper server and an H2 database.
 */
class TransactionalLockTests {

	private static final int THREADS = 6;

	private static final int CALLS_PER_THREAD = 20;

	private static TestingServer server;

	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withUserConfiguration(StockConfiguration.class)
		.withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
				"zk.lock.connect-string=" + server.getConnectString(), "zk.lock.default-wait-time=20s");

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

	@Test
	void concurrentReadThenWriteLosesNoUpdate() {
		this.contextRunner.run((context) -> {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			createStock(jdbc, "sku-1", 1000);
			StockService service = context.getBean(StockService.class);
			ExecutorService executor = Executors.newFixedThreadPool(THREADS);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Void>> results = new ArrayList<>();
				for (int i = 0; i < THREADS; i++) {
					results.add(executor.submit(decrementAfter(start, service, "sku-1")));
				}
				start.countDown();
				for (Future<Void> result : results) {
					result.get(30, SECONDS);
				}
			}
			finally {
				executor.shutdownNow();
			}
			assertThat(quantity(jdbc, "sku-1")).isEqualTo(1000 - THREADS * CALLS_PER_THREAD);
			assertThat(service.completions()).hasSize(THREADS * CALLS_PER_THREAD).allSatisfy((completion) -> {
				assertThat(completion.transactionActive()).isTrue();
				assertThat(completion.status()).isEqualTo(TransactionSynchronization.STATUS_COMMITTED);
				assertThat(completion.lockNodeExisted()).as("lock znode %s at commit", completion.lockNode())
					.isTrue();
			});
			assertThat(service.completions().stream().map(Completion::lockNode).distinct())
				.as("one lock znode per grant")
				.hasSize(THREADS * CALLS_PER_THREAD);
		});
	}

	@Test
	void holdsLockUntilTransactionHasCommitted() {
		this.contextRunner.run((context) -> {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			createStock(jdbc, "sku-2", 10);
			StockService service = context.getBean(StockService.class);
			assertThat(service.decrement("sku-2")).isEqualTo(9);
			assertThat(quantity(jdbc, "sku-2")).isEqualTo(9);
			assertThat(service.completions()).singleElement().satisfies((completion) -> {
				assertThat(completion.transactionActive()).isTrue();
				assertThat(completion.status()).isEqualTo(TransactionSynchronization.STATUS_COMMITTED);
				assertThat(completion.lockNode()).startsWith("/locks/stock/sku-2/");
				assertThat(completion.lockNodeExisted()).as("lock held at commit").isTrue();
				assertThat(zk.checkExists().forPath(completion.lockNode())).as("lock released after commit").isNull();
			});
			assertThat(zk.getChildren().forPath("/locks/stock/sku-2")).isEmpty();
		});
	}

	@Test
	void holdsLockUntilTransactionHasRolledBack() {
		this.contextRunner.run((context) -> {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			createStock(jdbc, "sku-3", 10);
			StockService service = context.getBean(StockService.class);
			assertThatIllegalStateException().isThrownBy(() -> service.decrementAndFail("sku-3"))
				.withMessage("out of luck");
			assertThat(quantity(jdbc, "sku-3")).isEqualTo(10);
			assertThat(service.completions()).singleElement().satisfies((completion) -> {
				assertThat(completion.transactionActive()).isTrue();
				assertThat(completion.status()).isEqualTo(TransactionSynchronization.STATUS_ROLLED_BACK);
				assertThat(completion.lockNodeExisted()).as("lock held at rollback").isTrue();
				assertThat(zk.checkExists().forPath(completion.lockNode())).as("lock released after rollback")
					.isNull();
			});
		});
	}

	private static Callable<Void> decrementAfter(CountDownLatch start, StockService service, String sku) {
		return () -> {
			assertThat(start.await(10, SECONDS)).isTrue();
			for (int i = 0; i < CALLS_PER_THREAD; i++) {
				service.decrement(sku);
			}
			return null;
		};
	}

	private static void createStock(JdbcTemplate jdbc, String sku, int quantity) {
		jdbc.execute("create table if not exists stock (sku varchar(64) primary key, quantity int not null)");
		jdbc.update("insert into stock (sku, quantity) values (?, ?)", sku, quantity);
	}

	private static Integer quantity(JdbcTemplate jdbc, String sku) {
		return jdbc.queryForObject("select quantity from stock where sku = ?", Integer.class, sku);
	}

	/**
	 * What a call saw: whether its transaction was active, the lock znode it held, and at the
	 * transaction's completion the status and whether that znode still existed.
	 */
	record Completion(boolean transactionActive, String lockNode, int status, boolean lockNodeExisted,
			@Nullable Exception failure) {
	}

	@Configuration(proxyBeanMethods = false)
	static class StockConfiguration {

		@Bean
		StockService stockService(JdbcTemplate jdbc, CuratorFramework client) {
			return new StockService(jdbc, client);
		}

	}

	static class StockService {

		private final Queue<Completion> completions = new ConcurrentLinkedQueue<>();

		private final JdbcTemplate jdbc;

		private final CuratorFramework client;

		StockService(JdbcTemplate jdbc, CuratorFramework client) {
			this.jdbc = jdbc;
			this.client = client;
		}

		/** What each call saw (read through the proxy, hence a method). */
		public Queue<Completion> completions() {
			return this.completions;
		}

		@DistributedLock(path = "/stock/#{#sku}")
		@Transactional
		public int decrement(String sku) throws Exception {
			recordCompletion(sku);
			Integer stock = this.jdbc.queryForObject("select quantity from stock where sku = ?", Integer.class, sku);
			this.jdbc.update("update stock set quantity = ? where sku = ?", stock - 1, sku);
			return stock - 1;
		}

		@DistributedLock(path = "/stock/#{#sku}")
		@Transactional
		public int decrementAndFail(String sku) throws Exception {
			decrement(sku);
			throw new IllegalStateException("out of luck");
		}

		private void recordCompletion(String sku) throws Exception {
			boolean transactionActive = TransactionSynchronizationManager.isActualTransactionActive();
			String lockNode = holderNode("/locks/stock/" + sku);
			if (!TransactionSynchronizationManager.isSynchronizationActive()) {
				this.completions.add(new Completion(transactionActive, lockNode, -1, false, null));
				return;
			}
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					try {
						boolean existed = StockService.this.client.checkExists().forPath(lockNode) != null;
						StockService.this.completions.add(new Completion(transactionActive, lockNode, status, existed,
								null));
					}
					catch (Exception ex) {
						StockService.this.completions.add(new Completion(transactionActive, lockNode, status, false, ex));
					}
				}

			});
		}

		/** The holder of a Curator mutex owns the child with the lowest sequence number. */
		private String holderNode(String lockPath) throws Exception {
			String holder = this.client.getChildren()
				.forPath(lockPath)
				.stream()
				.filter((child) -> child.contains("lock-"))
				.min(Comparator.comparing((child) -> child.substring(child.lastIndexOf("lock-"))))
				.orElseThrow(() -> new IllegalStateException("No lock znode under " + lockPath));
			return ZKPaths.makePath(lockPath, holder);
		}

	}

}
