package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.test.ZooKeeperExtension;
import io.github.zklock.transaction.LockCommitGuard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The commit guard in a Spring Boot application: with Boot's DataSource and transaction
 * auto-configurations, the auto-configured {@link DataSourceTransactionManager} carries exactly one
 * {@link LockCommitGuard} (added by zk-lock-spring's post-processor, not by a bean of this
 * module), so a transaction whose lock was lost before commit rolls back; lock state changes reach
 * the application as events and, with {@code zk.lock.interrupt-on-lost}, interrupt the holder.
 * The session is expired on the server, as a long pause would. The guard itself, without Spring
 * Boot, is tested in zk-lock-spring.
 */
class LockCommitGuardAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class,
				TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class,
				AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withUserConfiguration(LedgerConfiguration.class)
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(), "zk.lock.session-timeout=5s",
				"zk.lock.default-wait-time=10s", "zk.lock.interrupt-on-lost=true");

	@Test
	void givesTheAutoConfiguredTransactionManagerExactlyOneCommitGuard() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(DataSourceTransactionManager.class)
				.doesNotHaveBean(LockCommitGuard.class);
			assertThat(commitGuards(context)).hasSize(1);
		});
	}

	@Test
	void keepsOneCommitGuardWhenTheApplicationAlsoDefinesOne() {
		// Boot adds TransactionExecutionListener beans to its transaction manager; the
		// post-processor then sees a guard and adds none.
		this.contextRunner.withBean("userCommitGuard", LockCommitGuard.class).run((context) -> {
			assertThat(commitGuards(context)).singleElement().isSameAs(context.getBean("userCommitGuard"));
		});
	}

	@Test
	void rollsBackATransactionWhoseLockWasLostBeforeCommit() {
		this.contextRunner.run((context) -> {
			createTable(context);
			Ledger ledger = context.getBean(Ledger.class);
			Events events = context.getBean(Events.class);
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> ledger.writeThenLoseTheLock("lost-write"))
				.withMessageContaining("/locks/ledger");
			assertThat(count(context, "lost-write")).isZero();
			// The event is published after the state changes and the interrupt.
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(events.received).anySatisfy((event) -> {
					assertThat(event.state()).isEqualTo(LockState.LOST);
					assertThat(event.path()).isEqualTo("/locks/ledger");
					assertThat(event.fencingToken()).isPresent();
				}));
			// The client recovers with a new session; the next call works and commits.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(CuratorFramework.class).getZookeeperClient().isConnected());
			ledger.write("after-recovery");
			assertThat(count(context, "after-recovery")).isOne();
		});
	}

	@Test
	void interruptsTheHolderThreadWhenItsLockIsLost() {
		this.contextRunner.run((context) -> {
			Ledger ledger = context.getBean(Ledger.class);
			assertThat(ledger.blockUntilInterruptedAfterLosingTheLock()).isTrue();
			assertThat(Thread.interrupted()).as("interrupt flag left for the caller").isTrue();
		});
	}

	private static List<TransactionExecutionListener> commitGuards(AssertableApplicationContext context) {
		return context.getBean(DataSourceTransactionManager.class)
			.getTransactionExecutionListeners()
			.stream()
			.filter(LockCommitGuard.class::isInstance)
			.toList();
	}

	private static void createTable(AssertableApplicationContext context) {
		context.getBean(JdbcTemplate.class).execute("create table entries (id varchar(64) primary key)");
	}

	private static Integer count(AssertableApplicationContext context, String id) {
		return context.getBean(JdbcTemplate.class)
			.queryForObject("select count(*) from entries where id = ?", Integer.class, id);
	}

	@Configuration(proxyBeanMethods = false)
	static class LedgerConfiguration {

		@Bean
		Events events() {
			return new Events();
		}

		@Bean
		Ledger ledger(JdbcTemplate jdbcTemplate, CuratorFramework client) {
			return new Ledger(jdbcTemplate, client);
		}

	}

	static class Ledger {

		private final JdbcTemplate jdbcTemplate;

		private final CuratorFramework client;

		Ledger(JdbcTemplate jdbcTemplate, CuratorFramework client) {
			this.jdbcTemplate = jdbcTemplate;
			this.client = client;
		}

		@DistributedLock(path = "/ledger")
		@Transactional
		public void writeThenLoseTheLock(String id) throws Exception {
			this.jdbcTemplate.update("insert into entries (id) values (?)", id);
			LockHandle handle = LockContext.require();
			handle.fencingToken();
			expireSession();
			// Lost, then interrupted (interrupt-on-lost): wait for both here, in the holder's thread,
			// parking (which does not clear the flag) rather than sleeping; the commit is what is tested.
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (handle.state() != LockState.LOST || !Thread.currentThread().isInterrupted()) {
				assertThat(System.nanoTime() - deadline).as("lost and interrupted within 10 s").isNegative();
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
			}
			Thread.interrupted();
		}

		@DistributedLock(path = "/ledger")
		@Transactional
		public void write(String id) {
			this.jdbcTemplate.update("insert into entries (id) values (?)", id);
		}

		@DistributedLock(path = "/ledger")
		public boolean blockUntilInterruptedAfterLosingTheLock() throws Exception {
			expireSession();
			try {
				// Blocking work under the lock: must be cut short by the interrupt, not run out.
				Thread.sleep(TimeUnit.SECONDS.toMillis(20));
				return false;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return LockContext.require().state() == LockState.LOST;
			}
		}

		private void expireSession() throws Exception {
			this.client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
		}

	}

	static class Events {

		final List<LockStateEvent> received = new CopyOnWriteArrayList<>();

		@EventListener
		void on(LockStateEvent event) {
			this.received.add(event);
		}

	}

}
