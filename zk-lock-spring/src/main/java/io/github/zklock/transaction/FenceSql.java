package io.github.zklock.transaction;

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;

/**
 * The SQL of the store-side fences, {@link JdbcLockFence} and {@link R2dbcLockFence}: the checks
 * of table and column names, the databases whose statements differ, and the statements of one
 * fence on one database (documented on {@link JdbcLockFence}). The two fences send the same
 * statements and differ only in their bind markers: JDBC's {@code ?}, bound by position, or the
 * names {@code :key} and {@code :token}, which Spring's {@code DatabaseClient} turns into the
 * driver's markers.
 */
final class FenceSql {

	/** Name of the fence table unless another is given. */
	static final String DEFAULT_TABLE = "zk_lock_fence";

	/** Key column of the fence table: the lock path. */
	static final String LOCK_PATH_COLUMN = "lock_path";

	/** Token column of the fence table. */
	static final String TOKEN_COLUMN = "fencing_token";

	/** Longest key of the fence table. */
	static final int MAX_KEY_LENGTH = 1024;

	private static final String PART = "[A-Za-z_][A-Za-z0-9_]*";

	static final Pattern COLUMN = Pattern.compile(PART);

	static final Pattern TABLE = Pattern.compile(PART + "(\\." + PART + "){0,2}");

	private FenceSql() {
	}

	/**
	 * Check a table or column name.
	 * @throws IllegalArgumentException if it is not a plain SQL identifier (qualified with dots,
	 * for a table)
	 */
	static String checkIdentifier(Pattern pattern, String what, String name) {
		Objects.requireNonNull(name, () -> what + " must not be null");
		if (!pattern.matcher(name).matches()) {
			throw new IllegalArgumentException(what + " '" + name + "' is not a plain SQL identifier"
					+ ((pattern == TABLE) ? " (optionally qualified with dots)" : "")
					+ ": letters, digits and underscores, not starting with a digit, unquoted");
		}
		return name;
	}

	/**
	 * Check the columns of a fence: plain identifiers, not one column twice.
	 * @throws IllegalArgumentException if a name is not a plain identifier, or both are one
	 */
	static void checkColumns(String keyColumn, String tokenColumn) {
		checkIdentifier(COLUMN, "Key column", keyColumn);
		checkIdentifier(COLUMN, "Token column", tokenColumn);
		if (keyColumn.equalsIgnoreCase(tokenColumn)) {
			throw new IllegalArgumentException("The key column and the token column must differ, both were '"
					+ keyColumn + "'");
		}
	}

	/**
	 * Check that a grant excludes other writers.
	 * @throws IllegalArgumentException for a READ grant
	 */
	static void checkMode(LockHandle grant) {
		if (grant.mode() == LockMode.READ) {
			throw new IllegalArgumentException("READ lock '" + grant.path()
					+ "' does not exclude other readers: fence writes under an EXCLUSIVE or WRITE grant");
		}
	}

	/**
	 * Check a fence table's key.
	 * @throws IllegalArgumentException if it is empty or longer than {@link #MAX_KEY_LENGTH}
	 */
	static String fenceKey(String key) {
		if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
			throw new IllegalArgumentException(
					"A fence table key must have 1 to " + MAX_KEY_LENGTH + " characters, was '" + key + "'");
		}
		return key;
	}

	/**
	 * The message of a multi-lock passed where one key's grant is needed.
	 */
	static String multiLockForOneKey(LockHandle grant, Object key) {
		return "The multi-lock of " + grant.parts().size() + " keys starting with " + grant.path()
				+ " has one fencing token per key: pass the part that guards '" + key + "' (grant.parts())";
	}

	/** The databases whose SQL differs from the standard statements. */
	enum Dialect {

		/** Any other database: the statements of H2, a concurrent first write failing on the key. */
		STANDARD,

		/** H2, in any compatibility mode: a failed statement leaves its transaction going. */
		H2,

		/** PostgreSQL, and what its driver reports as PostgreSQL: {@code ON CONFLICT}. */
		POSTGRESQL,

		/** MariaDB and MySQL: upsert, locking reads, binary keys. */
		MARIADB;

		static Dialect of(@Nullable String productName) {
			String name = (productName != null) ? productName.toLowerCase(Locale.ROOT) : "";
			if (name.equals("h2")) {
				return H2;
			}
			if (name.equals("postgresql")) {
				return POSTGRESQL;
			}
			if (name.equals("mariadb") || name.equals("mysql")) {
				return MARIADB;
			}
			return STANDARD;
		}

	}

	/** How a statement marks its parameters. */
	enum Markers {

		/** JDBC's {@code ?}, bound by position in the order each statement documents. */
		POSITIONAL("?", "?"),

		/** The names {@code :key} and {@code :token}, bound by name. */
		NAMED(":key", ":token");

		final String key;

		final String token;

		Markers(String key, String token) {
			this.key = key;
			this.token = token;
		}

	}

	/**
	 * The SQL of one fence on one database: {@code insert} for a fence table's first write, or
	 * {@code upsert} instead of {@code update} and {@code insert} (MariaDB's fence table). With
	 * positional markers the parameters are: update (token, key, token); PostgreSQL's insert (key,
	 * token), the other inserts (key, token, key); upsert (key, token, token); select (key).
	 */
	record Statements(Dialect dialect, String update, @Nullable String insert, @Nullable String upsert,
			String select, String createTable) {

		static Statements of(Dialect dialect, Markers markers, String t, String k, String f, boolean fenceTable) {
			String key = markers.key;
			String token = markers.token;
			String lockingRead = (dialect == Dialect.MARIADB) ? " FOR UPDATE" : "";
			String select = "SELECT " + f + " FROM " + t + " WHERE " + k + " = " + key + lockingRead;
			String keyType = (dialect == Dialect.MARIADB) ? "VARBINARY(" + (3 * MAX_KEY_LENGTH) + ")"
					: "VARCHAR(" + MAX_KEY_LENGTH + ")";
			String createTable = "CREATE TABLE IF NOT EXISTS " + t + " (" + k + " " + keyType + " PRIMARY KEY, " + f
					+ " BIGINT NOT NULL)";
			if (!fenceTable) {
				String update = "UPDATE " + t + " SET " + f + " = " + token + " WHERE " + k + " = " + key + " AND ("
						+ f + " IS NULL OR " + f + " <= " + token + ")";
				return new Statements(dialect, update, null, null, select, createTable);
			}
			String update = "UPDATE " + t + " SET " + f + " = " + token + " WHERE " + k + " = " + key + " AND " + f
					+ " <= " + token;
			String insertInto = "INSERT INTO " + t + " (" + k + ", " + f + ")";
			String values = " VALUES (" + key + ", " + token + ")";
			return switch (dialect) {
				case POSTGRESQL -> new Statements(dialect, update,
						insertInto + values + " ON CONFLICT (" + k + ") DO NOTHING", null, select, createTable);
				case MARIADB -> new Statements(dialect, update, null,
						insertInto + values + " ON DUPLICATE KEY UPDATE " + f + " = GREATEST(" + f + ", " + token + ")",
						select, createTable);
				default -> new Statements(dialect, update,
						insertInto + " SELECT CAST(" + key + " AS VARCHAR(" + MAX_KEY_LENGTH + ")), CAST(" + token
								+ " AS BIGINT) WHERE NOT EXISTS (SELECT 1 FROM " + t + " WHERE " + k + " = " + key + ")",
						null, select, createTable);
			};
		}

	}

}
