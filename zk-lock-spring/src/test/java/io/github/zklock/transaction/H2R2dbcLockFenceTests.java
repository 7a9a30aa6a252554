package io.github.zklock.transaction;

import java.util.UUID;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * {@link AbstractR2dbcLockFenceTests} on in-memory H2 databases through r2dbc-h2: a new one per
 * test (and per database asked for), the test's JDBC DataSource on the same in-memory database,
 * shut down after it.
 */
class H2R2dbcLockFenceTests extends AbstractR2dbcLockFenceTests {

	@Override
	Database database() {
		String name = "r2dbc-fence-" + UUID.randomUUID();
		H2ConnectionFactory connectionFactory = new H2ConnectionFactory(H2ConnectionConfiguration.builder()
			.inMemory(name)
			.property("DB_CLOSE_DELAY", "-1")
			.property("LOCK_TIMEOUT", "10000")
			.build());
		return new Database(connectionFactory,
				new DriverManagerDataSource("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000"));
	}

	@Override
	void dropDatabase(Database database) {
		new JdbcTemplate(database.dataSource()).execute("SHUTDOWN");
	}

	/** As {@link AbstractH2JdbcLockFenceTests}: H2's sessions executing such a statement. */
	@Override
	int waitingStatements(JdbcTemplate jdbc, String sqlPrefix) {
		return FenceTests.h2Waiting(jdbc, sqlPrefix);
	}

	/** H2's markers are indexed, {@code $1} first: each name gets one, in the order they first appear. */
	@Override
	String driverSql(String named) {
		return FenceTests.indexedMarkers(named);
	}

}
