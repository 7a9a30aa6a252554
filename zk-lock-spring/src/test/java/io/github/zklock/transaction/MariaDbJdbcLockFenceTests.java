package io.github.zklock.transaction;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JdbcLockFence} on a real MariaDB server (Debian's package, started by
 * {@code scripts/database-server.sh} with Debian's utf8mb4 defaults; the tests are skipped where
 * it cannot be installed): every case of {@link AbstractJdbcLockFenceTests}, in a database of its
 * own each, at MariaDB's default isolation REPEATABLE READ. A fence table call is an upsert and a
 * locking read; the fence table is keyed by {@code VARBINARY(3072)}.
 */
class MariaDbJdbcLockFenceTests extends AbstractJdbcLockFenceTests {

	@RegisterExtension
	static final DatabaseServerExtension mariaDb = DatabaseServerExtension.mariaDb();

	static final String UPSERT = "INSERT INTO zk_lock_fence (lock_path, fencing_token) VALUES (?, ?) "
			+ "ON DUPLICATE KEY UPDATE fencing_token = GREATEST(fencing_token, ?)";

	static final String LOCKING_SELECT = SELECT + " FOR UPDATE";

	static final String GUARDED_LOCKING_SELECT = GUARDED_SELECT + " FOR UPDATE";

	@Override
	DataSource database() {
		return mariaDb.createDatabase();
	}

	@Override
	void dropDatabase(DataSource database) {
		mariaDb.dropDatabase(database);
	}

	/** Sessions of the test's database whose InnoDB transaction waits for a lock. */
	@Override
	int waitingStatements(JdbcTemplate jdbc, String sqlPrefix) {
		return FenceTests.mariaDbWaiting(jdbc, sqlPrefix);
	}

	@Override
	List<String> acceptedStatements() {
		return List.of(UPSERT, LOCKING_SELECT);
	}

	@Override
	List<String> firstWriteStatements() {
		return List.of(UPSERT, LOCKING_SELECT);
	}

	@Override
	List<String> rejectedStatements() {
		return List.of(UPSERT, LOCKING_SELECT);
	}

	@Override
	List<String> guardedRejectedStatements() {
		return List.of(GUARDED_UPDATE, GUARDED_LOCKING_SELECT);
	}

	@Override
	String lockedRowStatementPrefix() {
		return FenceTests.INSERT_PREFIX;
	}

	/**
	 * With {@code useAffectedRows=true} the driver reports changed rows, not matched ones: the
	 * update of a guarded row to the token it already holds reports none, and the locking read
	 * that follows finds the grant's own token, which is accepted.
	 */
	@Test
	void equalTokenOfAGuardedRowIsAcceptedWhenTheDriverCountsChangedRows() throws Exception {
		DriverManagerDataSource database = mariaDb.createDatabase("useAffectedRows=true");
		CuratorLockRegistry registry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		try {
			RecordingDataSource dataSource = new RecordingDataSource(database);
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			jdbc.execute("CREATE TABLE stock (id BIGINT PRIMARY KEY, quantity INT NOT NULL, fencing_token BIGINT)");
			jdbc.update("INSERT INTO stock (id, quantity) VALUES (1, 10)");
			JdbcLockFence guarded = JdbcLockFence.guardedRows(dataSource, "stock", "id", "fencing_token");
			LockHandle grant = new LockTemplate(registry, Duration.ofSeconds(10)).acquire("/stock/1",
					LockMode.EXCLUSIVE, Duration.ZERO);
			try {
				transaction.executeWithoutResult((status) -> guarded.advance(grant, 1L));
				dataSource.clear();
				transaction.executeWithoutResult((status) -> guarded.advance(grant, 1L));
				assertThat(dataSource.statements()).containsExactly(GUARDED_UPDATE, GUARDED_LOCKING_SELECT);
				assertThat(jdbc.queryForObject("SELECT fencing_token FROM stock WHERE id = 1", Long.class))
					.isEqualTo(grant.fencingToken());
			}
			finally {
				grant.release();
			}
		}
		finally {
			registry.close();
			mariaDb.dropDatabase(database);
		}
	}

}
