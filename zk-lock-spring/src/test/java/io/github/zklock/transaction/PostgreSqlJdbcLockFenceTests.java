package io.github.zklock.transaction;

import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link JdbcLockFence} on a real PostgreSQL server (Debian's package, started by
 * {@code scripts/database-server.sh}; the tests are skipped where it cannot be installed): every
 * case of {@link AbstractJdbcLockFenceTests}, in a database of its own each. The first write of a
 * key inserts with {@code ON CONFLICT DO NOTHING}.
 */
class PostgreSqlJdbcLockFenceTests extends AbstractJdbcLockFenceTests {

	@RegisterExtension
	static final DatabaseServerExtension postgres = DatabaseServerExtension.postgres();

	static final String POSTGRESQL_INSERT = "INSERT INTO zk_lock_fence (lock_path, fencing_token) VALUES (?, ?) "
			+ "ON CONFLICT (lock_path) DO NOTHING";

	@Override
	DataSource database() {
		return postgres.createDatabase();
	}

	@Override
	void dropDatabase(DataSource database) {
		postgres.dropDatabase(database);
	}

	/** Sessions of the test's database waiting for a lock (a row's or a transaction's). */
	@Override
	int waitingStatements(JdbcTemplate jdbc, String sqlPrefix) {
		return FenceTests.postgreSqlWaiting(jdbc, sqlPrefix);
	}

	/** Its snapshot, taken at the fence's first statement, predates the zombie's commit. */
	@Override
	boolean failsTheWaitingWriterUnderRepeatableRead() {
		return true;
	}

	@Override
	List<String> firstWriteStatements() {
		return List.of(UPDATE, POSTGRESQL_INSERT);
	}

	@Override
	List<String> rejectedStatements() {
		return List.of(UPDATE, POSTGRESQL_INSERT, UPDATE, SELECT);
	}

}
