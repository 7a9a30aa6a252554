package io.github.zklock.transaction;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.r2dbc.proxy.ProxyConnectionFactory;
import io.r2dbc.proxy.core.QueryInfo;
import io.r2dbc.spi.ConnectionFactory;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static io.github.zklock.transaction.FenceTests.awaitBarrier;
import static io.github.zklock.transaction.FenceTests.awaitRelease;
import static io.github.zklock.transaction.FenceTests.concat;
import static io.github.zklock.transaction.FenceTests.inNewThread;
import static org.awaitility.Awaitility.await;

/**
 * What {@link R2dbcLockFence} does on a database, with grants of a real ZooKeeper server and real
 * reactive transactions ({@link R2dbcTransactionManager} through a {@link TransactionalOperator}):
 * every case of {@link AbstractJdbcLockFenceTests}, ported: the first write of a key inserts its
 * fence row; a higher token is accepted and stored, an equal one accepted, a lower one rejected
 * with {@link StaleFencingTokenException} and the transaction's other write rolled back; the exact
 * statements the driver receives in each case (recorded by r2dbc-proxy); no statement outside a
 * reactive transaction, in a transaction of another ConnectionFactory, or for a lost grant;
 * guarded rows; multi-lock and READ grants; a zombie whose session expired cannot write after the
 * newer holder; a newer holder waits for a zombie that passed the fence first, then succeeds, with
 * a fence row and with a guarded row; what a holder reads after the fence under READ COMMITTED and
 * REPEATABLE READ; two first writes of a key never both insert and never fail on the key, also
 * from two applications at once. Each database subclass supplies a fresh database per test (an
 * R2DBC ConnectionFactory for the fence, and a JDBC DataSource on the same database for the
 * test's own checks), says how its sessions show a wait for a lock, and which statements a call
 * sends.
 */
abstract class AbstractR2dbcLockFenceTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	static final String ORDER_INSERT = "INSERT INTO orders (id) VALUES (:id)";

	private static final Duration LONG = Duration.ofSeconds(10);

	private Database database;

	private final List<String> statements = new CopyOnWriteArrayList<>();

	private ConnectionFactory connectionFactory;

	private DatabaseClient client;

	private R2dbcTransactionManager transactionManager;

	private TransactionalOperator transaction;

	/** The test's own checks, outside the fence's connections. */
	private JdbcTemplate jdbc;

	private R2dbcLockFence fence;

	private CuratorFramework clientA;

	private CuratorLockRegistry registryA;

	/** Application A. */
	private LockTemplate appA;

	private CuratorLockRegistry registryB;

	/** Application B: its own ZooKeeper session. */
	private LockTemplate appB;

	/** One database of a test: the fence's ConnectionFactory and a DataSource on the same database. */
	record Database(ConnectionFactory connectionFactory, DataSource dataSource) {
	}

	/**
	 * Create an empty database for one test.
	 * @return its ConnectionFactory and DataSource, a new connection each time
	 */
	abstract Database database();

	/**
	 * Shut down or drop a database that {@link #database()} created, after its test.
	 * @param database the database
	 */
	abstract void dropDatabase(Database database);

	/**
	 * Return how many sessions of the test's database run a statement that starts with the given
	 * text and wait (for a row the test keeps locked).
	 * @param jdbc a template on the test's database
	 * @param sqlPrefix the start of the statement's SQL
	 * @return the number of such sessions
	 */
	abstract int waitingStatements(JdbcTemplate jdbc, String sqlPrefix);

	/**
	 * Return the statement the driver receives for one of the fence's, with the driver's markers.
	 * @param named the statement with the fence's named markers ({@code :key}, {@code :token})
	 * @return the driver's statement
	 */
	abstract String driverSql(String named);

	/**
	 * Return the statements of the fence table (named markers) of an accepted call on a key whose
	 * fence row exists.
	 * @return the SQL, in order
	 */
	List<String> acceptedStatements() {
		return List.of(update());
	}

	/**
	 * Return the statements of the first write of a key.
	 * @return the SQL, in order
	 */
	List<String> firstWriteStatements() {
		return List.of(update(), insert());
	}

	/**
	 * Return the statements of a rejected call on a fence table.
	 * @return the SQL, in order
	 */
	List<String> rejectedStatements() {
		return List.of(update(), insert(), update(), select());
	}

	/**
	 * Return the statements of a rejected call on a guarded row (also one that does not exist).
	 * @return the SQL, in order
	 */
	List<String> guardedRejectedStatements() {
		return List.of(guardedUpdate(), guardedSelect());
	}

	/**
	 * Return the statements of an accepted call on a guarded row that already holds the grant's
	 * token.
	 * @return the SQL, in order
	 */
	List<String> guardedEqualStatements() {
		return List.of(guardedUpdate());
	}

	/**
	 * Return the start of the fence table statement that waits for a row another transaction
	 * locked.
	 * @return the start of its SQL
	 */
	String lockedRowStatementPrefix() {
		return "UPDATE zk_lock_fence";
	}

	/**
	 * Return whether the database fails a writer that waited at the fence for a transaction that
	 * then committed a change of the fence row, under REPEATABLE READ, rather than letting it pass.
	 * @return {@code false} by default (H2, MariaDB)
	 */
	boolean failsTheWaitingWriterUnderRepeatableRead() {
		return false;
	}

	String update() {
		return driverSql("UPDATE zk_lock_fence SET fencing_token = :token WHERE lock_path = :key AND fencing_token <= :token");
	}

	String insert() {
		return driverSql("INSERT INTO zk_lock_fence (lock_path, fencing_token) SELECT CAST(:key AS VARCHAR(1024)), "
				+ "CAST(:token AS BIGINT) WHERE NOT EXISTS (SELECT 1 FROM zk_lock_fence WHERE lock_path = :key)");
	}

	String select() {
		return driverSql("SELECT fencing_token FROM zk_lock_fence WHERE lock_path = :key");
	}

	String guardedUpdate() {
		return driverSql("UPDATE stock SET fencing_token = :token WHERE id = :key AND (fencing_token IS NULL OR "
				+ "fencing_token <= :token)");
	}

	String guardedSelect() {
		return driverSql("SELECT fencing_token FROM stock WHERE id = :key");
	}

	@BeforeEach
	void setUp() throws Exception {
		this.database = database();
		this.connectionFactory = recording(this.database.connectionFactory());
		this.client = DatabaseClient.create(this.connectionFactory);
		this.transactionManager = new R2dbcTransactionManager(this.connectionFactory);
		this.transaction = TransactionalOperator.create(this.transactionManager);
		this.jdbc = new JdbcTemplate(this.database.dataSource());
		this.fence = R2dbcLockFence.fenceTable(this.connectionFactory);
		String createTable = this.fence.createTableSql().block(LONG);
		assertThat(createTable).isEqualTo(JdbcLockFence.fenceTable(this.database.dataSource()).createTableSql());
		this.jdbc.execute(createTable);
		this.jdbc.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY)");
		this.jdbc.execute("CREATE TABLE stock (id BIGINT PRIMARY KEY, quantity INT NOT NULL, fencing_token BIGINT)");
		this.clientA = zooKeeper.newClient();
		this.registryA = new CuratorLockRegistry(this.clientA, "/locks", 100);
		this.appA = new LockTemplate(this.registryA, LONG);
		this.registryB = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.appB = new LockTemplate(this.registryB, LONG);
		this.statements.clear();
	}

	@AfterEach
	void tearDown() {
		this.registryA.close();
		this.registryB.close();
		dropDatabase(this.database);
	}

	/** The ConnectionFactory, each statement the driver receives recorded. */
	private ConnectionFactory recording(ConnectionFactory target) {
		return ProxyConnectionFactory.builder(target)
			.onAfterQuery((execution) -> execution.getQueries()
				.stream()
				.map(QueryInfo::getQuery)
				.forEach(this.statements::add))
			.build();
	}

	@Test
	void firstWriteOfAKeyInsertsItsFenceRow() {
		LockHandle grant = this.appA.acquire("/stock/apple", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			placeOrder(grant, "first");
			assertThat(this.statements).containsExactlyElementsOf(concat(firstWriteStatements(), orderInsert()));
			assertThat(storedToken("/locks/stock/apple")).isEqualTo(grant.fencingToken());
			assertThat(orders()).containsExactly("first");
		}
		finally {
			grant.release();
		}
	}

	@Test
	void higherTokenIsAcceptedAndStored() {
		long first = placeOrderUnderNewGrant(this.appA, "/stock/banana", "first");
		LockHandle next = this.appA.acquire("/stock/banana", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThat(next.fencingToken()).isGreaterThan(first);
			this.statements.clear();
			this.transaction.transactional(this.fence.advance(next)).block(LONG);
			assertThat(this.statements).containsExactlyElementsOf(acceptedStatements());
			assertThat(storedToken("/locks/stock/banana")).isEqualTo(next.fencingToken());
		}
		finally {
			next.release();
		}
	}

	@Test
	void equalTokenIsAccepted() {
		LockHandle grant = this.appA.acquire("/stock/cherry", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			placeOrder(grant, "first");
			this.statements.clear();
			placeOrder(grant, "second");
			assertThat(this.statements).containsExactlyElementsOf(concat(acceptedStatements(), orderInsert()));
			assertThat(storedToken("/locks/stock/cherry")).isEqualTo(grant.fencingToken());
			assertThat(orders()).containsExactlyInAnyOrder("first", "second");
		}
		finally {
			grant.release();
		}
	}

	@Test
	void lowerTokenIsRejectedAndItsTransactionRolledBack() {
		LockHandle old = this.appA.acquire("/stock/date", LockMode.EXCLUSIVE, Duration.ZERO);
		long oldToken = old.fencingToken();
		old.release();
		long newToken = placeOrderUnderNewGrant(this.appB, "/stock/date", "newer");
		this.statements.clear();

		assertThatExceptionOfType(StaleFencingTokenException.class)
			.isThrownBy(() -> this.transaction
				.transactional(insertOrder("stale").then(this.fence.advance(new ZombieGrant(old, oldToken))))
				.block(LONG))
			.satisfies((ex) -> {
				assertThat(ex).isInstanceOf(LockLostException.class)
					.hasMessageContaining("/locks/stock/date")
					.hasMessageContaining(Long.toString(oldToken))
					.hasMessageContaining(Long.toString(newToken));
				assertThat(ex.getKey()).isEqualTo("/locks/stock/date");
				assertThat(ex.getFencingToken()).isEqualTo(oldToken);
				assertThat(ex.getHighestToken()).hasValue(newToken);
			});
		assertThat(this.statements).containsExactlyElementsOf(concat(List.of(orderInsert()), rejectedStatements()));
		assertThat(orders()).containsExactly("newer");
		assertThat(storedToken("/locks/stock/date")).isEqualTo(newToken);
	}

	@Test
	void outsideATransactionFailsBeforeAnyStatement() {
		LockHandle grant = this.appA.acquire("/stock/elderberry", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThatIllegalStateException().isThrownBy(() -> this.fence.advance(grant).block(LONG))
				.withMessageContaining("No reactive transaction is active");
			assertThatIllegalStateException()
				.isThrownBy(() -> this.fence.advance(grant, "/locks/stock/elderberry").block(LONG));
			assertThat(this.statements).isEmpty();
			assertThat(fenceRows()).isZero();
		}
		finally {
			grant.release();
		}
	}

	@Test
	void transactionOfAnotherConnectionFactoryFailsBeforeAnyStatement() {
		Database other = database();
		TransactionalOperator otherTransaction = TransactionalOperator
			.create(new R2dbcTransactionManager(other.connectionFactory()));
		LockHandle grant = this.appA.acquire("/stock/fig", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThatIllegalStateException()
				.isThrownBy(() -> otherTransaction.transactional(this.fence.advance(grant)).block(LONG))
				.withMessageContaining("auto-commit");
			assertThat(this.statements).isEmpty();
			assertThat(fenceRows()).isZero();
		}
		finally {
			grant.release();
			dropDatabase(other);
		}
	}

	@Test
	void lostGrantFailsBeforeAnyStatement() throws Exception {
		LockHandle grant = this.appA.acquire("/stock/grape", LockMode.EXCLUSIVE, Duration.ZERO);
		zooKeeper.expireSession(this.clientA);
		await().atMost(LONG).until(() -> grant.state() == LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> placeOrder(grant, "lost"))
			.isNotInstanceOf(StaleFencingTokenException.class);
		assertThat(this.statements).isEmpty();
		assertThat(fenceRows()).isZero();
		assertThat(orders()).isEmpty();
		grant.release();
	}

	@Test
	void guardedRowKeepsTheHighestTokenInItsOwnColumn() {
		R2dbcLockFence guarded = R2dbcLockFence.guardedRows(this.connectionFactory, "stock", "id", "fencing_token");
		this.jdbc.update("INSERT INTO stock (id, quantity) VALUES (1, 10)");
		LockHandle old = this.appA.acquire("/stock/1", LockMode.EXCLUSIVE, Duration.ZERO);
		long oldToken = old.fencingToken();
		old.release();
		LockHandle grant = this.appB.acquire("/stock/1", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			this.statements.clear();
			// A NULL token: no write was fenced yet.
			sellOneGuarded(guarded, grant, 1L, () -> {
			});
			assertThat(this.statements).containsExactly(guardedUpdate(), driverSql(SELL_ONE));
			assertThat(this.jdbc.queryForMap("SELECT quantity, fencing_token FROM stock WHERE id = 1"))
				.containsValues(9, grant.fencingToken());

			this.statements.clear();
			assertThatExceptionOfType(StaleFencingTokenException.class)
				.isThrownBy(() -> sellOneGuarded(guarded, new ZombieGrant(old, oldToken), 1L, () -> {
				}))
				.satisfies((ex) -> {
					assertThat(ex.getKey()).isEqualTo(1L);
					assertThat(ex.getFencingToken()).isEqualTo(oldToken);
					assertThat(ex.getHighestToken()).hasValue(grant.fencingToken());
				});
			assertThat(this.statements).containsExactlyElementsOf(guardedRejectedStatements());
			assertThat(quantity(1)).isEqualTo(9);
		}
		finally {
			grant.release();
		}
	}

	@Test
	void equalTokenOfAGuardedRowIsAccepted() {
		R2dbcLockFence guarded = R2dbcLockFence.guardedRows(this.connectionFactory, "stock", "id", "fencing_token");
		this.jdbc.update("INSERT INTO stock (id, quantity) VALUES (4, 10)");
		LockHandle grant = this.appA.acquire("/stock/4", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			sellOneGuarded(guarded, grant, 4L, () -> {
			});
			this.statements.clear();
			this.transaction.transactional(guarded.advance(grant, 4L)).block(LONG);
			assertThat(this.statements).containsExactlyElementsOf(guardedEqualStatements());
			assertThat(this.jdbc.queryForMap("SELECT quantity, fencing_token FROM stock WHERE id = 4"))
				.containsValues(9, grant.fencingToken());
		}
		finally {
			grant.release();
		}
	}

	@Test
	void guardedRowThatDoesNotExistIsAnEmptyResult() {
		R2dbcLockFence guarded = R2dbcLockFence.guardedRows(this.connectionFactory, "stock", "id", "fencing_token");
		LockHandle grant = this.appA.acquire("/stock/2", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThatExceptionOfType(EmptyResultDataAccessException.class)
				.isThrownBy(() -> this.transaction.transactional(guarded.advance(grant, 2L)).block(LONG))
				.withMessageContaining("stock")
				.withMessageContaining("id = '2'");
			assertThat(this.statements).containsExactlyElementsOf(guardedRejectedStatements());
			assertThatIllegalStateException().isThrownBy(() -> guarded.advance(grant))
				.withMessageContaining("advance(grant, key)");
			assertThatIllegalStateException().isThrownBy(guarded::createTableSql);
		}
		finally {
			grant.release();
		}
	}

	@Test
	void multiLockAdvancesTheRowOfEveryKey() {
		LockHandle multi = this.appA.acquire(LockRequest.of(List.of("/cart/b", "/cart/a")).withWaitTime(Duration.ZERO));
		try {
			this.transaction.transactional(this.fence.advance(multi)).block(LONG);
			assertThat(this.statements).containsExactlyElementsOf(concat(firstWriteStatements(), firstWriteStatements()));
			assertThat(storedToken("/locks/cart/a")).isEqualTo(multi.parts().get(0).fencingToken());
			assertThat(storedToken("/locks/cart/b")).isEqualTo(multi.parts().get(1).fencingToken());
			this.statements.clear();
			assertThatIllegalArgumentException().isThrownBy(() -> this.fence.advance(multi, "/locks/cart/a"))
				.withMessageContaining("grant.parts()");
			this.transaction.transactional(this.fence.advance(multi.parts().get(0), "/locks/cart/a")).block(LONG);
			assertThat(this.statements).containsExactlyElementsOf(acceptedStatements());
		}
		finally {
			multi.release();
		}
	}

	@Test
	void readGrantIsRejected() {
		LockHandle read = this.appA.acquire("/stock/honeydew", LockMode.READ, Duration.ZERO);
		try {
			assertThatIllegalArgumentException().isThrownBy(() -> this.fence.advance(read))
				.withMessageContaining("READ");
			assertThat(this.statements).isEmpty();
		}
		finally {
			read.release();
		}
	}

	/**
	 * The zombie holder: A holds the lock and writes; its session expires; B is granted and writes
	 * with its higher token; then A, which has not noticed ({@link ZombieGrant}), writes with its
	 * old token and is rejected with its write rolled back; B's next write still passes.
	 */
	@Test
	void zombieWhoseSessionExpiredCannotWriteAfterTheNewHolder() throws Exception {
		LockHandle grantA = this.appA.acquire("/stock/kiwi", LockMode.EXCLUSIVE, Duration.ZERO);
		long tokenA = grantA.fencingToken();
		placeOrder(grantA, "a-before-pause");

		zooKeeper.expireSession(this.clientA);
		LockHandle grantB = this.appB.acquire("/stock/kiwi", LockMode.EXCLUSIVE, LONG);
		long tokenB = grantB.fencingToken();
		assertThat(tokenB).isGreaterThan(tokenA);
		placeOrder(grantB, "b");

		this.statements.clear();
		assertThatExceptionOfType(StaleFencingTokenException.class)
			.isThrownBy(() -> placeOrder(new ZombieGrant(grantA, tokenA), "a-after-pause"))
			.satisfies((ex) -> {
				assertThat(ex.getFencingToken()).isEqualTo(tokenA);
				assertThat(ex.getHighestToken()).hasValue(tokenB);
			});
		assertThat(this.statements).containsExactlyElementsOf(rejectedStatements());
		assertThat(orders()).containsExactlyInAnyOrder("a-before-pause", "b");
		assertThat(storedToken("/locks/stock/kiwi")).isEqualTo(tokenB);

		this.statements.clear();
		placeOrder(grantB, "b-again");
		assertThat(this.statements).containsExactlyElementsOf(concat(acceptedStatements(), orderInsert()));
		assertThat(orders()).containsExactlyInAnyOrder("a-before-pause", "b", "b-again");
		grantB.release();
		await().atMost(LONG).until(() -> grantA.state() == LockState.LOST);
		grantA.release();
	}

	/**
	 * The zombie passed the fence before the newer holder and its transaction is still open: the
	 * newer holder's advance waits on the row lock until the zombie's transaction ends, then
	 * succeeds, and its token is stored after the zombie's.
	 */
	@Test
	void newerHolderWaitsForTheZombieThatPassedTheFenceThenSucceeds() throws Exception {
		LockHandle grantA = this.appA.acquire("/stock/lemon", LockMode.EXCLUSIVE, Duration.ZERO);
		long tokenA = grantA.fencingToken();
		placeOrder(grantA, "a-before-pause");
		zooKeeper.expireSession(this.clientA);
		LockHandle grantB = this.appB.acquire("/stock/lemon", LockMode.EXCLUSIVE, LONG);
		long tokenB = grantB.fencingToken();

		CountDownLatch passed = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<Void> zombie = inNewThread(() -> {
			placeOrder(new ZombieGrant(grantA, tokenA), "a-after-pause", () -> {
				passed.countDown();
				awaitRelease(finish);
			});
			return null;
		});
		assertThat(passed.await(10, TimeUnit.SECONDS)).as("zombie passed the fence").isTrue();
		CompletableFuture<Void> newer = inNewThread(() -> {
			placeOrder(grantB, "b");
			return null;
		});
		await().atMost(LONG).until(() -> waitingStatements(this.jdbc, lockedRowStatementPrefix()) == 1);
		assertThat(newer).isNotDone();

		finish.countDown();
		zombie.get(10, TimeUnit.SECONDS);
		newer.get(10, TimeUnit.SECONDS);
		assertThat(orders()).containsExactlyInAnyOrder("a-before-pause", "a-after-pause", "b");
		assertThat(storedToken("/locks/stock/lemon")).isEqualTo(tokenB);
		grantB.release();
		await().atMost(LONG).until(() -> grantA.state() == LockState.LOST);
		grantA.release();
	}

	/**
	 * Two transactions write the first row of a key at once, with one token: the second one's
	 * insert waits for the first one's uncommitted row, then finds it and is accepted: never two
	 * rows, never a duplicate key.
	 */
	@Test
	void concurrentFirstWritesOfAKeyNeverBothInsert() throws Exception {
		LockHandle grant = this.appA.acquire("/stock/mango", LockMode.EXCLUSIVE, Duration.ZERO);
		long token = grant.fencingToken();
		CountDownLatch inserted = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<Void> first = inNewThread(() -> {
			placeOrder(new ZombieGrant(grant, token), "first", () -> {
				inserted.countDown();
				awaitRelease(finish);
			});
			return null;
		});
		assertThat(inserted.await(10, TimeUnit.SECONDS)).isTrue();
		CompletableFuture<Void> second = inNewThread(() -> {
			placeOrder(new ZombieGrant(grant, token), "second");
			return null;
		});
		await().atMost(LONG).until(() -> waitingStatements(this.jdbc, FenceTests.INSERT_PREFIX) == 1);
		finish.countDown();
		first.get(10, TimeUnit.SECONDS);
		second.get(10, TimeUnit.SECONDS);
		assertThat(orders()).containsExactlyInAnyOrder("first", "second");
		assertThat(fenceRows()).isOne();
		assertThat(storedToken("/locks/stock/mango")).isEqualTo(token);
		grant.release();
	}

	/**
	 * Two applications write the first row of a key at once, the older grant's (a zombie's) and
	 * the newer one's, one after the other: the second waits for the first and goes on as for an
	 * existing row; A after B is rejected as stale, B after A accepted.
	 */
	@Test
	void twoApplicationsWritingTheFirstRowOfAKeyAtOnceFailOnlyAsStale() throws Exception {
		Rivals olderFirst = rivals("/stock/nectarine");
		assertThat(firstWritesOneAfterTheOther(olderFirst.older(), olderFirst.newer())).isNull();
		assertThat(orders()).containsExactlyInAnyOrder("/stock/nectarine-older", "/stock/nectarine-newer");
		assertThat(storedToken("/locks/stock/nectarine")).isEqualTo(olderFirst.newer().fencingToken());
		olderFirst.newer().release();

		Rivals newerFirst = rivals("/stock/olive");
		assertThat(firstWritesOneAfterTheOther(newerFirst.newer(), newerFirst.older()))
			.isInstanceOf(StaleFencingTokenException.class);
		assertThat(orders()).contains("/stock/olive-newer").doesNotContain("/stock/olive-older");
		assertThat(storedToken("/locks/stock/olive")).isEqualTo(newerFirst.newer().fencingToken());
		newerFirst.newer().release();
	}

	/**
	 * Both first writes let go at the same moment, for several new keys: the newer grant's write
	 * always commits, the older one's commits or is rejected as stale, nothing else fails.
	 */
	@Test
	void twoApplicationsRacingForTheFirstRowOfAKeyFailOnlyAsStale() throws Exception {
		for (int round = 0; round < 10; round++) {
			String key = "/stock/papaya-" + round;
			Rivals rivals = rivals(key);
			CyclicBarrier start = new CyclicBarrier(2);
			CompletableFuture<Void> older = inNewThread(() -> {
				awaitBarrier(start);
				placeOrder(rivals.older(), key + "-older");
				return null;
			});
			CompletableFuture<Void> newer = inNewThread(() -> {
				awaitBarrier(start);
				placeOrder(rivals.newer(), key + "-newer");
				return null;
			});
			newer.get(10, TimeUnit.SECONDS);
			boolean olderCommitted;
			try {
				older.get(10, TimeUnit.SECONDS);
				olderCommitted = true;
			}
			catch (ExecutionException ex) {
				assertThat(ex).cause().isInstanceOf(StaleFencingTokenException.class);
				olderCommitted = false;
			}
			assertThat(orders()).contains(key + "-newer");
			assertThat(orders().contains(key + "-older")).isEqualTo(olderCommitted);
			assertThat(storedToken("/locks" + key)).isEqualTo(rivals.newer().fencingToken());
			rivals.newer().release();
		}
		assertThat(fenceRows()).isEqualTo(10);
	}

	/**
	 * "Fence before read", at each isolation level: a zombie passed the fence first, read the
	 * stock and wrote it less one, and keeps its transaction open; the newer holder fences, then
	 * reads. Once the zombie commits, the newer holder reads the zombie's write, or fails with a
	 * serialization error and writes nothing (REPEATABLE READ on PostgreSQL); then the zombie's
	 * next write is rejected.
	 */
	@ParameterizedTest
	@ValueSource(ints = { TransactionDefinition.ISOLATION_READ_COMMITTED,
			TransactionDefinition.ISOLATION_REPEATABLE_READ })
	void readAfterTheFenceSeesTheWriteOfTheZombieThatPassedFirst(int isolationLevel) throws Exception {
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition();
		definition.setIsolationLevel(isolationLevel);
		TransactionalOperator transaction = TransactionalOperator.create(this.transactionManager, definition);
		this.jdbc.update("INSERT INTO stock (id, quantity) VALUES (7, 10)");
		LockHandle grantA = this.appA.acquire("/stock/7", LockMode.EXCLUSIVE, Duration.ZERO);
		long tokenA = grantA.fencingToken();
		placeOrder(grantA, "a-before-pause");
		zooKeeper.expireSession(this.clientA);
		LockHandle grantB = this.appB.acquire("/stock/7", LockMode.EXCLUSIVE, LONG);
		ZombieGrant zombie = new ZombieGrant(grantA, tokenA);

		CountDownLatch passed = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<Integer> zombieRead = inNewThread(() -> takeOne(transaction, zombie, () -> {
			passed.countDown();
			awaitRelease(finish);
		}));
		assertThat(passed.await(10, TimeUnit.SECONDS)).as("zombie passed the fence").isTrue();
		CompletableFuture<Integer> newerRead = inNewThread(() -> takeOne(transaction, grantB, () -> {
		}));
		await().atMost(LONG).until(() -> waitingStatements(this.jdbc, lockedRowStatementPrefix()) == 1);
		assertThat(newerRead).isNotDone();
		finish.countDown();
		assertThat(zombieRead.get(10, TimeUnit.SECONDS)).isEqualTo(10);

		if (isolationLevel == TransactionDefinition.ISOLATION_REPEATABLE_READ
				&& failsTheWaitingWriterUnderRepeatableRead()) {
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> newerRead.get(10, TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOf(ConcurrencyFailureException.class);
			assertThat(quantity(7)).isEqualTo(9);
			assertThat(storedToken("/locks/stock/7")).isEqualTo(tokenA);
		}
		else {
			assertThat(newerRead.get(10, TimeUnit.SECONDS)).as("stock the newer holder read").isEqualTo(9);
			assertThat(quantity(7)).isEqualTo(8);
			assertThat(storedToken("/locks/stock/7")).isEqualTo(grantB.fencingToken());
			assertThatExceptionOfType(StaleFencingTokenException.class)
				.isThrownBy(() -> takeOne(transaction, zombie, () -> {
				}));
			assertThat(quantity(7)).isEqualTo(8);
		}
		grantB.release();
		await().atMost(LONG).until(() -> grantA.state() == LockState.LOST);
		grantA.release();
	}

	/**
	 * The guarded-row form of a zombie that passed the fence first: the newer holder's guarded
	 * update waits on the row lock until the zombie's transaction commits, then passes; the
	 * zombie's next write is rejected; the stock is down by exactly the two accepted writes.
	 */
	@Test
	void newerHolderOfAGuardedRowWaitsForTheZombieThatPassedThenSucceeds() throws Exception {
		R2dbcLockFence guarded = R2dbcLockFence.guardedRows(this.connectionFactory, "stock", "id", "fencing_token");
		this.jdbc.update("INSERT INTO stock (id, quantity) VALUES (3, 10)");
		LockHandle grantA = this.appA.acquire("/stock/3", LockMode.EXCLUSIVE, Duration.ZERO);
		long tokenA = grantA.fencingToken();
		zooKeeper.expireSession(this.clientA);
		LockHandle grantB = this.appB.acquire("/stock/3", LockMode.EXCLUSIVE, LONG);
		ZombieGrant zombie = new ZombieGrant(grantA, tokenA);

		CountDownLatch passed = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<Void> zombieWrite = inNewThread(() -> {
			sellOneGuarded(guarded, zombie, 3L, () -> {
				passed.countDown();
				awaitRelease(finish);
			});
			return null;
		});
		assertThat(passed.await(10, TimeUnit.SECONDS)).as("zombie passed the fence").isTrue();
		CompletableFuture<Void> newerWrite = inNewThread(() -> {
			sellOneGuarded(guarded, grantB, 3L, () -> {
			});
			return null;
		});
		await().atMost(LONG).until(() -> waitingStatements(this.jdbc, "UPDATE stock SET fencing_token") == 1);
		assertThat(newerWrite).isNotDone();
		finish.countDown();
		zombieWrite.get(10, TimeUnit.SECONDS);
		newerWrite.get(10, TimeUnit.SECONDS);
		assertThat(this.jdbc.queryForMap("SELECT quantity, fencing_token FROM stock WHERE id = 3")).containsValues(8,
				grantB.fencingToken());

		assertThatExceptionOfType(StaleFencingTokenException.class)
			.isThrownBy(() -> sellOneGuarded(guarded, zombie, 3L, () -> {
			}))
			.satisfies((ex) -> assertThat(ex.getHighestToken()).hasValue(grantB.fencingToken()));
		assertThat(quantity(3)).isEqualTo(8);
		grantB.release();
		await().atMost(LONG).until(() -> grantA.state() == LockState.LOST);
		grantA.release();
	}

	private static final String SELL_ONE = "UPDATE stock SET quantity = quantity - 1 WHERE id = :id";

	/** Both applications' grants of a new key: A's, released (a zombie's), and B's, held. */
	private record Rivals(ZombieGrant older, LockHandle newer) {
	}

	private Rivals rivals(String key) {
		LockHandle grantA = this.appA.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO);
		long tokenA = grantA.fencingToken();
		grantA.release();
		LockHandle grantB = this.appB.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(grantB.fencingToken()).isGreaterThan(tokenA);
		return new Rivals(new ZombieGrant(grantA, tokenA), grantB);
	}

	/**
	 * Two first writes of a new key: the first inserts the row and keeps its transaction open
	 * until the second waits for the row, then commits.
	 * @return how the second write failed, {@code null} if it committed
	 */
	private Throwable firstWritesOneAfterTheOther(LockHandle first, LockHandle second) throws Exception {
		CountDownLatch inserted = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<Void> firstWrite = inNewThread(() -> {
			placeOrder(first, orderOf(first), () -> {
				inserted.countDown();
				awaitRelease(finish);
			});
			return null;
		});
		assertThat(inserted.await(10, TimeUnit.SECONDS)).isTrue();
		CompletableFuture<Void> secondWrite = inNewThread(() -> {
			placeOrder(second, orderOf(second));
			return null;
		});
		await().atMost(LONG).until(() -> waitingStatements(this.jdbc, FenceTests.INSERT_PREFIX) == 1);
		assertThat(secondWrite).isNotDone();
		finish.countDown();
		firstWrite.get(10, TimeUnit.SECONDS);
		try {
			secondWrite.get(10, TimeUnit.SECONDS);
			return null;
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
	}

	private static String orderOf(LockHandle grant) {
		return grant.path().substring("/locks".length()) + ((grant instanceof ZombieGrant) ? "-older" : "-newer");
	}

	/**
	 * A read-modify-write of stock row {@code id} fenced by the fence table, fence first.
	 * @return the quantity read
	 */
	private int takeOne(TransactionalOperator transaction, LockHandle grant, Runnable beforeCommit) {
		long id = Long.parseLong(grant.path().substring(grant.path().lastIndexOf('/') + 1));
		return transaction.transactional(this.fence.advance(grant)
			.then(this.client.sql("SELECT quantity FROM stock WHERE id = :id")
				.bind("id", id)
				.map((row) -> row.get(0, Integer.class))
				.one())
			.flatMap((read) -> this.client.sql("UPDATE stock SET quantity = :quantity WHERE id = :id")
				.bind("quantity", read - 1)
				.bind("id", id)
				.then()
				.then(beforeCommit(beforeCommit))
				.thenReturn(read)))
			.block(LONG);
	}

	/** A guarded write: the row's fence, then take one from its quantity. */
	private void sellOneGuarded(R2dbcLockFence guarded, LockHandle grant, long id, Runnable beforeCommit) {
		this.transaction.transactional(guarded.advance(grant, id)
			.then(this.client.sql(SELL_ONE).bind("id", id).then())
			.then(beforeCommit(beforeCommit))).block(LONG);
	}

	/** A step before the commit that may block: on a thread of its own, never the driver's. */
	private static Mono<Void> beforeCommit(Runnable step) {
		return Mono.fromRunnable(step).subscribeOn(Schedulers.boundedElastic()).then();
	}

	private int quantity(long id) {
		return this.jdbc.queryForObject("SELECT quantity FROM stock WHERE id = ?", Integer.class, id);
	}

	private Mono<Void> insertOrder(String id) {
		return this.client.sql(ORDER_INSERT).bind("id", id).then();
	}

	private String orderInsert() {
		return driverSql(ORDER_INSERT);
	}

	/** A locked write in one reactive transaction: the fence first, then the write. */
	private void placeOrder(LockHandle grant, String id) {
		placeOrder(grant, id, () -> {
		});
	}

	private void placeOrder(LockHandle grant, String id, Runnable beforeCommit) {
		this.transaction.transactional(this.fence.advance(grant).then(insertOrder(id)).then(beforeCommit(beforeCommit)))
			.block(LONG);
	}

	private long placeOrderUnderNewGrant(LockTemplate app, String key, String id) {
		LockHandle grant = app.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			placeOrder(grant, id);
			return grant.fencingToken();
		}
		finally {
			grant.release();
		}
	}

	private long storedToken(String lockPath) {
		return this.jdbc.queryForObject("SELECT fencing_token FROM zk_lock_fence WHERE lock_path = ?", Long.class,
				lockPath);
	}

	private int fenceRows() {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM zk_lock_fence", Integer.class);
	}

	private List<String> orders() {
		return this.jdbc.queryForList("SELECT id FROM orders", String.class);
	}

}
