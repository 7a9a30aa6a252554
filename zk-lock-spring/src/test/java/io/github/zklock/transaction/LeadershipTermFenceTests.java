package io.github.zklock.transaction;

import java.time.Duration;
import java.util.UUID;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.curator.CuratorLeadership;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A leader's writes through {@link JdbcLockFence} with the fencing token of its leadership term
 * ({@code Leadership.term}), on a real ZooKeeper server and H2: the next leader's token is higher,
 * so once it has written, the previous leader's write is refused, whether that leader already knows
 * its term ended (its term's token is refused before any statement) or is a zombie that does not
 * (a paused process: the store rejects the lower token and rolls its transaction back).
 */
class LeadershipTermFenceTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension().withTickTime(Duration.ofMillis(200));

	private static final String GROUP = "nightly-job";

	private static final Duration LONG = Duration.ofSeconds(10);

	private JdbcTemplate jdbc;

	private TransactionTemplate transaction;

	private JdbcLockFence fence;

	private CuratorLeadership first;

	private CuratorLeadership second;

	private CuratorFramework firstClient;

	@BeforeEach
	void setUp() throws Exception {
		DataSource dataSource = new DriverManagerDataSource("jdbc:h2:mem:term-" + UUID.randomUUID()
				+ ";DB_CLOSE_DELAY=-1", "sa", "");
		this.jdbc = new JdbcTemplate(dataSource);
		this.transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.fence = JdbcLockFence.fenceTable(dataSource);
		this.jdbc.execute(this.fence.createTableSql());
		this.jdbc.execute("CREATE TABLE runs (leader VARCHAR(20) NOT NULL)");
		this.firstClient = zooKeeper.newClient((builder) -> builder.sessionTimeoutMs(3000).connectionTimeoutMs(3000));
		this.first = new CuratorLeadership(this.firstClient, "/leaders", "first");
		this.second = new CuratorLeadership(zooKeeper.newClient(), "/leaders", "second");
	}

	@AfterEach
	void tearDown() {
		this.first.close();
		this.second.close();
		this.jdbc.execute("SHUTDOWN");
	}

	@Test
	void previousLeadersWriteIsRefusedOnceTheNextLeaderWrote() throws Exception {
		assertThat(this.first.awaitLeadership(GROUP, LONG)).isTrue();
		this.second.join(GROUP);
		LockHandle firstTerm = this.first.term(GROUP).orElseThrow();
		run(firstTerm, "first");
		long firstToken = firstTerm.fencingToken();
		// What a paused leader believes: still leading, with the token it read.
		LockHandle zombie = new ZombieGrant(firstTerm, firstToken);

		zooKeeper.expireSession(this.firstClient);
		assertThat(this.second.awaitLeadership(GROUP, LONG)).isTrue();
		LockHandle secondTerm = this.second.term(GROUP).orElseThrow();
		assertThat(secondTerm.fencingToken()).isGreaterThan(firstToken);
		run(secondTerm, "second");

		// The zombie's write reaches the store and is refused there; nothing of it is committed.
		assertThatExceptionOfType(StaleFencingTokenException.class).isThrownBy(() -> run(zombie, "zombie"));
		// The first leader, once it knows, is refused before any statement.
		await().atMost(LONG).until(() -> firstTerm.state() == LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> run(firstTerm, "first-again"))
			.isNotInstanceOf(StaleFencingTokenException.class);
		assertThat(this.jdbc.queryForList("SELECT leader FROM runs", String.class)).containsExactly("first",
				"second");
	}

	private void run(LockHandle term, String leader) {
		this.transaction.executeWithoutResult((status) -> {
			this.fence.advance(term);
			this.jdbc.update("INSERT INTO runs (leader) VALUES (?)", leader);
		});
	}

}
