package io.github.zklock.transaction;

import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link R2dbcLockFence} on a real PostgreSQL server through r2dbc-postgresql (Debian's package,
 * started by {@code scripts/database-server.sh}; the tests are skipped where it cannot be
 * installed): every case of {@link AbstractR2dbcLockFenceTests}, in a database of its own each.
 * The first write of a key inserts with {@code ON CONFLICT DO NOTHING}; the driver's markers are
 * indexed ({@code $1}).
 */
class PostgreSqlR2dbcLockFenceTests extends AbstractR2dbcLockFenceTests {

	@RegisterExtension
	static final DatabaseServerExtension postgres = DatabaseServerExtension.postgres();

	@Override
	Database database() {
		DataSource dataSource = postgres.createDatabase();
		return new Database(postgres.connectionFactory(dataSource), dataSource);
	}

	@Override
	void dropDatabase(Database database) {
		postgres.dropDatabase(database.dataSource());
	}

	@Override
	int waitingStatements(JdbcTemplate jdbc, String sqlPrefix) {
		return FenceTests.postgreSqlWaiting(jdbc, sqlPrefix);
	}

	@Override
	boolean failsTheWaitingWriterUnderRepeatableRead() {
		return true;
	}

	@Override
	String driverSql(String named) {
		return FenceTests.indexedMarkers(named);
	}

	private String postgreSqlInsert() {
		return driverSql("INSERT INTO zk_lock_fence (lock_path, fencing_token) VALUES (:key, :token) "
				+ "ON CONFLICT (lock_path) DO NOTHING");
	}

	@Override
	List<String> firstWriteStatements() {
		return List.of(update(), postgreSqlInsert());
	}

	@Override
	List<String> rejectedStatements() {
		return List.of(update(), postgreSqlInsert(), update(), select());
	}

}
