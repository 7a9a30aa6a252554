package io.github.zklock.transaction;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.transaction.FenceSql.Dialect;
import io.github.zklock.transaction.FenceSql.Markers;
import io.github.zklock.transaction.FenceSql.Statements;

/**
 * Fencing checked by the store: makes a JDBC write conditional on the fencing token of the lock
 * grant it runs under, so that a "zombie" holder (a process paused past its session timeout, whose
 * lock another holder got meanwhile, and which has not noticed yet) cannot write after a newer
 * holder did. Call {@link #advance(LockHandle)} (or {@link #advance(LockHandle, Object)}) in the
 * transaction of the write, before the write: it moves the highest token seen for the key up to
 * the grant's {@linkplain LockHandle#fencingToken() token}, or throws
 * {@link StaleFencingTokenException} when the store has already seen a higher one, which rolls
 * the transaction back. Equal tokens are accepted: grants handed over locally within one
 * application share the token of the znode they ride on, so tokens of a key are non-decreasing,
 * not strictly increasing (DESIGN.md, semantics 8).
 *
 * <p><strong>Call it before reading what the write depends on</strong>, as the first statement
 * of the transaction on the guarded data. The accepted call locks the fence row (below), so a
 * zombie that passed the fence first is waited for, and what the caller reads afterwards includes
 * the zombie's committed write. A read-modify-write that reads first and fences at the write can
 * still lose an update: it may read the value before a zombie's pending write commits, then wait at
 * the fence for that commit and overwrite it with a value computed from the stale read.
 *
 * <p>Two ways to keep the highest token:
 * <ul>
 * <li>{@linkplain #fenceTable(DataSource) a fence table} keyed by the lock path (by default
 * {@value #DEFAULT_TABLE}), one row per key, created by the first write of the key:
 * <pre class="code">
 * CREATE TABLE IF NOT EXISTS zk_lock_fence (lock_path VARCHAR(1024) PRIMARY KEY, fencing_token BIGINT NOT NULL)
 * </pre>
 * ({@link #createTableSql()}; valid on H2 and PostgreSQL; MariaDB keys it by
 * {@code VARBINARY(3072)});</li>
 * <li>{@linkplain #guardedRows(DataSource, String, String, String) guarded rows}: the row being
 * written keeps the token in a {@code BIGINT} column of its own (nullable or not; {@code NULL}
 * counts as no token yet, so a column added to an existing table needs no back-fill). The row must
 * exist.</li>
 * </ul>
 *
 * <p>The SQL of one call ({@code t} the table, {@code k} the key column, {@code f} the token
 * column; {@code ?} are bind parameters, never interpolated values), stopping at the first
 * statement that settles it. The fence learns the database from the product name in the metadata
 * of the first connection it uses, and keeps the statements for it:
 * <ol>
 * <li>{@code UPDATE t SET fencing_token = ? WHERE lock_path = ? AND fencing_token <= ?} (fence
 * table) or {@code UPDATE t SET f = ? WHERE k = ? AND (f IS NULL OR f <= ?)} (guarded rows): one
 * row updated means accepted, and the row stays locked by the transaction until it ends;</li>
 * <li>fence table only, no row updated: an insert of the key's row that does nothing when the row
 * exists, one row inserted meaning accepted (the first write of the key), then the statement of
 * step 1 once more, for a first row committed by another transaction after step 1 looked. On
 * PostgreSQL {@code INSERT INTO t (lock_path, fencing_token) VALUES (?, ?) ON CONFLICT (lock_path)
 * DO NOTHING}; on H2 and other databases {@code INSERT INTO t (lock_path, fencing_token) SELECT
 * CAST(? AS VARCHAR(1024)), CAST(? AS BIGINT) WHERE NOT EXISTS (SELECT 1 FROM t WHERE lock_path
 * = ?)};</li>
 * <li>{@code SELECT fencing_token FROM t WHERE lock_path = ?} (or {@code SELECT f FROM t WHERE k
 * = ?}): the row exists with a higher token, {@link StaleFencingTokenException} carrying it; no row
 * (guarded rows), {@link EmptyResultDataAccessException}.</li>
 * </ol>
 * So an accepted call issues one statement (two or three for the first write of a key); a
 * rejected one two (guarded rows) or four (fence table).
 *
 * <p>MariaDB (and MySQL, whose syntax it shares; the project's tests run MariaDB) takes two
 * statements for every call on a fence table: {@code INSERT INTO t (lock_path, fencing_token)
 * VALUES (?, ?) ON DUPLICATE KEY UPDATE fencing_token = GREATEST(fencing_token, ?)}, which inserts
 * or raises the row and locks it, then {@code SELECT fencing_token FROM t WHERE lock_path = ? FOR
 * UPDATE}: the grant's own token read back means accepted, a higher one rejected. (Steps 1 and 2
 * there would let two first writes of a key deadlock on the gap locks InnoDB takes for a missing
 * row under REPEATABLE READ, MariaDB's default.) Guarded rows take steps 1 and 3 there, step 3 with
 * {@code FOR UPDATE}, where a stored token equal to the grant's also counts as accepted: a
 * connection that reports changed rather than matched rows ({@code useAffectedRows=true}) reports
 * no row for an update to an equal token.
 *
 * <p>Why this is atomic: the accepting {@code UPDATE} (or {@code INSERT}) locks the row until the
 * transaction ends. A zombie that passed the fence before the newer holder therefore blocks every
 * later writer of the key until its transaction commits or rolls back; the later writer's
 * statement then sees the zombie's outcome (PostgreSQL and H2 re-check the condition against the
 * committed row in READ COMMITTED, the default of both; MariaDB's InnoDB reads the latest
 * committed row in these statements at every isolation level), and the newer holder's token is
 * stored after it. Under REPEATABLE READ or SERIALIZABLE, PostgreSQL fails the later writer with
 * a serialization error instead (a {@code ConcurrencyFailureException}: the transaction's snapshot,
 * taken at the fence's first statement, predates the zombie's commit), and its transaction rolls
 * back. H2 and MariaDB accept it under REPEATABLE READ too, and what it reads after the fence
 * includes the zombie's write (InnoDB takes a transaction's snapshot at its first plain read, which
 * comes after the fence when the fence comes first). A blocked statement waits as long as the
 * database lets a lock wait (PostgreSQL's {@code lock_timeout}, H2's {@code LOCK_TIMEOUT},
 * MariaDB's {@code innodb_lock_wait_timeout}) or until the transaction's timeout, which
 * {@link JdbcTemplate} applies as query timeout.
 *
 * <p>Two transactions writing the first row of a key at once: the second one's insert waits for
 * the first transaction's uncommitted row; if that transaction commits, the second goes on as for
 * an existing row (accepted unless its token is lower), without a duplicate key: PostgreSQL's
 * insert does nothing on the conflict, MariaDB's upsert raises the row, and on H2 the insert's
 * {@link org.springframework.dao.DuplicateKeyException} is caught, since H2 undoes only the failed
 * statement and the transaction goes on. Under REPEATABLE READ or SERIALIZABLE, PostgreSQL fails
 * the second with a serialization error instead (its snapshot does not have the row). On other
 * databases the second fails with {@link org.springframework.dao.DuplicateKeyException} (a
 * {@code DataIntegrityViolationException}, SQL state 23505) and its transaction must roll back
 * (nothing here catches it where a failed statement may abort the transaction); a retry of that
 * transaction sees the row; create the rows up front (or {@code INSERT} with token 0) if such a
 * failure is not acceptable. On H2 the wait may end with a lock timeout
 * ({@code PessimisticLockingFailureException}).
 *
 * <p>Transactions: {@code advance} must run in an actual transaction on this instance's
 * {@link DataSource}, managed by Spring (a {@code DataSourceTransactionManager},
 * {@code JdbcTransactionManager}, {@code JpaTransactionManager} on the same DataSource or
 * {@code JtaTransactionManager}), and the write it guards in the same transaction: it uses a
 * {@link JdbcTemplate} on the DataSource, which joins that transaction. An auto-committed fence
 * would protect nothing, so {@code advance} throws {@link IllegalStateException} before any
 * statement when no transaction is active, or when the connection it gets from the DataSource is
 * in auto-commit mode (a transaction on another DataSource).
 *
 * <p>Keys: with a fence table, {@link #advance(LockHandle)} uses the grant's
 * {@linkplain LockHandle#path() lock path} (root path included, for example
 * {@code /locks/stock/apple}); {@link #advance(LockHandle, Object)} the given key's
 * {@code toString()} (at most 1024 characters). With guarded rows the key is the value of the
 * row's key column, bound as given.
 *
 * <p>Grants: EXCLUSIVE and WRITE grants, and permits (a one-permit semaphore is exclusive; with
 * more permits the holders write side by side, and the fence only rejects holders older than the
 * last writer). READ grants are rejected: readers do not exclude each other. A multi-lock
 * (a request of several keys) has one token per key: {@link #advance(LockHandle)} with a fence
 * table advances the row of every part, in the parts' order (sorted lock paths, so that two
 * multi-lock writers lock the rows in one order), after taking every part's token; it is all or
 * nothing with the transaction. {@link #advance(LockHandle, Object)} needs a single grant: pass
 * the part ({@code grant.parts().get(i)}) whose key guards the row.
 *
 * <p>Instances are immutable and thread-safe: share one per DataSource and table.
 *
 * @see LockHandle#fencingToken()
 * @see LockCommitGuard
 */
public final class JdbcLockFence {

	/** Name of the fence table unless another is given. */
	public static final String DEFAULT_TABLE = FenceSql.DEFAULT_TABLE;

	private static final Log logger = LogFactory.getLog(JdbcLockFence.class);

	private final DataSource dataSource;

	private final JdbcTemplate jdbcTemplate;

	private final String tableName;

	private final String keyColumn;

	private final String tokenColumn;

	private final boolean fenceTable;

	/** The statements for the database behind the DataSource, once a connection told which. */
	private volatile @Nullable Statements statements;

	private JdbcLockFence(DataSource dataSource, String tableName, String keyColumn, String tokenColumn,
			boolean fenceTable) {
		Objects.requireNonNull(dataSource, "dataSource must not be null");
		this.dataSource = dataSource;
		this.jdbcTemplate = new JdbcTemplate(dataSource);
		this.tableName = FenceSql.checkIdentifier(FenceSql.TABLE, "Table name", tableName);
		FenceSql.checkColumns(keyColumn, tokenColumn);
		this.keyColumn = keyColumn;
		this.tokenColumn = tokenColumn;
		this.fenceTable = fenceTable;
	}

	/**
	 * Create a fence on the table {@value #DEFAULT_TABLE}, keyed by lock path (see
	 * {@link #createTableSql()}).
	 * @param dataSource the DataSource of the writes to fence
	 * @return the fence
	 */
	public static JdbcLockFence fenceTable(DataSource dataSource) {
		return fenceTable(dataSource, DEFAULT_TABLE);
	}

	/**
	 * Create a fence on a table of the shape {@link #createTableSql()} gives: {@code lock_path
	 * VARCHAR(1024) PRIMARY KEY, fencing_token BIGINT NOT NULL}.
	 * @param dataSource the DataSource of the writes to fence
	 * @param tableName the table: a plain SQL identifier, optionally qualified by schema (and
	 * catalog) with dots, unquoted (letters, digits, underscores; not starting with a digit)
	 * @return the fence
	 * @throws IllegalArgumentException if the table name is not such an identifier
	 */
	public static JdbcLockFence fenceTable(DataSource dataSource, String tableName) {
		return new JdbcLockFence(dataSource, tableName, FenceSql.LOCK_PATH_COLUMN, FenceSql.TOKEN_COLUMN, true);
	}

	/**
	 * Create a fence that keeps the token in the guarded rows themselves: each row of the table has
	 * a {@code BIGINT} token column, and {@link #advance(LockHandle, Object)} names the row by the
	 * value of its key column. The row must exist.
	 * @param dataSource the DataSource of the writes to fence
	 * @param tableName the table: a plain SQL identifier, optionally qualified by schema (and
	 * catalog) with dots, unquoted
	 * @param keyColumn the column that identifies the row (typically its primary key): a plain,
	 * unqualified, unquoted identifier
	 * @param tokenColumn the {@code BIGINT} column that keeps the highest token: a plain identifier,
	 * not the key column
	 * @return the fence
	 * @throws IllegalArgumentException if a name is not such an identifier, or both columns are one
	 */
	public static JdbcLockFence guardedRows(DataSource dataSource, String tableName, String keyColumn,
			String tokenColumn) {
		return new JdbcLockFence(dataSource, tableName, keyColumn, tokenColumn, false);
	}

	/**
	 * Advance the fence of the grant's lock path (fence table only): accept the grant's token if no
	 * higher one was seen for the path, else reject it. For a multi-lock, the path of every part
	 * with that part's token, in the parts' order. See the class description for the SQL.
	 * @param grant the grant the caller's write runs under, held
	 * @throws StaleFencingTokenException if the store has seen a higher token for the path (roll the
	 * transaction back: letting the exception propagate does)
	 * @throws LockLostException if the grant is lost or in doubt already ({@code fencingToken()}
	 * says so; no statement was issued)
	 * @throws IllegalStateException if no transaction is active on this DataSource (no statement
	 * was issued), if the grant was released, or if this fence keeps tokens in guarded rows, which
	 * need the row's key ({@link #advance(LockHandle, Object)})
	 * @throws IllegalArgumentException if the grant is a READ grant
	 * @throws org.springframework.dao.DuplicateKeyException on a database other than PostgreSQL, H2
	 * and MariaDB, if another transaction wrote the first row of the path at the same time and
	 * committed first (roll back and retry)
	 * @throws org.springframework.dao.DataAccessException if the database fails otherwise, for
	 * example with a lock timeout while another transaction holds the row
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached to read the token of a
	 * grant that does not know it yet
	 */
	public void advance(LockHandle grant) {
		Objects.requireNonNull(grant, "grant must not be null");
		if (!this.fenceTable) {
			throw new IllegalStateException("The guarded rows of " + this.tableName
					+ " keep their own tokens: name the row with advance(grant, key)");
		}
		List<LockHandle> parts = grant.parts();
		for (LockHandle part : parts) {
			FenceSql.checkMode(part);
		}
		checkTransaction();
		long[] tokens = new long[parts.size()];
		for (int i = 0; i < tokens.length; i++) {
			tokens[i] = parts.get(i).fencingToken();
		}
		Statements sql = checkConnection();
		for (int i = 0; i < tokens.length; i++) {
			LockHandle part = parts.get(i);
			fence(sql, part, FenceSql.fenceKey(part.path()), tokens[i]);
		}
	}

	/**
	 * Advance the fence of one key: accept the grant's token if no higher one was seen for the key,
	 * else reject it. See the class description for the SQL.
	 * @param grant the grant the caller's write runs under, held; a single grant (a part of a
	 * multi-lock, not the multi-lock)
	 * @param key with a fence table, the row's key ({@code toString()}, typically the lock path or
	 * key); with guarded rows, the value of the guarded row's key column, bound as given
	 * @throws StaleFencingTokenException if the store has seen a higher token for the key (roll the
	 * transaction back: letting the exception propagate does)
	 * @throws EmptyResultDataAccessException if the guarded row does not exist (no row was changed)
	 * @throws LockLostException if the grant is lost or in doubt already (no statement was issued)
	 * @throws IllegalStateException if no transaction is active on this DataSource (no statement
	 * was issued), or if the grant was released
	 * @throws IllegalArgumentException if the grant is a multi-lock or a READ grant, or a fence
	 * table key is empty or longer than 1024 characters
	 * @throws org.springframework.dao.DuplicateKeyException on a database other than PostgreSQL, H2
	 * and MariaDB, if another transaction wrote the first row of the key of a fence table at the same
	 * time and committed first (roll back and retry)
	 * @throws org.springframework.dao.DataAccessException if the database fails otherwise
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached to read the token of a
	 * grant that does not know it yet
	 */
	public void advance(LockHandle grant, Object key) {
		Objects.requireNonNull(grant, "grant must not be null");
		Objects.requireNonNull(key, "key must not be null");
		if (grant.parts().size() > 1) {
			throw new IllegalArgumentException(FenceSql.multiLockForOneKey(grant, key));
		}
		FenceSql.checkMode(grant);
		Object boundKey = this.fenceTable ? FenceSql.fenceKey(key.toString()) : key;
		checkTransaction();
		long token = grant.fencingToken();
		Statements sql = checkConnection();
		fence(sql, grant, boundKey, token);
	}

	/**
	 * Return the DDL of this fence's table, for a schema script or a start-up initializer:
	 * {@code CREATE TABLE IF NOT EXISTS <table> (lock_path VARCHAR(1024) PRIMARY KEY, fencing_token
	 * BIGINT NOT NULL)}, valid on H2 and PostgreSQL (9.1 or later). On MariaDB and MySQL the key
	 * column is {@code VARBINARY(3072)}: with {@code utf8mb4} a {@code VARCHAR(1024)} key exceeds
	 * InnoDB's 3072-byte limit, a binary column compares keys exactly where the default collations
	 * ignore case and trailing spaces, and the UTF-8 of a key of at most 1024 characters has at most
	 * 3072 bytes. The first call of a fence that has not used its DataSource yet takes a connection
	 * to learn the database.
	 * @return the statement
	 * @throws IllegalStateException if this fence keeps tokens in guarded rows (the application's
	 * own table)
	 * @throws org.springframework.dao.DataAccessException if no connection can be had to learn the
	 * database
	 */
	public String createTableSql() {
		if (!this.fenceTable) {
			throw new IllegalStateException("The guarded rows live in the application's table " + this.tableName
					+ ": add a BIGINT column " + this.tokenColumn + " there");
		}
		Statements sql = this.statements;
		if (sql == null) {
			sql = this.jdbcTemplate.execute((ConnectionCallback<Statements>) this::statements);
		}
		return sql.createTable();
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

	/**
	 * The statements: accept with the conditional update (or the first insert of a fence table
	 * key, or MariaDB's upsert), else read what the store has and reject.
	 */
	private void fence(Statements sql, LockHandle grant, Object key, long token) {
		String upsert = sql.upsert();
		if (upsert != null) {
			this.jdbcTemplate.update(upsert, key, token, token);
		}
		else {
			if (update(sql, key, token)) {
				return;
			}
			if (sql.insert() != null) {
				if (insert(sql, key, token)) {
					return;
				}
				// Another transaction committed the first row of the key after our update looked.
				if (update(sql, key, token)) {
					return;
				}
			}
		}
		List<@Nullable Long> stored = this.jdbcTemplate.queryForList(sql.select(), Long.class, key);
		if (stored.isEmpty()) {
			throw new EmptyResultDataAccessException("No row of " + this.tableName + " has " + this.keyColumn + " = '"
					+ key + "': a guarded row must exist before it is fenced", 1);
		}
		Long highest = stored.get(0);
		if (sql.dialect() == Dialect.MARIADB && highest != null && highest == token) {
			// Read with FOR UPDATE after our upsert or update: the row is ours and holds our token.
			return;
		}
		StaleFencingTokenException stale = new StaleFencingTokenException(grant, key, token, highest);
		if (logger.isDebugEnabled()) {
			logger.debug(stale.getMessage() + " (" + this.tableName + ")");
		}
		throw stale;
	}

	private boolean update(Statements sql, Object key, long token) {
		return this.jdbcTemplate.update(sql.update(), token, key, token) == 1;
	}

	private boolean insert(Statements sql, Object key, long token) {
		String insert = Objects.requireNonNull(sql.insert());
		try {
			return switch (sql.dialect()) {
				case POSTGRESQL -> this.jdbcTemplate.update(insert, key, token) == 1;
				default -> this.jdbcTemplate.update(insert, key, token, key) == 1;
			};
		}
		catch (DuplicateKeyException ex) {
			if (sql.dialect() != Dialect.H2) {
				throw ex;
			}
			// A concurrent transaction committed the key's first row while this insert waited for it.
			// H2 undoes only the failed statement, so the transaction goes on with the update.
			return false;
		}
	}

	private void checkTransaction() {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException("No transaction is active: call advance in the transaction of the write "
					+ "it guards (an auto-committed fence protects nothing)");
		}
	}

	/**
	 * Rejects a connection in auto-commit (the active transaction is not this DataSource's), and
	 * returns the statements for its database.
	 */
	private Statements checkConnection() {
		return Objects.requireNonNull(this.jdbcTemplate.execute((ConnectionCallback<Statements>) (connection) -> {
			if (connection.getAutoCommit()) {
				throw new IllegalStateException("The active transaction does not cover the DataSource " + this.dataSource
						+ " (its connection is in auto-commit): run advance in a transaction of that DataSource");
			}
			return statements(connection);
		}));
	}

	private Statements statements(Connection connection) throws SQLException {
		Statements sql = this.statements;
		if (sql == null) {
			Dialect dialect = Dialect.of(connection.getMetaData().getDatabaseProductName());
			sql = Statements.of(dialect, Markers.POSITIONAL, this.tableName, this.keyColumn, this.tokenColumn, this.fenceTable);
			this.statements = sql;
		}
		return sql;
	}

	@Override
	public String toString() {
		return "JdbcLockFence[" + (this.fenceTable ? "fence table " : "guarded rows of ") + this.tableName + "("
				+ this.keyColumn + ", " + this.tokenColumn + ")]";
	}

}
