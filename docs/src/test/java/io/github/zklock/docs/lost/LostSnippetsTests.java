package io.github.zklock.docs.lost;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;


import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.github.zklock.LockContext;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.ZkLockFenceAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The snippets of the guide's chapter on lost locks run as written, on a real ZooKeeper and an
 * in-memory H2: the listener hears of a grant lost with its session, the fenced purchase
 * raises the stock row's token in its transaction, and the ceiling's snippets hold their locks
 * with a deadline, moved by each extension.
 */
class LostSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"zk.lock.session-timeout=3s");

	@Test
	void listenerHearsOfAGrantLostWithItsSession() {
		this.contextRunner.withBean(LostLocks.class).run((context) -> {
			LockTemplate locks = context.getBean(LockTemplate.class);
			try (var held = locks.acquire("/stock/apple", LockMode.EXCLUSIVE, Duration.ZERO)) {
				zooKeeper.expireSession(context.getBean(CuratorFramework.class));
				await().atMost(Duration.ofSeconds(20)).until(() -> !context.getBean(LostLocks.class).lost().isEmpty());
				assertThat(context.getBean(LostLocks.class).lost().get(0).path()).isEqualTo("/locks/stock/apple");
				assertThat(held.state()).isEqualTo(LockState.LOST);
			}
		});
	}

	@Test
	void fencedPurchaseRaisesTheRowsTokenInItsTransaction() {
		this.contextRunner
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, JdbcClientAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:fence-" + System.nanoTime())
			.withUserConfiguration(StockFenceConfiguration.class)
			.withBean(FencedStockService.class)
			.run((context) -> {
				JdbcClient jdbc = context.getBean(JdbcClient.class);
				jdbc.sql("CREATE TABLE stock (sku VARCHAR(64) PRIMARY KEY, quantity INT, fencing_token BIGINT)").update();
				jdbc.sql("INSERT INTO stock (sku, quantity) VALUES ('apple', 5)").update();
				assertThat(context.getBean(FencedStockService.class).purchase("apple", 2)).isEqualTo(3);
				Long token = jdbc.sql("SELECT fencing_token FROM stock WHERE sku = 'apple'").query(Long.class).single();
				assertThat(token).isPositive();
			});
	}

	@Test
	void fencedPostAdvancesTheFenceTablesRowOfItsLockPath() {
		this.contextRunner
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, JdbcClientAutoConfiguration.class,
					ZkLockFenceAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:ledger-" + System.nanoTime(),
					"zk.lock.fence.initialize-schema=true")
			.withBean(LedgerService.class)
			.run((context) -> {
				JdbcClient jdbc = context.getBean(JdbcClient.class);
				jdbc.sql("CREATE TABLE ledger (account VARCHAR(64), cents BIGINT)").update();
				context.getBean(LedgerService.class).post("acct-1", 250);
				assertThat(jdbc.sql("SELECT SUM(cents) FROM ledger").query(Long.class).single()).isEqualTo(250L);
				Long token = jdbc.sql("SELECT fencing_token FROM zk_lock_fence WHERE lock_path = '/locks/ledger/acct-1'")
					.query(Long.class)
					.single();
				assertThat(token).isPositive();
			});
	}

	@Test
	void ceilingSnippetsHoldTheirLocksWithADeadlineAndExtendIt() {
		this.contextRunner.withBean(CeilingJobs.class).run((context) -> {
			CeilingJobs jobs = context.getBean(CeilingJobs.class);
			List<Instant> deadlines = new ArrayList<>();
			jobs.rebuildDailyReport(() -> deadlines.add(LockContext.require().deadline().orElseThrow()));
			assertThat(deadlines).singleElement()
				.satisfies((deadline) -> assertThat(deadline).isBetween(Instant.now().plus(Duration.ofMinutes(9)),
						Instant.now().plus(Duration.ofMinutes(10))));

			deadlines.clear();
			Integer imported = jobs.importAll(List.of("a", "b", "c"),
					(batch) -> deadlines.add(LockContext.require().deadline().orElseThrow()));
			assertThat(imported).isEqualTo(3);
			// Each batch starts under the ceiling the previous one moved: never earlier.
			assertThat(deadlines).hasSize(3).isSortedAccordingTo(Instant::compareTo);
			assertThat(deadlines.get(2)).isAfter(Instant.now().plus(Duration.ofMinutes(4)));
		});
	}

}
