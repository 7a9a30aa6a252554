package io.github.zklock.transaction;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A lock lost while its transaction runs: the commit guard rolls the transaction back, the
 * holder is told through an application event, and with interrupt-on-lost its thread is
 * interrupted. The session is expired on the server, as a long pause would. A plain Spring
 * context: the guard reaches a plain {@link DataSourceTransactionManager} bean through
 * {@link LockCommitGuardPostProcessor}, which {@code @EnableDistributedLocks} registers.
 */
class LockCommitGuardTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static AnnotationConfigApplicationContext context;

	@BeforeAll
	static void start() {
		context = new AnnotationConfigApplicationContext(Ledger.class);
		context.getBean(JdbcTemplate.class).execute("create table entries (id varchar(64) primary key)");
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void plainTransactionManagerBeanHasTheCommitGuard() {
		assertThat(context.getBean(DataSourceTransactionManager.class).getTransactionExecutionListeners())
			.filteredOn(LockCommitGuard.class::isInstance)
			.hasSize(1);
	}

	@Test
	void transactionIsRolledBackWhenItsLockWasLostBeforeCommit() {
		Ledger ledger = context.getBean(Ledger.class);
		Events events = context.getBean(Events.class);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> ledger.writeThenLoseTheLock("lost-write"))
			.withMessageContaining("/locks/ledger");
		assertThat(context.getBean(JdbcTemplate.class)
			.queryForObject("select count(*) from entries where id = 'lost-write'", Integer.class)).isZero();
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
		assertThat(context.getBean(JdbcTemplate.class)
			.queryForObject("select count(*) from entries where id = 'after-recovery'", Integer.class)).isOne();
	}

	@Test
	void holderThreadIsInterruptedWhenItsLockIsLost() throws Exception {
		Ledger ledger = context.getBean(Ledger.class);
		assertThat(ledger.blockUntilInterruptedAfterLosingTheLock()).isTrue();
		assertThat(Thread.interrupted()).as("interrupt flag left for the caller").isTrue();
	}

	/**
	 * A plain Spring application with a database and the lock beans; it locks its own methods.
	 * The Boot version set the same up with {@code zk.lock.session-timeout=5s},
	 * {@code zk.lock.default-wait-time=10s} and {@code zk.lock.interrupt-on-lost=true}, and the
	 * auto-configured registry published lock state changes as application events.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@EnableTransactionManagement
	static class Ledger {

		@Bean(destroyMethod = "shutdown")
		EmbeddedDatabase dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		JdbcTemplate jdbcTemplate(DataSource dataSource) {
			return new JdbcTemplate(dataSource);
		}

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient((builder) -> builder.sessionTimeoutMs(5000));
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client, ApplicationEventPublisher eventPublisher) {
			CuratorLockRegistry registry = new CuratorLockRegistry(client, "/locks", 10_000);
			registry.addLockStateListener(eventPublisher::publishEvent);
			registry.setInterruptOnLost(true);
			return registry;
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, Duration.ofSeconds(10));
		}

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

		/**
		 * Expire the client's session on the server: the client learns it as it reconnects after its
		 * connection dropped, as after a long pause. Not with ZooKeeper's client-side hook
		 * ({@code injectSessionExpiration()}), which hands a connected client an Expired event, a
		 * state a real expiry never produces: Curator's handling of it may then mark the client
		 * disconnected after its new session connected, and the client stays "not connected" on a
		 * live session. Run on another thread (the extension's expiry only reads its connect string
		 * there) and joined, which the interrupt of interrupt-on-lost, when the lock is lost before the
		 * expiry returns, neither cuts short nor clears.
		 */
		private static void expireSession() {
			CuratorFramework client = context.getBean(CuratorFramework.class);
			CompletableFuture.runAsync(() -> {
				try {
					zooKeeper.expireSession(client);
				}
				catch (Exception ex) {
					throw new CompletionException(ex);
				}
			}).join();
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
