package io.github.zklock.transaction;

import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * {@link AbstractJdbcLockFenceTests} on in-memory H2 databases: a new one per test (and per
 * DataSource asked for), shut down after it.
 */
abstract class AbstractH2JdbcLockFenceTests extends AbstractJdbcLockFenceTests {

	/**
	 * Return what to add to the H2 URL for the database under test, for example a compatibility
	 * mode.
	 * @return the URL settings, starting with {@code ;}, or empty
	 */
	abstract String urlSettings();

	@Override
	DataSource database() {
		return new DriverManagerDataSource("jdbc:h2:mem:fence-" + UUID.randomUUID()
				+ ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000" + urlSettings());
	}

	@Override
	void dropDatabase(DataSource database) {
		new JdbcTemplate(database).execute("SHUTDOWN");
	}

	/**
	 * H2's sessions executing such a statement: H2 shows a wait for a row lock as BLOCKED, a wait
	 * for a key another transaction inserted as running, and nothing else runs while a test waits.
	 */
	@Override
	int waitingStatements(JdbcTemplate jdbc, String sqlPrefix) {
		return FenceTests.h2Waiting(jdbc, sqlPrefix);
	}


}
