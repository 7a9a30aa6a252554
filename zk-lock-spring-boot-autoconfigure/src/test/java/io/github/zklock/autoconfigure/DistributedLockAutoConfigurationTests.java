package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.apache.curator.CuratorZookeeperClient;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooKeeper;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.AbstractAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.aop.DistributedLockAdvisor;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.entry;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The {@code @DistributedLock} advice as Spring Boot wires it, on a real ZooKeeper: what the
 * {@code zk.lock.*} properties do to annotated methods (connect string, client timeouts and
 * retries, default wait time), that {@link ZkLockAutoConfiguration} alone proxies annotated beans,
 * that an application's own counting client keeps the request budget of a lock cycle, and that
 * with Boot's JDBC, transaction and AOP auto-configurations the lock wraps the transaction. The
 * advice itself (SpEL keys, reentrancy, read/write, bad input) is tested without Spring Boot in
 * zk-lock-spring.
 */
class DistributedLockAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Another process on the same server: looks at the tree and holds locks there. */
	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void otherProcess() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void malformedConnectStringFailsTheStartNamingThePropertyAndTheValue() {
		// Breaks if the connect string is not checked when the client is built, or if the
		// failure stops naming the property or the value.
		this.contextRunner.withUserConfiguration(KeyedServiceConfiguration.class)
			.withPropertyValues("zk.lock.connect-string=localhost:notaport")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("notaport")
				.hasMessageContaining("zk.lock.connect-string"));
	}

	@Test
	void zooKeeperDownAtStartIsALockExceptionAtTheFirstCallNotBusy() throws IOException {
		int closedPort = FailFastTests.closedPort();
		String connectString = "127.0.0.1:" + closedPort;
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> this.contextRunner
			.withUserConfiguration(KeyedServiceConfiguration.class, ZooKeeperArgumentsConfiguration.class)
			.withPropertyValues("zk.lock.connect-string=" + connectString, "zk.lock.connection-timeout=1s",
					"zk.lock.session-timeout=3s", "zk.lock.retry.max-retries=1", "zk.lock.retry.base-sleep=100ms")
			.run((context) -> {
				// zk.lock.fail-fast is off by default: the application starts, ZooKeeper may come up later.
				assertThat(context).hasNotFailed();
				CuratorZookeeperClient client = context.getBean(CuratorFramework.class).getZookeeperClient();
				assertThat(client.isConnected()).isFalse();
				assertThat(client.getCurrentConnectionString()).isEqualTo(connectString);
				assertThat(client.getConnectionTimeoutMs()).isEqualTo(1000);
				assertThat(client.getRetryPolicy()).isInstanceOfSatisfying(ExponentialBackoffRetry.class, (retry) -> {
					assertThat(retry.getBaseSleepTimeMs()).isEqualTo(100);
					assertThat(retry.getN()).isEqualTo(1);
				});
				// Curator keeps the session timeout to itself: seen where it reaches the ZooKeeper client.
				assertThat(context.getBean(ZooKeeperArguments.class).sessionTimeouts).isNotEmpty()
					.containsOnly(3000);
				KeyedService service = context.getBean(KeyedService.class);
				// A translation of the connection loss into "busy" would throw LockAcquisitionException.
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> service.lock("sku-1"))
					.isNotInstanceOf(LockAcquisitionException.class)
					.withMessageContaining("ZooKeeper is unreachable")
					.withMessageContaining(connectString);
				assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> context.getBean(LockTemplate.class)
						.tryAcquire("/keys/x", LockMode.READ, Duration.ZERO))
					.isNotInstanceOf(LockAcquisitionException.class);
				assertThat(service.invocations()).isZero();
			}));
	}

	@Test
	void annotatedMethodWithoutWaitTimeWaitsTheDefaultWaitTimeOfTheProperty() throws Exception {
		// ZkLockAutoConfiguration alone, without AopAutoConfiguration: its @EnableDistributedLocks
		// registers the auto-proxy creator. Without one the call would run unlocked and return; with
		// the template's default (no limit) instead of the property, it would wait past the timeout.
		InterProcessMutex otherHolder = new InterProcessMutex(zk, "/locks/defaulted");
		this.contextRunner.withUserConfiguration(DefaultedServiceConfiguration.class)
			.withPropertyValues("zk.lock.default-wait-time=1s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
					.isInstanceOf(AbstractAutoProxyCreator.class);
				DefaultedService service = context.getBean(DefaultedService.class);
				assertThat(AopUtils.isAopProxy(service)).isTrue();
				assertThat(otherHolder.acquire(10, TimeUnit.SECONDS)).isTrue();
				try {
					long started = System.nanoTime();
					assertTimeoutPreemptively(Duration.ofSeconds(8),
							() -> assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(service::work)
								.withMessageContaining("/locks/defaulted")
								.withMessageContaining("within 1000 ms"));
					assertThat(Duration.ofNanos(System.nanoTime() - started))
						.isGreaterThanOrEqualTo(Duration.ofSeconds(1));
					assertThat(service.invocations()).isZero();
				}
				finally {
					otherHolder.release();
				}
				assertTimeoutPreemptively(Duration.ofSeconds(10), service::work);
				assertThat(service.invocations()).isOne();
			});
	}

	@Test
	void exclusiveCycleOnTheApplicationsCountingClientIsThreeRequestsTwoWrites() throws Exception {
		assertCycle((service) -> service.exclusive("sku-1"), "/locks/budget/exclusive/sku-1");
	}

	@Test
	void writeCycleOnTheApplicationsCountingClientIsThreeRequestsTwoWrites() throws Exception {
		assertCycle((service) -> service.write("sku-1"), "/locks/budget/rw/sku-1");
	}

	@Test
	void lockAdvisorIsOrderedOutsideBootsTransactionAdvisor() {
		transactionalContextRunner().run((context) -> {
			assertThat(context).hasNotFailed();
			int lockOrder = context.getBean(DistributedLockAdvisor.class).getOrder();
			int transactionOrder = context.getBean(BeanFactoryTransactionAttributeSourceAdvisor.class).getOrder();
			assertThat(lockOrder).as("zk.lock.aspect-order left out")
				.isEqualTo(EnableDistributedLocks.DEFAULT_ORDER)
				.isLessThan(transactionOrder);
			// One auto-proxy creator (Boot's and the advice's merged), one proxy with both advisors,
			// the lock's first.
			assertThat(context.getBeansOfType(AbstractAutoProxyCreator.class)).hasSize(1);
			StockService service = context.getBean(StockService.class);
			assertThat(AopUtils.isAopProxy(service)).isTrue();
			List<Advisor> advisors = Arrays.stream(((Advised) service).getAdvisors())
				.filter((advisor) -> advisor instanceof DistributedLockAdvisor
						|| advisor instanceof BeanFactoryTransactionAttributeSourceAdvisor)
				.toList();
			assertThat(advisors).extracting(Object::getClass)
				.containsExactly(DistributedLockAdvisor.class, BeanFactoryTransactionAttributeSourceAdvisor.class);
		});
	}

	@Test
	void holdsTheLockFromBeforeTheTransactionBeginsUntilAfterItCommits() {
		// Breaks when the lock is taken inside the transaction (zk.lock.aspect-order at or above
		// the transaction advisor's order): the transaction would begin before the lock and commit
		// after its release.
		transactionalContextRunner().run((context) -> {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			createStock(jdbc, "sku-2", 10);
			StockService service = context.getBean(StockService.class);
			TransactionProbe probe = context.getBean(TransactionProbe.class);
			assertThat(service.decrement("sku-2")).isEqualTo(9);
			assertThat(quantity(jdbc, "sku-2")).isEqualTo(9);
			assertThat(probe.events).containsExactly("beforeBegin: lock held", "afterBegin: lock held",
					"beforeCommit: lock held", "afterCommit: lock held");
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
	void holdsTheLockFromBeforeTheTransactionBeginsUntilAfterItRollsBack() {
		transactionalContextRunner().run((context) -> {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			createStock(jdbc, "sku-3", 10);
			StockService service = context.getBean(StockService.class);
			TransactionProbe probe = context.getBean(TransactionProbe.class);
			assertThatIllegalStateException().isThrownBy(() -> service.decrementAndFail("sku-3"))
				.withMessage("out of luck");
			assertThat(quantity(jdbc, "sku-3")).isEqualTo(10);
			assertThat(probe.events).containsExactly("beforeBegin: lock held", "afterBegin: lock held",
					"beforeRollback: lock held", "afterRollback: lock held");
			assertThat(service.completions()).singleElement().satisfies((completion) -> {
				assertThat(completion.status()).isEqualTo(TransactionSynchronization.STATUS_ROLLED_BACK);
				assertThat(completion.lockNodeExisted()).as("lock held at rollback").isTrue();
				assertThat(zk.checkExists().forPath(completion.lockNode())).as("lock released after rollback")
					.isNull();
			});
		});
	}

	/**
	 * The application's own client, counting its requests: the auto-configured client backs off,
	 * and the registry, template and advice use this one. If the auto-configuration built a
	 * client of its own, the registry would be ambiguous or nothing would be counted.
	 */
	private void assertCycle(Consumer<Budgeted> cycle, String lockPath) throws Exception {
		// In an application the first cycle creates the lock path and its parents, as containers,
		// which the server deletes once empty: a later cycle that found them gone would create them
		// again. Made persistent beforehand, every cycle, the first too, is the recipe's own.
		zk.create().creatingParentsIfNeeded().forPath(lockPath);
		CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withBean(CountingZooKeeper.Counts.class, () -> counts)
			.withUserConfiguration(CountingClientConfiguration.class)
			.withPropertyValues("zk.lock.default-wait-time=5s")
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(CuratorFramework.class)
					.doesNotHaveBean("zkLockCuratorFramework");
				Budgeted service = context.getBean(Budgeted.class);
				for (int i = 0; i < 3; i++) {
					counts.reset();
					cycle.accept(service);
					assertThat(counts.snapshot()).as("requests %s", counts)
						.containsOnly(entry("create", 1L), entry("getChildren", 1L), entry("delete", 1L));
					assertThat(counts.total()).isEqualTo(3);
					assertThat(counts.writes()).isEqualTo(2);
				}
			});
	}

	private ApplicationContextRunner transactionalContextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
					TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class,
					AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withUserConfiguration(StockConfiguration.class)
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
					"zk.lock.default-wait-time=20s");
	}

	private static void createStock(JdbcTemplate jdbc, String sku, int quantity) {
		jdbc.execute("create table if not exists stock (sku varchar(64) primary key, quantity int not null)");
		jdbc.update("insert into stock (sku, quantity) values (?, ?)", sku, quantity);
	}

	private static Integer quantity(JdbcTemplate jdbc, String sku) {
		return jdbc.queryForObject("select quantity from stock where sku = ?", Integer.class, sku);
	}

	@Configuration(proxyBeanMethods = false)
	static class KeyedServiceConfiguration {

		@Bean
		KeyedService keyedService() {
			return new KeyedService();
		}

	}

	static class KeyedService {

		private final AtomicInteger invocations = new AtomicInteger();

		@DistributedLock(path = "/keys/#{#key}", waitTime = "0")
		public String lock(String key) {
			this.invocations.incrementAndGet();
			return key;
		}

		public int invocations() {
			return this.invocations.get();
		}

	}

	/** The session timeouts the auto-configured client gives the ZooKeeper clients it makes. */
	static class ZooKeeperArguments {

		final List<Integer> sessionTimeouts = new CopyOnWriteArrayList<>();

	}

	@Configuration(proxyBeanMethods = false)
	static class ZooKeeperArgumentsConfiguration {

		@Bean
		ZooKeeperArguments zooKeeperArguments() {
			return new ZooKeeperArguments();
		}

		@Bean
		CuratorFrameworkBuilderCustomizer recordingZookeeperFactory(ZooKeeperArguments arguments) {
			return (builder) -> builder.zookeeperFactory((connectString, sessionTimeout, watcher, canBeReadOnly) -> {
				arguments.sessionTimeouts.add(sessionTimeout);
				return new ZooKeeper(connectString, sessionTimeout, watcher, canBeReadOnly);
			});
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DefaultedServiceConfiguration {

		@Bean
		DefaultedService defaultedService() {
			return new DefaultedService();
		}

	}

	static class DefaultedService {

		private final AtomicInteger invocations = new AtomicInteger();

		/** No wait time given: {@code zk.lock.default-wait-time} applies. */
		@DistributedLock(path = "/defaulted")
		public void work() {
			this.invocations.incrementAndGet();
		}

		public int invocations() {
			return this.invocations.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CountingClientConfiguration {

		@Bean
		CuratorFramework countingCuratorFramework(CountingZooKeeper.Counts counts) throws InterruptedException {
			return zooKeeper.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(counts)));
		}

		@Bean
		Budgeted budgeted() {
			return new Budgeted();
		}

	}

	static class Budgeted {

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public void exclusive(String sku) {
		}

		@DistributedLock(path = "/budget/rw/#{#sku}", mode = LockMode.WRITE)
		public void write(String sku) {
		}

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

		/** Boot adds it to the transaction manager it auto-configures. */
		@Bean
		TransactionProbe transactionProbe() {
			return new TransactionProbe();
		}

	}

	/**
	 * Sees each step of a transaction and whether the thread then holds a lock: the
	 * {@link LockContext} of the locked call, still held.
	 */
	static class TransactionProbe implements TransactionExecutionListener {

		final Queue<String> events = new ConcurrentLinkedQueue<>();

		@Override
		public void beforeBegin(TransactionExecution transaction) {
			record("beforeBegin");
		}

		@Override
		public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
			record("afterBegin");
		}

		@Override
		public void beforeCommit(TransactionExecution transaction) {
			record("beforeCommit");
		}

		@Override
		public void afterCommit(TransactionExecution transaction, @Nullable Throwable commitFailure) {
			record("afterCommit");
		}

		@Override
		public void beforeRollback(TransactionExecution transaction) {
			record("beforeRollback");
		}

		@Override
		public void afterRollback(TransactionExecution transaction, @Nullable Throwable rollbackFailure) {
			record("afterRollback");
		}

		private void record(String step) {
			boolean held = LockContext.current().map(LockHandle::isHeld).orElse(false);
			this.events.add(step + ": " + (held ? "lock held" : "no lock"));
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
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					try {
						boolean existed = StockService.this.client.checkExists().forPath(lockNode) != null;
						StockService.this.completions
							.add(new Completion(transactionActive, lockNode, status, existed, null));
					}
					catch (Exception ex) {
						StockService.this.completions.add(new Completion(transactionActive, lockNode, status, false, ex));
					}
				}

			});
		}

		/** Uncontended: the lock path has one child, the holder's znode. */
		private String holderNode(String lockPath) throws Exception {
			List<String> children = this.client.getChildren().forPath(lockPath);
			assertThat(children).as("znodes under %s", lockPath).hasSize(1);
			return lockPath + "/" + children.get(0);
		}

	}

}
