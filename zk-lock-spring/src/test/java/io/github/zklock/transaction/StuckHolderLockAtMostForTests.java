package io.github.zklock.transaction;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A stuck holder ended by its ceiling, end to end: two applications (two plain Spring contexts,
 * each with its own Curator client and so its own ZooKeeper session, its own lock registry,
 * template, {@code @DistributedLock} advice, DataSource and transaction manager with the commit
 * guard) sell from one stock row of one shared H2 database, through one {@link JdbcLockFence}
 * table. Their {@code @Transactional @DistributedLock(lockAtMostFor = "1s")} sale is a
 * read-modify-write of the row; application A's sale gets stuck (a hung call, bounded here) well
 * past the ceiling, application B's is called while A holds the key.
 *
 * <p>What must hold, in both orders of fence and read that an application may write: B is granted
 * within the ceiling plus one second of A's grant (printed as a {@code CEILING ...} line), with a
 * higher fencing token; B's sale commits; A's grant is LOST with the reason and A is told through
 * a {@link LockStateEvent}; A's transaction is rolled back; the store holds B's sale only (one
 * unit sold, B's token in the fence, B's line in the sales ledger).
 * <ul>
 * <li>Fence at the write (read, stuck, fence, write): A's late fence call is refused with
 * {@link LockLostException} ({@code fencingToken()} of a grant its ceiling ended) before any
 * statement; its exception rolls its transaction back. A holder that did not notice, with the token
 * it read while it held the lock (a frozen process: its session, not its ceiling, frees the key),
 * is refused by the store with {@link StaleFencingTokenException}.</li>
 * <li>Fence first (fence, read, stuck, write), as {@link JdbcLockFence} recommends: A's accepted
 * fence row keeps B's fence statement waiting in the database; A's method returns, the commit
 * guard refuses the commit with {@link LockLostException} and the transaction rolls back; then B's
 * fence passes with its higher token and B reads the stock A did not change.</li>
 * </ul>
 * The advice runs outside {@code @Transactional} (its default order), as in
 * {@link LockCommitGuardTests}.
 */
class StuckHolderLockAtMostForTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration CEILING = Duration.ofSeconds(1);

	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final String SKU = "apple";

	private static final String LOCK_PATH = "/locks/stock/" + SKU;

	private final ExecutorService threads = Executors.newFixedThreadPool(2);

	private DriverManagerDataSource database;

	private AnnotationConfigApplicationContext applicationA;

	private AnnotationConfigApplicationContext applicationB;

	@BeforeEach
	void start() throws InterruptedException {
		String url = "jdbc:h2:mem:ceiling-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
		this.database = new DriverManagerDataSource(url);
		JdbcTemplate jdbc = new JdbcTemplate(this.database);
		jdbc.execute(JdbcLockFence.fenceTable(this.database).createTableSql());
		jdbc.execute("CREATE TABLE stock (sku VARCHAR(64) PRIMARY KEY, quantity INT NOT NULL, sold_by VARCHAR(8))");
		jdbc.execute("CREATE TABLE sales (application VARCHAR(8) PRIMARY KEY, fencing_token BIGINT NOT NULL)");
		jdbc.update("INSERT INTO stock (sku, quantity) VALUES (?, 10)", SKU);
		// The key's fence row exists, committed: a fence statement waits for the row of an open
		// transaction, not for an uncommitted first insert of it.
		jdbc.update("INSERT INTO zk_lock_fence (lock_path, fencing_token) VALUES (?, 0)", LOCK_PATH);
		this.applicationA = Shop.start("A", url);
		this.applicationB = Shop.start("B", url);
	}

	@AfterEach
	void stop() {
		this.threads.shutdownNow();
		this.applicationA.close();
		this.applicationB.close();
		new JdbcTemplate(this.database).execute("SHUTDOWN");
	}

	@Test
	void stuckHolderFencingAtTheWriteIsRefusedAndTheOtherApplicationSellsWithinTheCeilingPlusOneSecond()
			throws Exception {
		Stuck stuck = new Stuck();
		CompletableFuture<Sale> saleOfA = CompletableFuture
			.supplyAsync(() -> this.applicationA.getBean(StockService.class).sellFencingAtTheWrite(SKU, stuck), this.threads);
		Grant grantOfA = stuck.granted.get(BOUND.toSeconds(), TimeUnit.SECONDS);

		Stuck notStuck = Stuck.notStuck();
		Sale saleOfB = this.applicationB.getBean(StockService.class).sellFencingAtTheWrite(SKU, notStuck);
		Grant grantOfB = notStuck.granted.getNow(null);
		long releasedAfterMs = releasedAfterMs(grantOfA, grantOfB, "at-write");

		try {
			assertThat(releasedAfterMs).as("B granted within the ceiling plus one second of A's grant")
				.isBetween(CEILING.toMillis() - 100, CEILING.toMillis() + 1000);
			assertThat(saleOfB).isEqualTo(new Sale("B", 9, grantOfB.token()));
			assertThat(grantOfB.token()).isGreaterThan(grantOfA.token());
			assertThat(grantOfA.handle().state()).isEqualTo(LockState.LOST);
			assertLostEventOf(this.applicationA, grantOfA);
			// B's sale is committed while A is still stuck.
			assertThat(saleOfA).isNotDone();
			assertStoreHoldsTheSaleOf("B", grantOfB.token());
		}
		finally {
			stuck.unstick.countDown();
		}

		// A wakes up and writes through the fence: refused, before any statement, by its grant.
		assertRefusedAndRolledBack(saleOfA, grantOfA, JdbcLockFence.class, "advance");
		assertStoreHoldsTheSaleOf("B", grantOfB.token());

		// A holder that did not notice, with the token it read while it held the lock, is refused by
		// the store itself.
		JdbcLockFence fenceOfA = this.applicationA.getBean(JdbcLockFence.class);
		TransactionTemplate transactionOfA = new TransactionTemplate(
				this.applicationA.getBean(DataSourceTransactionManager.class));
		assertThatExceptionOfType(StaleFencingTokenException.class)
			.isThrownBy(() -> transactionOfA.executeWithoutResult(
					(status) -> fenceOfA.advance(new ZombieGrant(grantOfA.handle(), grantOfA.token()))))
			.satisfies((stale) -> {
				assertThat(stale.getFencingToken()).isEqualTo(grantOfA.token());
				assertThat(stale.getHighestToken()).hasValue(grantOfB.token());
			});
		assertStoreHoldsTheSaleOf("B", grantOfB.token());
	}

	@Test
	void stuckHolderThatFencedFirstIsRolledBackByTheCommitGuardAndTheOtherApplicationSellsAfterIt()
			throws Exception {
		Stuck stuck = new Stuck();
		CompletableFuture<Sale> saleOfA = CompletableFuture
			.supplyAsync(() -> this.applicationA.getBean(StockService.class).sellFencingFirst(SKU, stuck), this.threads);
		Grant grantOfA = stuck.granted.get(BOUND.toSeconds(), TimeUnit.SECONDS);

		Stuck notStuck = Stuck.notStuck();
		CompletableFuture<Sale> saleOfB = CompletableFuture
			.supplyAsync(() -> this.applicationB.getBean(StockService.class).sellFencingFirst(SKU, notStuck), this.threads);
		Grant grantOfB = notStuck.granted.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		long releasedAfterMs = releasedAfterMs(grantOfA, grantOfB, "first");

		try {
			assertThat(releasedAfterMs).as("B granted within the ceiling plus one second of A's grant")
				.isBetween(CEILING.toMillis() - 100, CEILING.toMillis() + 1000);
			assertThat(grantOfB.token()).isGreaterThan(grantOfA.token());
			assertThat(grantOfA.handle().state()).isEqualTo(LockState.LOST);
			assertLostEventOf(this.applicationA, grantOfA);
			// B's fence waits in the database for A's transaction, which holds the fence row.
			await().atMost(BOUND).until(() -> waitingStatements("UPDATE zk_lock_fence") == 1);
			assertThat(saleOfB).isNotDone();
		}
		finally {
			stuck.unstick.countDown();
		}

		// A wakes up, writes and returns: the commit guard refuses the commit of its lost grant.
		assertRefusedAndRolledBack(saleOfA, grantOfA, LockCommitGuard.class, "beforeCommit");
		// Then B's fence passes, and B sells from the stock A did not change.
		assertThat(saleOfB).succeedsWithin(BOUND).isEqualTo(new Sale("B", 9, grantOfB.token()));
		assertStoreHoldsTheSaleOf("B", grantOfB.token());
	}

	/**
	 * Print, for the guide, how long after A's grant B was granted, each measured where the method's
	 * body starts (in its transaction), and return it.
	 */
	private static long releasedAfterMs(Grant stuck, Grant next, String fence) {
		long releasedAfterMs = TimeUnit.NANOSECONDS.toMillis(next.grantedAt() - stuck.grantedAt());
		System.out.println("CEILING lock_at_most_for_ms=" + CEILING.toMillis() + " released_after_ms=" + releasedAfterMs
				+ " fence=" + fence);
		return releasedAfterMs;
	}

	private static void assertLostEventOf(AnnotationConfigApplicationContext application, Grant grant) {
		Events events = application.getBean(Events.class);
		await().atMost(BOUND).untilAsserted(() -> assertThat(events.received).singleElement().satisfies((event) -> {
			assertThat(event.state()).isEqualTo(LockState.LOST);
			assertThat(event.path()).isEqualTo(LOCK_PATH);
			assertThat(event.handle().path()).isEqualTo(grant.handle().path());
			assertThat(event.fencingToken()).hasValue(grant.token());
		}));
	}

	/** One unit sold, by the application named, whose token the fence keeps. */
	/**
	 * A's sale failed with its grant lost to the ceiling, the failure thrown by the given method,
	 * and A's transaction rolled back.
	 */
	private void assertRefusedAndRolledBack(CompletableFuture<Sale> saleOfA, Grant grantOfA, Class<?> refusedBy,
			String method) {
		assertThat(saleOfA).failsWithin(BOUND)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isExactlyInstanceOf(LockLostException.class)
			.withMessageContaining(LOCK_PATH)
			.withMessageContaining("held longer than lockAtMostFor (PT1S)")
			.satisfies((refused) -> assertThat(thrownBy(refused, refusedBy, method))
				.as("thrown by " + refusedBy.getSimpleName() + "." + method).isTrue());
		assertThat(this.applicationA.getBean(StockService.class).rolledBack()).as("A's transaction rolled back")
			.containsExactly(grantOfA.token());
	}

	private void assertStoreHoldsTheSaleOf(String application, long token) {
		JdbcTemplate jdbc = new JdbcTemplate(this.database);
		assertThat(jdbc.queryForMap("SELECT quantity, sold_by FROM stock WHERE sku = ?", SKU))
			.containsExactlyInAnyOrderEntriesOf(Map.of("QUANTITY", 9, "SOLD_BY", application));
		assertThat(jdbc.queryForList("SELECT application, fencing_token FROM sales"))
			.containsExactly(Map.of("APPLICATION", application, "FENCING_TOKEN", token));
		assertThat(jdbc.queryForObject("SELECT fencing_token FROM zk_lock_fence WHERE lock_path = ?", Long.class,
				LOCK_PATH)).isEqualTo(token);
	}

	/** How many H2 sessions run a statement starting so (and so wait for a row lock). */
	private int waitingStatements(String sqlPrefix) {
		return new JdbcTemplate(this.database).queryForObject(
				"SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE EXECUTING_STATEMENT LIKE ?", Integer.class,
				sqlPrefix + "%");
	}

	private static boolean thrownBy(Throwable ex, Class<?> type, String method) {
		return Arrays.stream(ex.getStackTrace())
			.anyMatch((frame) -> frame.getClassName().equals(type.getName()) && frame.getMethodName().equals(method));
	}

	/** What a sale saw when it was granted: its handle, its token and when ({@code System.nanoTime()}). */
	record Grant(LockHandle handle, long token, long grantedAt) {
	}

	/** A committed sale: who sold, the stock left, under which token. */
	record Sale(String application, int quantityLeft, long token) {
	}

	/** Tells the test when a sale is granted, and keeps it stuck until the test lets go (10 s at most). */
	static final class Stuck {

		final CompletableFuture<Grant> granted = new CompletableFuture<>();

		final CountDownLatch unstick = new CountDownLatch(1);

		static Stuck notStuck() {
			Stuck stuck = new Stuck();
			stuck.unstick.countDown();
			return stuck;
		}

		Grant granted(LockHandle handle) {
			Grant grant = new Grant(handle, handle.fencingToken(), System.nanoTime());
			this.granted.complete(grant);
			return grant;
		}

		/** A hung call: blocks until the test lets go (interrupt-on-lost is off: the ceiling interrupts nothing). */
		void hang() {
			try {
				this.unstick.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	/**
	 * The shop, one sale at a time per SKU across the applications: a read-modify-write of the
	 * stock row with a line in the sales ledger, in one transaction, under the lock of the SKU with
	 * a one-second ceiling, fenced with the grant's token.
	 */
	static class StockService {

		private final JdbcTemplate jdbc;

		private final JdbcLockFence fence;

		private final String application;

		private final List<Long> rolledBack = new CopyOnWriteArrayList<>();

		StockService(JdbcTemplate jdbc, JdbcLockFence fence, String application) {
			this.jdbc = jdbc;
			this.fence = fence;
			this.application = application;
		}

		/** Read the stock, (be stuck,) fence, write. */
		@DistributedLock(path = "/stock/#{#sku}", lockAtMostFor = "1s")
		@Transactional
		public Sale sellFencingAtTheWrite(String sku, Stuck stuck) {
			Grant grant = granted(stuck);
			int quantity = quantity(sku);
			stuck.hang();
			this.fence.advance(grant.handle());
			return write(sku, quantity, grant.token());
		}

		/** Fence, read the stock, (be stuck,) write. */
		@DistributedLock(path = "/stock/#{#sku}", lockAtMostFor = "1s")
		@Transactional
		public Sale sellFencingFirst(String sku, Stuck stuck) {
			Grant grant = granted(stuck);
			this.fence.advance(grant.handle());
			int quantity = quantity(sku);
			stuck.hang();
			// Writes on with the token it fenced with: nothing here asks the grant again.
			return write(sku, quantity, grant.token());
		}

		/** The tokens of this application's sales whose transaction rolled back (read through the proxy). */
		public List<Long> rolledBack() {
			return this.rolledBack;
		}

		/** Tell the test, and note the transaction's rollback. */
		private Grant granted(Stuck stuck) {
			Grant grant = stuck.granted(LockContext.require());
			long token = grant.token();
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					if (status == STATUS_ROLLED_BACK) {
						StockService.this.rolledBack.add(token);
					}
				}

			});
			return grant;
		}

		private int quantity(String sku) {
			return this.jdbc.queryForObject("SELECT quantity FROM stock WHERE sku = ?", Integer.class, sku);
		}

		private Sale write(String sku, int quantity, long token) {
			this.jdbc.update("UPDATE stock SET quantity = ?, sold_by = ? WHERE sku = ?", quantity - 1, this.application,
					sku);
			this.jdbc.update("INSERT INTO sales (application, fencing_token) VALUES (?, ?)", this.application, token);
			return new Sale(this.application, quantity - 1, token);
		}

	}

	static class Events {

		final List<LockStateEvent> received = new CopyOnWriteArrayList<>();

		@EventListener
		void on(LockStateEvent event) {
			this.received.add(event);
		}

	}

	/**
	 * One application: its own DataSource on the shared database, transaction manager (with the
	 * commit guard, added by {@code @EnableDistributedLocks}), fence, Curator client, registry
	 * (publishing lock state changes as application events), template waiting 10 s, and the shop.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@EnableTransactionManagement
	static class Shop {

		static AnnotationConfigApplicationContext start(String name, String url) {
			AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
			context.registerBean("application", String.class, () -> name);
			context.registerBean(DataSource.class, () -> new DriverManagerDataSource(url));
			context.register(Shop.class);
			context.refresh();
			return context;
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
		JdbcLockFence jdbcLockFence(DataSource dataSource) {
			return JdbcLockFence.fenceTable(dataSource);
		}

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient();
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client, ApplicationEventPublisher eventPublisher) {
			CuratorLockRegistry registry = new CuratorLockRegistry(client, "/locks", 100);
			registry.addLockStateListener(eventPublisher::publishEvent);
			return registry;
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, BOUND);
		}

		@Bean
		Events events() {
			return new Events();
		}

		@Bean
		StockService stockService(JdbcTemplate jdbc, JdbcLockFence fence, String application) {
			return new StockService(jdbc, fence, application);
		}

	}

}
