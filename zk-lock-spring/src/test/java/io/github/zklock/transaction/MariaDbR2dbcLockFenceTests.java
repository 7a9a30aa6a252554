package io.github.zklock.transaction;

import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link R2dbcLockFence} on a real MariaDB server through r2dbc-mariadb (Debian's package, started
 * by {@code scripts/database-server.sh}; the tests are skipped where it cannot be installed): every
 * case of {@link AbstractR2dbcLockFenceTests}, in a database of its own each. A fence table call is
 * an upsert and a locking read, a guarded row's rejection a locking read, as
 * {@link MariaDbJdbcLockFenceTests} shows for JDBC; the driver's markers are {@code ?}, one per
 * name where it appears. r2dbc-mariadb counts matched rows, as Connector/J does by default (it has
 * no {@code useAffectedRows}), so an equal token of a guarded row is accepted by the update alone
 * ({@code equalTokenOfAGuardedRowIsAccepted}); a driver that counted changed rows would have it
 * accepted by the locking read, as {@link MariaDbJdbcLockFenceTests} checks for JDBC.
 */
class MariaDbR2dbcLockFenceTests extends AbstractR2dbcLockFenceTests {

	@RegisterExtension
	static final DatabaseServerExtension mariaDb = DatabaseServerExtension.mariaDb();

	@Override
	Database database() {
		DataSource dataSource = mariaDb.createDatabase();
		return new Database(mariaDb.connectionFactory(dataSource), dataSource);
	}

	@Override
	void dropDatabase(Database database) {
		mariaDb.dropDatabase(database.dataSource());
	}

	@Override
	int waitingStatements(JdbcTemplate jdbc, String sqlPrefix) {
		return FenceTests.mariaDbWaiting(jdbc, sqlPrefix);
	}

	@Override
	String driverSql(String named) {
		return named.replaceAll(":[a-z]+", "?");
	}

	private String upsert() {
		return driverSql("INSERT INTO zk_lock_fence (lock_path, fencing_token) VALUES (:key, :token) "
				+ "ON DUPLICATE KEY UPDATE fencing_token = GREATEST(fencing_token, :token)");
	}

	@Override
	String select() {
		return super.select() + " FOR UPDATE";
	}

	@Override
	String guardedSelect() {
		return super.guardedSelect() + " FOR UPDATE";
	}

	@Override
	List<String> acceptedStatements() {
		return List.of(upsert(), select());
	}

	@Override
	List<String> firstWriteStatements() {
		return List.of(upsert(), select());
	}

	@Override
	List<String> rejectedStatements() {
		return List.of(upsert(), select());
	}

	@Override
	String lockedRowStatementPrefix() {
		return FenceTests.INSERT_PREFIX;
	}

}
