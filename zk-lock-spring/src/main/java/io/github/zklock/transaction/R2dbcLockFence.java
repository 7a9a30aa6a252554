package io.github.zklock.transaction;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.transaction.FenceSql.Dialect;
import io.github.zklock.transaction.FenceSql.Markers;
import io.github.zklock.transaction.FenceSql.Statements;

/**
 * The reactive counterpart of {@link JdbcLockFence}: fencing checked by an R2DBC store, in a
 * reactive transaction, without blocking a thread on the database. Subscribe to
 * {@link #advance(LockHandle)} (or {@link #advance(LockHandle, Object)}) in the transaction of
 * the write, before the write (and before reading what the write depends on, as
 * {@link JdbcLockFence} explains): it completes once the highest token seen for the key was moved
 * up to the grant's {@linkplain LockHandle#fencingToken() token}, or fails with
 * {@link StaleFencingTokenException} when the store has already seen a higher one, which rolls the
 * reactive transaction back when it propagates.
 *
 * <pre class="code">
 * return transactionalOperator.transactional(
 *         fence.advance(grant).then(repository.save(order)));
 * </pre>
 *
 * <p>The same two forms as {@link JdbcLockFence}: a {@linkplain #fenceTable(ConnectionFactory)
 * fence table} keyed by the lock path ({@value #DEFAULT_TABLE} by default, the DDL of
 * {@link #createTableSql()}), or {@linkplain #guardedRows(ConnectionFactory, String, String, String)
 * guarded rows} that keep the token in a {@code BIGINT} column of their own. The statements, the
 * order in which they are sent, what each outcome means, the dialects (H2, PostgreSQL, MariaDB and
 * MySQL, any other database) and why the fence is atomic are {@link JdbcLockFence}'s, word for
 * word: only the bind markers differ (named, {@code :key} and {@code :token}, which Spring's
 * {@link DatabaseClient} turns into the driver's markers, {@code $1} on PostgreSQL and H2, {@code ?}
 * on MariaDB). The fence learns the database from the product name in the metadata of the first
 * connection it uses.
 *
 * <p>Transactions: {@code advance} must run in an actual reactive transaction on this instance's
 * {@link ConnectionFactory} (an {@code R2dbcTransactionManager} on it, through
 * {@code @Transactional} on a reactive method or a {@code TransactionalOperator}), and the write
 * it guards in the same transaction: it uses a {@link DatabaseClient} on the ConnectionFactory,
 * which joins that transaction through the subscriber's context. It fails with
 * {@link IllegalStateException} before any statement when no reactive transaction is active, or
 * when the connection it gets is in auto-commit mode (a transaction on another ConnectionFactory).
 *
 * <p>Tokens: the grant's token is read on {@link Schedulers#boundedElastic()}: an EXCLUSIVE
 * (reentrant) grant knows it from its create, but the first call for another kind of grant sends
 * one {@code exists} request and waits for its answer ({@link LockHandle#fencingToken()}), which a
 * reactive transaction's event-loop thread must not do. The statements then run on the driver's
 * threads.
 *
 * <p>Grants and keys: as {@link JdbcLockFence}. EXCLUSIVE and WRITE grants and permits; READ grants
 * are rejected. A multi-lock advances the row of every part, in the parts' order, with a fence
 * table; {@link #advance(LockHandle, Object)} needs a single grant.
 *
 * <p>Instances are immutable and thread-safe: share one per ConnectionFactory and table. Nothing
 * happens until the returned {@link Mono} is subscribed to.
 *
 * @see JdbcLockFence
 * @see LockHandle#fencingToken()
 * @see ReactiveLockCommitGuard
 */
public final class R2dbcLockFence {

	/** Name of the fence table unless another is given. */
	public static final String DEFAULT_TABLE = FenceSql.DEFAULT_TABLE;

	private static final Log logger = LogFactory.getLog(R2dbcLockFence.class);

	private final ConnectionFactory connectionFactory;

	private final DatabaseClient databaseClient;

	private final String tableName;

	private final String keyColumn;

	private final String tokenColumn;

	private final boolean fenceTable;

	/** The statements for the database behind the ConnectionFactory, once a connection told which. */
	private volatile @Nullable Statements statements;

	private R2dbcLockFence(ConnectionFactory connectionFactory, String tableName, String keyColumn,
			String tokenColumn, boolean fenceTable) {
		Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
		this.connectionFactory = connectionFactory;
		this.databaseClient = DatabaseClient.create(connectionFactory);
		this.tableName = FenceSql.checkIdentifier(FenceSql.TABLE, "Table name", tableName);
		FenceSql.checkColumns(keyColumn, tokenColumn);
		this.keyColumn = keyColumn;
		this.tokenColumn = tokenColumn;
		this.fenceTable = fenceTable;
	}

	/**
	 * Create a fence on the table {@value #DEFAULT_TABLE}, keyed by lock path (see
	 * {@link #createTableSql()}).
	 * @param connectionFactory the ConnectionFactory of the writes to fence
	 * @return the fence
	 */
	public static R2dbcLockFence fenceTable(ConnectionFactory connectionFactory) {
		return fenceTable(connectionFactory, DEFAULT_TABLE);
	}

	/**
	 * Create a fence on a table of the shape {@link #createTableSql()} gives: {@code lock_path
	 * VARCHAR(1024) PRIMARY KEY, fencing_token BIGINT NOT NULL}.
	 * @param connectionFactory the ConnectionFactory of the writes to fence
	 * @param tableName the table: a plain SQL identifier, optionally qualified by schema (and
	 * catalog) with dots, unquoted (letters, digits, underscores; not starting with a digit)
	 * @return the fence
	 * @throws IllegalArgumentException if the table name is not such an identifier
	 */
	public static R2dbcLockFence fenceTable(ConnectionFactory connectionFactory, String tableName) {
		return new R2dbcLockFence(connectionFactory, tableName, FenceSql.LOCK_PATH_COLUMN, FenceSql.TOKEN_COLUMN,
				true);
	}

	/**
	 * Create a fence that keeps the token in the guarded rows themselves: each row of the table has
	 * a {@code BIGINT} token column, and {@link #advance(LockHandle, Object)} names the row by the
	 * value of its key column. The row must exist.
	 * @param connectionFactory the ConnectionFactory of the writes to fence
	 * @param tableName the table: a plain SQL identifier, optionally qualified with dots, unquoted
	 * @param keyColumn the column that identifies the row: a plain, unqualified, unquoted identifier
	 * @param tokenColumn the {@code BIGINT} column that keeps the highest token: a plain identifier,
	 * not the key column
	 * @return the fence
	 * @throws IllegalArgumentException if a name is not such an identifier, or both columns are one
	 */
	public static R2dbcLockFence guardedRows(ConnectionFactory connectionFactory, String tableName,
			String keyColumn, String tokenColumn) {
		return new R2dbcLockFence(connectionFactory, tableName, keyColumn, tokenColumn, false);
	}

	/**
	 * Advance the fence of the grant's lock path (fence table only): accept the grant's token if no
	 * higher one was seen for the path, else reject it. For a multi-lock, the path of every part
	 * with that part's token, in the parts' order.
	 * @param grant the grant the caller's write runs under, held
	 * @return completes empty once the token is accepted (nothing is sent before a subscription); fails
	 * with {@link StaleFencingTokenException} if the store has seen a higher token for
	 * the path (let it propagate: the transaction rolls back); {@link LockLostException} if the
	 * grant is lost or in doubt (no statement was sent); {@link IllegalStateException} if no
	 * reactive transaction is active on this ConnectionFactory (no statement was sent) or the grant
	 * was released; {@link org.springframework.dao.DataAccessException} if the database fails, for
	 * example with a lock timeout, or, on a database other than PostgreSQL, H2 and MariaDB,
	 * {@link DuplicateKeyException} when another transaction wrote the first row of the path at the
	 * same time; {@link io.github.zklock.LockException} if ZooKeeper cannot be reached to read the
	 * token of a grant that does not know it yet
	 * @throws IllegalStateException at once, if this fence keeps tokens in guarded rows, which need
	 * the row's key ({@link #advance(LockHandle, Object)})
	 * @throws IllegalArgumentException at once, if the grant (or a part of it) is a READ grant, or a
	 * lock path is longer than 1024 characters
	 */
	public Mono<Void> advance(LockHandle grant) {
		Objects.requireNonNull(grant, "grant must not be null");
		if (!this.fenceTable) {
			throw new IllegalStateException("The guarded rows of " + this.tableName
					+ " keep their own tokens: name the row with advance(grant, key)");
		}
		List<LockHandle> parts = grant.parts();
		for (LockHandle part : parts) {
			FenceSql.checkMode(part);
			FenceSql.fenceKey(part.path());
		}
		return checkTransaction().then(tokens(parts)).flatMap((tokens) -> checkConnection()
			.flatMap((sql) -> Flux.range(0, parts.size())
				.concatMap((i) -> fence(sql, parts.get(i), parts.get(i).path(), tokens[i]))
				.then()));
	}

	/**
	 * Advance the fence of one key: accept the grant's token if no higher one was seen for the key,
	 * else reject it.
	 * @param grant the grant the caller's write runs under, held; a single grant (a part of a
	 * multi-lock, not the multi-lock)
	 * @param key with a fence table, the row's key ({@code toString()}, typically the lock path or
	 * key); with guarded rows, the value of the guarded row's key column, bound as given
	 * @return completes empty once the token is accepted; fails as {@link #advance(LockHandle)}'s
	 * does, and with {@link EmptyResultDataAccessException} if the guarded row does not exist (no row
	 * was changed)
	 * @throws IllegalArgumentException at once, if the grant is a multi-lock or a READ grant, or a
	 * fence table key is empty or longer than 1024 characters
	 */
	public Mono<Void> advance(LockHandle grant, Object key) {
		Objects.requireNonNull(grant, "grant must not be null");
		Objects.requireNonNull(key, "key must not be null");
		if (grant.parts().size() > 1) {
			throw new IllegalArgumentException(FenceSql.multiLockForOneKey(grant, key));
		}
		FenceSql.checkMode(grant);
		Object boundKey = this.fenceTable ? FenceSql.fenceKey(key.toString()) : key;
		return checkTransaction().then(tokens(List.of(grant)))
			.flatMap((tokens) -> checkConnection().flatMap((sql) -> fence(sql, grant, boundKey, tokens[0])));
	}

	/**
	 * Return the DDL of this fence's table, for a schema script or a start-up initializer: the
	 * statement {@link JdbcLockFence#createTableSql()} gives for the same database. The first call
	 * of a fence that has not used its ConnectionFactory yet takes a connection to learn the
	 * database.
	 * @return the statement
	 * @throws IllegalStateException at once, if this fence keeps tokens in guarded rows (the
	 * application's own table)
	 */
	public Mono<String> createTableSql() {
		if (!this.fenceTable) {
			throw new IllegalStateException("The guarded rows live in the application's table " + this.tableName
					+ ": add a BIGINT column " + this.tokenColumn + " there");
		}
		Statements sql = this.statements;
		if (sql != null) {
			return Mono.just(sql.createTable());
		}
		return this.databaseClient.inConnection((connection) -> Mono.just(statements(connection)))
			.map(Statements::createTable);
	}

	/**
	 * Return the table that keeps the tokens.
	 * @return the table name, as given
	 */
	public String getTableName() {
		return this.tableName;
	}

	/**
	 * Return whether this fence keeps the tokens in a fence table keyed by lock path, rather than in
	 * guarded rows.
	 * @return {@code true} for a fence table
	 */
	public boolean isFenceTable() {
		return this.fenceTable;
	}

	/** The statements, as {@link JdbcLockFence}'s: accept, else read what the store has and reject. */
	private Mono<Void> fence(Statements sql, LockHandle grant, Object key, long token) {
		Mono<Boolean> accepted;
		String upsert = sql.upsert();
		if (upsert != null) {
			accepted = execute(upsert, key, token).thenReturn(false);
		}
		else if (sql.insert() == null) {
			accepted = update(sql, key, token);
		}
		else {
			// The first write of the key inserts; another transaction may have committed the first
			// row after our update looked: update once more.
			accepted = update(sql, key, token).flatMap((updated) -> updated ? Mono.just(true)
					: insert(sql, key, token)
						.flatMap((inserted) -> inserted ? Mono.just(true) : update(sql, key, token)));
		}
		return accepted.flatMap((done) -> done ? Mono.<Void>empty() : reject(sql, grant, key, token));
	}

	private Mono<Void> reject(Statements sql, LockHandle grant, Object key, long token) {
		return this.databaseClient.sql(sql.select())
			.bind("key", key)
			.map((row) -> Optional.ofNullable(row.get(0, Long.class)))
			.all()
			.collectList()
			.flatMap((stored) -> {
				if (stored.isEmpty()) {
					return Mono.error(new EmptyResultDataAccessException("No row of " + this.tableName + " has "
							+ this.keyColumn + " = '" + key + "': a guarded row must exist before it is fenced", 1));
				}
				Long highest = stored.get(0).orElse(null);
				if (sql.dialect() == Dialect.MARIADB && highest != null && highest == token) {
					// Read with FOR UPDATE after our upsert or update: the row is ours and holds our token.
					return Mono.empty();
				}
				StaleFencingTokenException stale = new StaleFencingTokenException(grant, key, token, highest);
				if (logger.isDebugEnabled()) {
					logger.debug(stale.getMessage() + " (" + this.tableName + ")");
				}
				return Mono.error(stale);
			});
	}

	private Mono<Boolean> update(Statements sql, Object key, long token) {
		return execute(sql.update(), key, token).map((rows) -> rows == 1);
	}

	private Mono<Boolean> insert(Statements sql, Object key, long token) {
		return execute(Objects.requireNonNull(sql.insert()), key, token).map((rows) -> rows == 1)
			.onErrorResume(DuplicateKeyException.class, (ex) -> {
				if (sql.dialect() != Dialect.H2) {
					return Mono.error(ex);
				}
				// A concurrent transaction committed the key's first row while this insert waited for
				// it. H2 undoes only the failed statement, so the transaction goes on with the update.
				return Mono.just(false);
			});
	}

	private Mono<Long> execute(String statement, Object key, long token) {
		return this.databaseClient.sql(statement).bind("key", key).bind("token", token).fetch().rowsUpdated();
	}

	/** The grants' tokens, read where waiting for ZooKeeper blocks no event loop. */
	private static Mono<long[]> tokens(List<LockHandle> parts) {
		return Mono.fromCallable(() -> {
			long[] tokens = new long[parts.size()];
			for (int i = 0; i < tokens.length; i++) {
				tokens[i] = parts.get(i).fencingToken();
			}
			return tokens;
		}).subscribeOn(Schedulers.boundedElastic());
	}

	private static Mono<Void> checkTransaction() {
		return TransactionSynchronizationManager.forCurrentTransaction()
			.onErrorMap(NoTransactionException.class, (ex) -> noTransaction())
			.flatMap((manager) -> manager.isActualTransactionActive() ? Mono.<Void>empty()
					: Mono.error(noTransaction()));
	}

	private static IllegalStateException noTransaction() {
		return new IllegalStateException("No reactive transaction is active: subscribe to advance in the transaction "
				+ "of the write it guards (an auto-committed fence protects nothing)");
	}

	/**
	 * Rejects a connection in auto-commit (the active transaction is not this ConnectionFactory's),
	 * and returns the statements for its database.
	 */
	private Mono<Statements> checkConnection() {
		return this.databaseClient.inConnection((connection) -> {
			if (connection.isAutoCommit()) {
				return Mono.error(new IllegalStateException("The active transaction does not cover the ConnectionFactory "
						+ this.connectionFactory + " (its connection is in auto-commit): run advance in a transaction "
						+ "of that ConnectionFactory"));
			}
			return Mono.just(statements(connection));
		});
	}

	private Statements statements(Connection connection) {
		Statements sql = this.statements;
		if (sql == null) {
			Dialect dialect = Dialect.of(connection.getMetadata().getDatabaseProductName());
			sql = Statements.of(dialect, Markers.NAMED, this.tableName, this.keyColumn, this.tokenColumn,
					this.fenceTable);
			this.statements = sql;
		}
		return sql;
	}

	@Override
	public String toString() {
		return "R2dbcLockFence[" + (this.fenceTable ? "fence table " : "guarded rows of ") + this.tableName + "("
				+ this.keyColumn + ", " + this.tokenColumn + ")]";
	}

}
