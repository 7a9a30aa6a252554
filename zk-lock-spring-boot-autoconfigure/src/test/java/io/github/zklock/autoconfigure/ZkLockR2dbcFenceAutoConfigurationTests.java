package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.ZooKeeperExtension;
import io.github.zklock.transaction.R2dbcLockFence;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ZkLockR2dbcFenceAutoConfiguration}: an {@link R2dbcLockFence} with a fence
 * table on the application's single R2DBC ConnectionFactory, its table from
 * {@code zk.lock.fence.table-name} (default, configured, rejected naming the property), the table
 * created at start-up only with {@code zk.lock.fence.initialize-schema=true}, and then a locked
 * write fenced end to end in a reactive transaction (real ZooKeeper, H2 through r2dbc-h2); when it
 * backs off: the application's own fence, no ConnectionFactory, two without a primary one,
 * spring-r2dbc missing, zk-lock switched off; its registration. The properties' metadata is
 * {@link ZkLockFenceAutoConfigurationTests}'; what the fence does is tested in zk-lock-spring.
 */
class ZkLockR2dbcFenceAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockR2dbcFenceAutoConfiguration.class))
		.withBean(ConnectionFactory.class, ZkLockR2dbcFenceAutoConfigurationTests::h2);

	@Test
	void providesAFenceTableOnTheConnectionFactoryWithoutCreatingIt() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(R2dbcLockFence.class);
			R2dbcLockFence fence = context.getBean(R2dbcLockFence.class);
			assertThat(fence.isFenceTable()).isTrue();
			assertThat(fence.getTableName()).isEqualTo(R2dbcLockFence.DEFAULT_TABLE);
			assertThat(tables(context)).doesNotContain("ZK_LOCK_FENCE");
		});
	}

	@Test
	void usesTheConfiguredTableName() {
		this.contextRunner.withPropertyValues("zk.lock.fence.table-name=app_fence")
			.run((context) -> assertThat(context.getBean(R2dbcLockFence.class).getTableName()).isEqualTo("app_fence"));
	}

	@Test
	void rejectsATableNameThatIsNotAnIdentifierNamingTheProperty() {
		this.contextRunner.withPropertyValues("zk.lock.fence.table-name=fence; DROP TABLE orders").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("fence; DROP TABLE orders");
			assertThat(context.getStartupFailure()).hasStackTraceContaining("zk.lock.fence.table-name");
		});
	}

	@Test
	void createsTheTableAtStartUpWhenAskedAndFencesALockedWrite() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
					"zk.lock.fence.initialize-schema=true", "zk.lock.fence.table-name=app_fence")
			.run((context) -> {
				assertThat(tables(context)).contains("APP_FENCE");
				ConnectionFactory connectionFactory = context.getBean(ConnectionFactory.class);
				R2dbcLockFence fence = context.getBean(R2dbcLockFence.class);
				TransactionalOperator transaction = TransactionalOperator
					.create(new R2dbcTransactionManager(connectionFactory));
				LockHandle grant = context.getBean(LockTemplate.class)
					.acquire("/stock/apple", LockMode.EXCLUSIVE, Duration.ZERO);
				try {
					transaction.transactional(fence.advance(grant)).block(Duration.ofSeconds(10));
					assertThat(DatabaseClient.create(connectionFactory)
						.sql("SELECT fencing_token FROM app_fence WHERE lock_path = :path")
						.bind("path", "/locks/stock/apple")
						.map((row) -> row.get(0, Long.class))
						.one()
						.block(Duration.ofSeconds(10))).isEqualTo(grant.fencingToken());
				}
				finally {
					grant.release();
				}
			});
	}

	@Test
	void backsOffForTheApplicationsOwnFence() {
		this.contextRunner
			.withBean("ownFence", R2dbcLockFence.class,
					() -> R2dbcLockFence.guardedRows(h2(), "stock", "id", "fencing_token"))
			.run((context) -> {
				assertThat(context).hasSingleBean(R2dbcLockFence.class).doesNotHaveBean("r2dbcLockFence");
				assertThat(context.getBean(R2dbcLockFence.class).isFenceTable()).isFalse();
			});
	}

	@Test
	void backsOffWithoutAConnectionFactory() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockR2dbcFenceAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(R2dbcLockFence.class));
	}

	@Test
	void backsOffWithTwoConnectionFactoriesAndNoPrimaryOne() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockR2dbcFenceAutoConfiguration.class))
			.withBean("orders", ConnectionFactory.class, ZkLockR2dbcFenceAutoConfigurationTests::h2)
			.withBean("audit", ConnectionFactory.class, ZkLockR2dbcFenceAutoConfigurationTests::h2)
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(R2dbcLockFence.class));
	}

	@Test
	void backsOffWithoutSpringR2dbcOnTheClassPath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(DatabaseClient.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(R2dbcLockFence.class));
	}

	@Test
	void backsOffWhenZkLockIsDisabled() {
		this.contextRunner.withPropertyValues("zk.lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(ConnectionFactory.class)
				.doesNotHaveBean(R2dbcLockFence.class));
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(ZkLockR2dbcFenceAutoConfiguration.class.getName());
	}

	/** A new in-memory H2 database, kept while the JVM runs. */
	private static ConnectionFactory h2() {
		return new H2ConnectionFactory(H2ConnectionConfiguration.builder()
			.inMemory("r2dbc-fence-" + UUID.randomUUID())
			.property("DB_CLOSE_DELAY", "-1")
			.build());
	}

	/** The tables of the context's (H2) database, by their stored (upper-case) names. */
	private static List<String> tables(AssertableApplicationContext context) {
		return DatabaseClient.create(context.getBean(ConnectionFactory.class))
			.sql("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'PUBLIC'")
			.map((row) -> row.get(0, String.class))
			.all()
			.collectList()
			.block(Duration.ofSeconds(10));
	}

}
