package io.github.zklock.transaction;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A lock lost while its transaction runs: the commit guard rolls the transaction back, the
 * holder is told through an application event, and with {@code zk.lock.interrupt-on-lost} its
 * thread is interrupted. The session is expired on the server, as a long pause would.
 */
class LockCommitGuardTests {

	private static TestingServer server;

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void start() throws Exception {
		server = new TestingServer(true);
		context = new SpringApplicationBuilder(Ledger.class, DataSourceAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
				TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class,
				AopAutoConfiguration.class, ZkLockAutoConfiguration.class)
			.web(WebApplicationType.NONE)
			.properties("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
					"zk.lock.connect-string=" + server.getConnectString(), "zk.lock.session-timeout=5s",
					"zk.lock.default-wait-time=10s", "zk.lock.interrupt-on-lost=true")
			.run();
		context.getBean(JdbcTemplate.class).execute("create table entries (id varchar(64) primary key)");
	}

	@AfterAll
	static void stop() throws Exception {
		context.close();
		server.close();
	}

	@Test
	void transactionIsRolledBackWhenItsLockWasLostBeforeCommit() {
		Ledger ledger = context.getBean(Ledger.class);
		Events events = context.getBean(Events.class);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> ledger.writeThenLoseTheLock("lost-write"))
			.withMessageContaining("/locks/ledger");
		assertThat(context.getBean(JdbcTemplate.class)
			.queryForObject("select count(*) from entries where id = 'lost-write'", Integer.class)).isZero();
		assertThat(events.received).anySatisfy((event) -> {
			assertThat(event.state()).isEqualTo(LockState.LOST);
			assertThat(event.path()).isEqualTo("/locks/ledger");
			assertThat(event.fencingToken()).isPresent();
		});
		// The client recovers with a new session; the next call works and commits.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> context.getBean(CuratorFramework.class).getZookeeperClient().isConnected());
		ledger.write("after-recovery");
		assertThat(context.getBean(JdbcTemplate.class)
			.queryForObject("select count(*) from entries where id = 'after-recovery'", Integer.class)).isOne();
	}

	@Test
	void holderThreadIsInterruptedWhenItsLockIsLost() throws Exception {
		Ledger ledger = context.getBean(Ledger.class);
		assertThat(ledger.blockUntilInterruptedAfterLosingTheLock()).isTrue();
		assertThat(Thread.interrupted()).as("interrupt flag left for the caller").isTrue();
	}

	@Configuration(proxyBeanMethods = false)
	static class Ledger {

		@Bean
		Events events() {
			return new Events();
		}

		@DistributedLock(path = "/ledger")
		@Transactional
		public void writeThenLoseTheLock(String id) throws Exception {
			context.getBean(JdbcTemplate.class).update("insert into entries (id) values (?)", id);
			LockHandle handle = LockContext.require();
			handle.fencingToken();
			expireSession();
			await().atMost(Duration.ofSeconds(10)).until(() -> handle.state() == LockState.LOST);
			Thread.interrupted();
		}

		@DistributedLock(path = "/ledger")
		@Transactional
		public void write(String id) {
			context.getBean(JdbcTemplate.class).update("insert into entries (id) values (?)", id);
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

		private static void expireSession() throws Exception {
			context.getBean(CuratorFramework.class).getZookeeperClient().getZooKeeper().getTestable()
				.injectSessionExpiration();
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
