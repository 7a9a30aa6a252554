package io.github.zklock.transaction;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

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
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

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
 * What {@link JdbcLockFence} does on a database, with grants of a real ZooKeeper server and real
 * transactions ({@link DataSourceTransactionManager}): the first write of a key inserts its fence
 * row; a higher token is accepted and stored, an equal one accepted, a lower one rejected with
 * {@link StaleFencingTokenException} and the transaction's other write rolled back; the exact
 * statements of each case; no statement outside a transaction, in a transaction of another
 * DataSource, or for a lost grant; guarded rows keeping the token in their own column; multi-lock
 * and READ grants; a zombie holder whose session expired cannot write after the newer holder; a
 * newer holder waits for a zombie that passed the fence first, then succeeds, with a fence row and
 * with a guarded row; what a holder reads after the fence under READ COMMITTED and REPEATABLE READ;
 * two first writes of a key never both insert and never fail on the key, also from two
 * applications at once. Each database subclass runs them all: it supplies a fresh database per
 * test, says how its sessions show a wait for a lock, and, where its SQL differs from H2's, which
 * statements a call issues.
 */
abstract class AbstractJdbcLockFenceTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	static final String UPDATE = "UPDATE zk_lock_fence SET fencing_token = ? WHERE lock_path = ? AND fencing_token <= ?";

	static final String INSERT = "INSERT INTO zk_lock_fence (lock_path, fencing_token) SELECT CAST(? AS VARCHAR(1024)), "
			+ "CAST(? AS BIGINT) WHERE NOT EXISTS (SELECT 1 FROM zk_lock_fence WHERE lock_path = ?)";

	static final String SELECT = "SELECT fencing_token FROM zk_lock_fence WHERE lock_path = ?";

	static final String GUARDED_UPDATE = "UPDATE stock SET fencing_token = ? WHERE id = ? AND (fencing_token IS NULL OR fencing_token <= ?)";

	static final String GUARDED_SELECT = "SELECT fencing_token FROM stock WHERE id = ?";

	private static final Duration LONG = Duration.ofSeconds(10);

	private DataSource database;

	private RecordingDataSource dataSource;

	private DataSourceTransactionManager transactionManager;

	private JdbcTemplate jdbc;

	private TransactionTemplate transaction;

	private JdbcLockFence fence;

	private CuratorFramework clientA;

	private CuratorLockRegistry registryA;

	/** Application A. */
	private LockTemplate appA;

	private CuratorLockRegistry registryB;

	/** Application B: its own ZooKeeper session. */
	private LockTemplate appB;

	/**
	 * Create an empty database for one test.
	 * @return its DataSource, a new connection each time
	 */
	abstract DataSource database();

	/**
	 * Shut down or drop a database that {@link #database()} created, after its test.
	 * @param database its DataSource
	 */
	abstract void dropDatabase(DataSource database);

	/**
	 * Return how many sessions of the test's database run a statement that starts with the given
	 * text and waits (for a row the test keeps locked).
	 * @param jdbc a template on the test's database
	 * @param sqlPrefix the start of the statement's SQL
	 * @return the number of such sessions
	 */
	abstract int waitingStatements(JdbcTemplate jdbc, String sqlPrefix);

	/**
	 * Return the statements of an accepted call on a key whose fence row exists.
	 * @return the SQL, in order
	 */
	List<String> acceptedStatements() {
		return List.of(UPDATE);
	}

	/**
	 * Return the statements of the first write of a key.
	 * @return the SQL, in order
	 */
	List<String> firstWriteStatements() {
		return List.of(UPDATE, INSERT);
	}

	/**
	 * Return the statements of a rejected call on a fence table.
	 * @return the SQL, in order
	 */
	List<String> rejectedStatements() {
		return List.of(UPDATE, INSERT, UPDATE, SELECT);
	}

	/**
	 * Return the statements of a rejected call on a guarded row (also one that does not exist).
	 * @return the SQL, in order
	 */
	List<String> guardedRejectedStatements() {
		return List.of(GUARDED_UPDATE, GUARDED_SELECT);
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
	 * then committed a change of the fence row, under REPEATABLE READ (a serialization error),
	 * rather than letting it pass.
	 * @return {@code false} by default (H2, MariaDB)
	 */
	boolean failsTheWaitingWriterUnderRepeatableRead() {
		return false;
	}

	@BeforeEach
	void setUp() throws Exception {
		this.database = database();
		this.dataSource = new RecordingDataSource(this.database);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.transactionManager = new DataSourceTransactionManager(this.dataSource);
		this.transaction = new TransactionTemplate(this.transactionManager);
		this.fence = JdbcLockFence.fenceTable(this.dataSource);
		this.jdbc.execute(this.fence.createTableSql());
		this.jdbc.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY)");
		this.jdbc.execute("CREATE TABLE stock (id BIGINT PRIMARY KEY, quantity INT NOT NULL, fencing_token BIGINT)");
		this.clientA = zooKeeper.newClient();
		this.registryA = new CuratorLockRegistry(this.clientA, "/locks", 100);
		this.appA = new LockTemplate(this.registryA, LONG);
		this.registryB = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.appB = new LockTemplate(this.registryB, LONG);
		this.dataSource.clear();
	}

	@AfterEach
	void tearDown() {
		this.registryA.close();
		this.registryB.close();
		dropDatabase(this.database);
	}

	@Test
	void firstWriteOfAKeyInsertsItsFenceRow() {
		LockHandle grant = this.appA.acquire("/stock/apple", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			placeOrder(grant, "first");
			assertThat(this.dataSource.statements())
				.containsExactlyElementsOf(concat(firstWriteStatements(), "INSERT INTO orders (id) VALUES (?)"));
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
			this.dataSource.clear();
			this.transaction.executeWithoutResult((status) -> this.fence.advance(next));
			assertThat(this.dataSource.statements()).containsExactlyElementsOf(acceptedStatements());
			assertThat(storedToken("/locks/stock/banana")).isEqualTo(next.fencingToken());
		}
		finally {
			next.release();
		}
	}

	@Test
	void equalTokenIsAccepted() {
		// Grants handed over locally share their znode's token (DESIGN.md, semantics 8); so do the
		// writes of one grant.
		LockHandle grant = this.appA.acquire("/stock/cherry", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			placeOrder(grant, "first");
			this.dataSource.clear();
			placeOrder(grant, "second");
			assertThat(this.dataSource.statements())
				.containsExactlyElementsOf(concat(acceptedStatements(), "INSERT INTO orders (id) VALUES (?)"));
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
		this.dataSource.clear();

		assertThatExceptionOfType(StaleFencingTokenException.class).isThrownBy(() -> this.transaction
			.executeWithoutResult((status) -> {
				this.jdbc.update("INSERT INTO orders (id) VALUES (?)", "stale");
				this.fence.advance(new ZombieGrant(old, oldToken));
			})).satisfies((ex) -> {
				assertThat(ex).isInstanceOf(LockLostException.class)
					.hasMessageContaining("/locks/stock/date")
					.hasMessageContaining(Long.toString(oldToken))
					.hasMessageContaining(Long.toString(newToken));
				assertThat(ex.getKey()).isEqualTo("/locks/stock/date");
				assertThat(ex.getPath()).isEqualTo("/locks/stock/date");
				assertThat(ex.getMode()).isEqualTo(LockMode.EXCLUSIVE);
				assertThat(ex.getFencingToken()).isEqualTo(oldToken);
				assertThat(ex.getHighestToken()).hasValue(newToken);
			});
		assertThat(this.dataSource.statements())
			.containsExactlyElementsOf(concat(List.of("INSERT INTO orders (id) VALUES (?)"), rejectedStatements()));
		assertThat(orders()).containsExactly("newer");
		assertThat(storedToken("/locks/stock/date")).isEqualTo(newToken);
	}

	@Test
	void outsideATransactionFailsBeforeAnyStatement() {
		LockHandle grant = this.appA.acquire("/stock/elderberry", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThatIllegalStateException().isThrownBy(() -> this.fence.advance(grant))
				.withMessageContaining("No transaction is active");
			assertThatIllegalStateException().isThrownBy(() -> this.fence.advance(grant, "/locks/stock/elderberry"));
			assertThat(this.dataSource.statements()).isEmpty();
			assertThat(fenceRows()).isZero();
		}
		finally {
			grant.release();
		}
	}

	@Test
	void transactionOfAnotherDataSourceFailsBeforeAnyStatement() {
		DataSource other = database();
		TransactionTemplate otherTransaction = new TransactionTemplate(new DataSourceTransactionManager(other));
		LockHandle grant = this.appA.acquire("/stock/fig", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThatIllegalStateException()
				.isThrownBy(() -> otherTransaction.executeWithoutResult((status) -> this.fence.advance(grant)))
				.withMessageContaining("auto-commit");
			assertThat(this.dataSource.statements()).isEmpty();
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
		assertThat(this.dataSource.statements()).isEmpty();
		assertThat(fenceRows()).isZero();
		assertThat(orders()).isEmpty();
		grant.release();
	}

	@Test
	void guardedRowKeepsTheHighestTokenInItsOwnColumn() {
		JdbcLockFence guarded = JdbcLockFence.guardedRows(this.dataSource, "stock", "id", "fencing_token");
		this.jdbc.update("INSERT INTO stock (id, quantity) VALUES (1, 10)");
		LockHandle old = this.appA.acquire("/stock/1", LockMode.EXCLUSIVE, Duration.ZERO);
		long oldToken = old.fencingToken();
		old.release();
		LockHandle grant = this.appB.acquire("/stock/1", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			this.dataSource.clear();
			// A NULL token: no write was fenced yet.
			this.transaction.executeWithoutResult((status) -> {
				guarded.advance(grant, 1L);
				this.jdbc.update("UPDATE stock SET quantity = quantity - 1 WHERE id = ?", 1L);
			});
			assertThat(this.dataSource.statements()).containsExactly(GUARDED_UPDATE,
					"UPDATE stock SET quantity = quantity - 1 WHERE id = ?");
			assertThat(this.jdbc.queryForMap("SELECT quantity, fencing_token FROM stock WHERE id = 1"))
				.containsValues(9, grant.fencingToken());

			this.dataSource.clear();
			assertThatExceptionOfType(StaleFencingTokenException.class)
				.isThrownBy(() -> this.transaction.executeWithoutResult((status) -> {
					guarded.advance(new ZombieGrant(old, oldToken), 1L);
					this.jdbc.update("UPDATE stock SET quantity = quantity - 1 WHERE id = ?", 1L);
				}))
				.satisfies((ex) -> {
					assertThat(ex.getKey()).isEqualTo(1L);
					assertThat(ex.getFencingToken()).isEqualTo(oldToken);
					assertThat(ex.getHighestToken()).hasValue(grant.fencingToken());
				});
			assertThat(this.dataSource.statements()).containsExactlyElementsOf(guardedRejectedStatements());
			assertThat(this.jdbc.queryForObject("SELECT quantity FROM stock WHERE id = 1", Integer.class)).isEqualTo(9);
		}
		finally {
			grant.release();
		}
	}

	@Test
	void guardedRowThatDoesNotExistIsAnEmptyResult() {
		JdbcLockFence guarded = JdbcLockFence.guardedRows(this.dataSource, "stock", "id", "fencing_token");
		LockHandle grant = this.appA.acquire("/stock/2", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThatExceptionOfType(EmptyResultDataAccessException.class)
				.isThrownBy(() -> this.transaction.executeWithoutResult((status) -> guarded.advance(grant, 2L)))
				.withMessageContaining("stock")
				.withMessageContaining("id = '2'");
			assertThat(this.dataSource.statements()).containsExactlyElementsOf(guardedRejectedStatements());
			assertThatIllegalStateException()
				.isThrownBy(() -> this.transaction.executeWithoutResult((status) -> guarded.advance(grant)))
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
			this.transaction.executeWithoutResult((status) -> this.fence.advance(multi));
			assertThat(this.dataSource.statements())
				.containsExactlyElementsOf(concat(firstWriteStatements(), firstWriteStatements()));
			assertThat(storedToken("/locks/cart/a")).isEqualTo(multi.parts().get(0).fencingToken());
			assertThat(storedToken("/locks/cart/b")).isEqualTo(multi.parts().get(1).fencingToken());
			this.dataSource.clear();
			assertThatIllegalArgumentException()
				.isThrownBy(() -> this.transaction
					.executeWithoutResult((status) -> this.fence.advance(multi, "/locks/cart/a")))
				.withMessageContaining("grant.parts()");
			this.transaction.executeWithoutResult((status) -> this.fence.advance(multi.parts().get(0), "/locks/cart/a"));
			assertThat(this.dataSource.statements()).containsExactlyElementsOf(acceptedStatements());
		}
		finally {
			multi.release();
		}
	}

	@Test
	void readGrantIsRejected() {
		LockHandle read = this.appA.acquire("/stock/honeydew", LockMode.READ, Duration.ZERO);
		try {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> this.transaction.executeWithoutResult((status) -> this.fence.advance(read)))
				.withMessageContaining("READ");
			assertThat(this.dataSource.statements()).isEmpty();
		}
		finally {
			read.release();
		}
	}

	/**
	 * The zombie holder: application A holds the lock and writes; its session expires (as during a
	 * pause longer than the session timeout); application B is granted and writes with its higher
	 * token; then A, which has not noticed (see {@link ZombieGrant}), writes with its old token, and
	 * is rejected with its write rolled back; B's next write still passes.
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

		this.dataSource.clear();
		assertThatExceptionOfType(StaleFencingTokenException.class)
			.isThrownBy(() -> placeOrder(new ZombieGrant(grantA, tokenA), "a-after-pause"))
			.satisfies((ex) -> {
				assertThat(ex.getFencingToken()).isEqualTo(tokenA);
				assertThat(ex.getHighestToken()).hasValue(tokenB);
			});
		assertThat(this.dataSource.statements()).containsExactlyElementsOf(rejectedStatements());
		assertThat(orders()).containsExactlyInAnyOrder("a-before-pause", "b");
		assertThat(storedToken("/locks/stock/kiwi")).isEqualTo(tokenB);

		this.dataSource.clear();
		placeOrder(grantB, "b-again");
		assertThat(this.dataSource.statements())
			.containsExactlyElementsOf(concat(acceptedStatements(), "INSERT INTO orders (id) VALUES (?)"));
		assertThat(orders()).containsExactlyInAnyOrder("a-before-pause", "b", "b-again");
		assertThat(storedToken("/locks/stock/kiwi")).isEqualTo(tokenB);
		grantB.release();
		await().atMost(LONG).until(() -> grantA.state() == LockState.LOST);
		grantA.release();
	}

	/**
	 * The zombie passed the fence before the newer holder (its token was still the highest) and its
	 * transaction is still open: the newer holder's advance waits on the row lock until the zombie's
	 * transaction ends, then succeeds, and its token is stored after the zombie's.
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
	 * Two transactions write the first row of a key at once, with one token (grants handed over
	 * within one application). The second one's insert waits for the first one's uncommitted row;
	 * once the first commits, the second finds the row and is accepted: never two rows, never a
	 * duplicate key.
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
	 * Two applications write the first row of a key at once: A, whose grant is older (a zombie by
	 * then), and B, granted after it. Whichever inserts first, the other waits for it and then
	 * goes on as for an existing row, with no duplicate key: A after B is rejected as stale, B
	 * after A is accepted. Either way B's write commits and the stored token is B's, the higher of
	 * those that committed.
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
	 * As {@link #twoApplicationsWritingTheFirstRowOfAKeyAtOnceFailOnlyAsStale()}, with both
	 * transactions let go at the same moment, for several new keys: the newer grant's write always
	 * commits, the older one's commits or is rejected as stale, nothing else fails, and the stored
	 * token is the newer grant's.
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
	 * The rule "fence before read", at each isolation level: a zombie passed the fence first, read
	 * the stock and wrote it less one, and keeps its transaction open; the newer holder's
	 * transaction fences first and then reads the stock to write it less one. Its fence waits for
	 * the zombie's transaction; once that commits, the newer holder either reads the zombie's write
	 * (READ COMMITTED; H2 and MariaDB also under REPEATABLE READ) or fails with a serialization
	 * error and writes nothing (REPEATABLE READ on PostgreSQL): it never acts on the stock as it
	 * was before the zombie's write. Then the zombie's next write is rejected.
	 */
	@ParameterizedTest
	@ValueSource(ints = { TransactionDefinition.ISOLATION_READ_COMMITTED,
			TransactionDefinition.ISOLATION_REPEATABLE_READ })
	void readAfterTheFenceSeesTheWriteOfTheZombieThatPassedFirst(int isolationLevel) throws Exception {
		TransactionTemplate transaction = new TransactionTemplate(this.transactionManager);
		transaction.setIsolationLevel(isolationLevel);
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
	 * The guarded-row form of a zombie that passed the fence first: the zombie's guarded update
	 * locks the stock row, the newer holder's guarded update waits on that row lock until the
	 * zombie's transaction commits, then passes and stores its token; the zombie's next write is
	 * rejected. Nothing is lost: the stock is down by exactly the two accepted writes.
	 */
	@Test
	void newerHolderOfAGuardedRowWaitsForTheZombieThatPassedThenSucceeds() throws Exception {
		JdbcLockFence guarded = JdbcLockFence.guardedRows(this.dataSource, "stock", "id", "fencing_token");
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
	 * until the second waits for the row, then commits. Orders are named after the key and
	 * "-older" or "-newer".
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
	 * A read-modify-write of stock row {@code id} fenced by the fence table, fence first: take one
	 * from the quantity read after the fence.
	 * @return the quantity read
	 */
	private int takeOne(TransactionTemplate transaction, LockHandle grant, Runnable beforeCommit) {
		long id = Long.parseLong(grant.path().substring(grant.path().lastIndexOf('/') + 1));
		return transaction.execute((status) -> {
			this.fence.advance(grant);
			int read = quantity(id);
			this.jdbc.update("UPDATE stock SET quantity = ? WHERE id = ?", read - 1, id);
			beforeCommit.run();
			return read;
		});
	}

	/** A guarded write: the row's fence, then take one from its quantity. */
	private void sellOneGuarded(JdbcLockFence guarded, LockHandle grant, long id, Runnable beforeCommit) {
		this.transaction.executeWithoutResult((status) -> {
			guarded.advance(grant, id);
			this.jdbc.update("UPDATE stock SET quantity = quantity - 1 WHERE id = ?", id);
			beforeCommit.run();
		});
	}

	private int quantity(long id) {
		return this.jdbc.queryForObject("SELECT quantity FROM stock WHERE id = ?", Integer.class, id);
	}

	/** A locked write in one transaction: the fence first, then the write. */
	private void placeOrder(LockHandle grant, String id) {
		placeOrder(grant, id, () -> {
		});
	}

	private void placeOrder(LockHandle grant, String id, Runnable beforeCommit) {
		this.transaction.executeWithoutResult((status) -> {
			this.fence.advance(grant);
			this.jdbc.update("INSERT INTO orders (id) VALUES (?)", id);
			beforeCommit.run();
		});
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
