package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.ZooKeeperExtension;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests that a {@code @DistributedLock} method that is also {@code @Transactional} holds the lock
 * around the whole transaction, so that read-then-write updates from concurrent callers are not
 * lost: the lock advisor is ordered outside the transaction advisor, with local hand-off (grants
 * riding one znode from thread to thread) and without. A plain Spring context per test
 * ({@code @EnableDistributedLocks}, {@code @EnableTransactionManagement}, an H2 database, a
 * {@link DataSourceTransactionManager}), on a real ZooKeeper server.
 */
class TransactionalLockTests {

	private static final int THREADS = 6;

	private static final int CALLS_PER_THREAD = 20;

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Looks at the tree from outside the application. */
	private static CuratorFramework zk;

	@BeforeAll
	static void connect() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void lockAdvisorIsOrderedOutsideTheTransactionAdvisor() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				StockConfiguration.class)) {
			int lockOrder = context.getBean(DistributedLockAdvisor.class).getOrder();
			int transactionOrder = context.getBean(BeanFactoryTransactionAttributeSourceAdvisor.class).getOrder();
			assertThat(lockOrder).isEqualTo(EnableDistributedLocks.DEFAULT_ORDER).isLessThan(transactionOrder);
		}
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void concurrentReadThenWriteLosesNoUpdate(boolean handoff) throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				StockConfiguration.class)) {
			context.getBean(CuratorLockRegistry.class)
				.setLocalHandoff(handoff ? LocalHandoff.DEFAULT : LocalHandoff.DISABLED);
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
			List<String> lockNodes = service.completions().stream().map(Completion::lockNode).distinct().toList();
			if (handoff) {
				assertThat(lockNodes).as("lock znodes ridden by several grants")
					.hasSizeLessThan(THREADS * CALLS_PER_THREAD);
			}
			else {
				assertThat(lockNodes).as("one lock znode per grant").hasSize(THREADS * CALLS_PER_THREAD);
			}
		}
	}

	@Test
	void holdsLockUntilTransactionHasCommitted() throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				StockConfiguration.class)) {
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
		}
	}

	@Test
	void holdsLockUntilTransactionHasRolledBack() throws Exception {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				StockConfiguration.class)) {
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
		}
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

	/**
	 * What a plain Spring application with a database defines. The template's default wait time
	 * is what {@code zk.lock.default-wait-time=20s} set in the Boot version.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@EnableTransactionManagement
	static class StockConfiguration {

		@Bean(destroyMethod = "shutdown")
		EmbeddedDatabase dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		JdbcTemplate jdbcTemplate(DataSource dataSource) {
			return new JdbcTemplate(dataSource);
		}

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
			return new LockTemplate(lockRegistry, Duration.ofSeconds(20));
		}

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
