package io.github.zklock.transaction;

import java.time.Duration;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.reactive.ReactiveLockContext;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The commit guard of reactive transactions, with a real reactive transaction manager
 * ({@link R2dbcTransactionManager} on an in-memory H2 database through R2DBC) in a plain Spring
 * context with {@code @EnableDistributedLocks}: a transaction of {@link TransactionalOperator}, or
 * of reactive {@code @Transactional}, inside a locked {@code Mono} is rolled back when the lock
 * was lost before commit (the session is expired on the server; interrupt-on-lost is off, so the
 * work goes on to the commit) and the {@code Mono} fails with {@link LockLostException}; it
 * commits while the lock is held. The rolled-back row's key is written again afterwards: a
 * transaction left open instead of rolled back would keep that key locked.
 */
class ReactiveLockCommitGuardTests {

	private static final Duration BOUND = Duration.ofSeconds(20);

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static AnnotationConfigApplicationContext context;

	@BeforeAll
	static void start() {
		context = new AnnotationConfigApplicationContext(Ledger.class);
		context.getBean(DatabaseClient.class)
			.sql("create table entries (id varchar(64) primary key)")
			.then()
			.block(BOUND);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void reactiveTransactionManagerBeanIsGuardedAndKeepsItsInterfaces() {
		ReactiveTransactionManager manager = context.getBean(ReactiveTransactionManager.class);
		assertThat(ReactiveLockCommitGuard.isGuarded(manager)).isTrue();
		assertThat(manager).isInstanceOf(ConfigurableTransactionManager.class);
		assertThat(((ConfigurableTransactionManager) manager).getTransactionExecutionListeners())
			.filteredOn(LockCommitGuard.class::isInstance)
			.hasSize(1);
		assertThat(ReactiveLockCommitGuard.guard(manager)).isSameAs(manager);
	}

	@Test
	void operatorTransactionIsRolledBackWhenTheLockWasLostBeforeCommit() {
		Ledger ledger = context.getBean(Ledger.class);
		assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> ledger.writeWithOperator("operator-lost", true).block(BOUND))
			.withMessageContaining("/locks/ledger");
		assertThat(count("operator-lost")).isZero();
		awaitReconnected();
		ledger.writeWithOperator("operator-lost", false).block(BOUND);
		assertThat(count("operator-lost")).isOne();
	}

	@Test
	void transactionalMethodIsRolledBackWhenTheLockWasLostBeforeCommit() {
		Ledger ledger = context.getBean(Ledger.class);
		assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> ledger.writeTransactional("annotated-lost", true).block(BOUND))
			.withMessageContaining("/locks/ledger");
		assertThat(count("annotated-lost")).isZero();
		awaitReconnected();
		ledger.writeTransactional("annotated-lost", false).block(BOUND);
		assertThat(count("annotated-lost")).isOne();
	}

	@Test
	void transactionCommitsWhileTheLockIsHeld() {
		Ledger ledger = context.getBean(Ledger.class);
		ledger.writeWithOperator("operator-held", false).block(BOUND);
		ledger.writeTransactional("annotated-held", false).block(BOUND);
		assertThat(count("operator-held")).isOne();
		assertThat(count("annotated-held")).isOne();
	}

	private static long count(String id) {
		return context.getBean(DatabaseClient.class)
			.sql("select count(*) from entries where id = :id")
			.bind("id", id)
			.map((row) -> row.get(0, Long.class))
			.one()
			.block(BOUND);
	}

	private static void awaitReconnected() {
		CuratorFramework client = context.getBean(CuratorFramework.class);
		await().atMost(BOUND).until(() -> client.getZookeeperClient().isConnected());
	}

	/** A plain Spring application with an R2DBC database and the lock beans; it locks its own methods. */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@EnableTransactionManagement
	static class Ledger {

		@Bean
		ConnectionFactory connectionFactory() {
			return ConnectionFactories.get("r2dbc:h2:mem:///guard;DB_CLOSE_DELAY=-1");
		}

		@Bean
		R2dbcTransactionManager transactionManager(ConnectionFactory connectionFactory) {
			return new R2dbcTransactionManager(connectionFactory);
		}

		@Bean
		TransactionalOperator transactionalOperator(ReactiveTransactionManager transactionManager) {
			return TransactionalOperator.create(transactionManager);
		}

		@Bean
		DatabaseClient databaseClient(ConnectionFactory connectionFactory) {
			return DatabaseClient.create(connectionFactory);
		}

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient((builder) -> builder.sessionTimeoutMs(5000));
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, Duration.ofSeconds(10));
		}

		@DistributedLock(path = "/ledger")
		public Mono<Void> writeWithOperator(String id, boolean loseTheLock) {
			return insert(id).then(loseTheLock ? loseTheLock() : Mono.empty())
				.as(context.getBean(TransactionalOperator.class)::transactional);
		}

		@DistributedLock(path = "/ledger")
		@Transactional
		public Mono<Void> writeTransactional(String id, boolean loseTheLock) {
			return insert(id).then(loseTheLock ? loseTheLock() : Mono.empty());
		}

		private static Mono<Void> insert(String id) {
			return context.getBean(DatabaseClient.class)
				.sql("insert into entries (id) values (:id)")
				.bind("id", id)
				.then();
		}

		/** Expire the session and wait until the grant of the Reactor context is lost. */
		private static Mono<Void> loseTheLock() {
			return ReactiveLockContext.current().flatMap((handle) -> Mono.fromCallable(() -> {
				handle.fencingToken();
				zooKeeper.expireSession(context.getBean(CuratorFramework.class));
				await().atMost(BOUND).until(() -> handle.state() == LockState.LOST);
				return handle;
			}).subscribeOn(Schedulers.boundedElastic())).then();
		}

	}

}
