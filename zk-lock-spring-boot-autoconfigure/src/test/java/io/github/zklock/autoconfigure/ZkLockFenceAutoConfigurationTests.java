package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.ZooKeeperExtension;
import io.github.zklock.transaction.JdbcLockFence;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ZkLockFenceAutoConfiguration}: a {@link JdbcLockFence} with a fence table on
 * the application's single DataSource, its table from {@code zk.lock.fence.table-name} (default,
 * configured, rejected naming the property), the table created at start-up only with
 * {@code zk.lock.fence.initialize-schema=true}, and then a locked write fenced end to end in a
 * Boot transaction (real ZooKeeper, H2); when it backs off: the application's own fence, no
 * DataSource, two DataSources without a primary one, spring-jdbc missing, zk-lock switched off;
 * its registration and the metadata of its two properties. What the fence does is tested in
 * zk-lock-spring.
 */
class ZkLockFenceAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, ZkLockFenceAutoConfiguration.class));

	@Test
	void providesAFenceTableOnTheDataSourceWithoutCreatingIt() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(JdbcLockFence.class);
			JdbcLockFence fence = context.getBean(JdbcLockFence.class);
			assertThat(fence.isFenceTable()).isTrue();
			assertThat(fence.getTableName()).isEqualTo(JdbcLockFence.DEFAULT_TABLE);
			assertThat(tables(context)).doesNotContain("ZK_LOCK_FENCE");
		});
	}

	@Test
	void usesTheConfiguredTableName() {
		this.contextRunner.withPropertyValues("zk.lock.fence.table-name=app_fence")
			.run((context) -> assertThat(context.getBean(JdbcLockFence.class).getTableName()).isEqualTo("app_fence"));
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
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
					TransactionAutoConfiguration.class, ZkLockAutoConfiguration.class,
					ZkLockFenceAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
					"zk.lock.fence.initialize-schema=true", "zk.lock.fence.table-name=app_fence")
			.run((context) -> {
				assertThat(tables(context)).contains("APP_FENCE");
				JdbcLockFence fence = context.getBean(JdbcLockFence.class);
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				LockHandle grant = context.getBean(LockTemplate.class)
					.acquire("/stock/apple", LockMode.EXCLUSIVE, Duration.ZERO);
				try {
					context.getBean(TransactionTemplate.class).executeWithoutResult((status) -> fence.advance(grant));
					assertThat(jdbc.queryForObject("SELECT fencing_token FROM app_fence WHERE lock_path = ?",
							Long.class, "/locks/stock/apple"))
						.isEqualTo(grant.fencingToken());
				}
				finally {
					grant.release();
				}
			});
	}

	@Test
	void backsOffForTheApplicationsOwnFence() {
		this.contextRunner
			.withBean("ownFence", JdbcLockFence.class,
					() -> JdbcLockFence.guardedRows(new DriverManagerDataSource(), "stock", "id", "fencing_token"))
			.run((context) -> {
				assertThat(context).hasSingleBean(JdbcLockFence.class).doesNotHaveBean("jdbcLockFence");
				assertThat(context.getBean(JdbcLockFence.class).isFenceTable()).isFalse();
			});
	}

	@Test
	void backsOffWithoutADataSource() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockFenceAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(JdbcLockFence.class));
	}

	@Test
	void backsOffWithTwoDataSourcesAndNoPrimaryOne() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockFenceAutoConfiguration.class))
			.withBean("orders", DataSource.class, DriverManagerDataSource::new)
			.withBean("audit", DataSource.class, DriverManagerDataSource::new)
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(JdbcLockFence.class));
	}

	@Test
	void backsOffWithoutSpringJdbcOnTheClassPath() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockFenceAutoConfiguration.class))
			.withBean(DataSource.class, DriverManagerDataSource::new)
			.withClassLoader(new FilteredClassLoader(JdbcTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(JdbcLockFence.class));
	}

	@Test
	void backsOffWhenZkLockIsDisabled() {
		this.contextRunner.withPropertyValues("zk.lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(DataSource.class)
				.doesNotHaveBean(JdbcLockFence.class));
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(ZkLockFenceAutoConfiguration.class.getName());
	}

	@Test
	void describesItsPropertiesWithTheirDefaults() throws IOException {
		List<Map<String, Object>> properties = new ArrayList<>();
		for (URL url : Collections.list(getClass().getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				properties.addAll(JsonPath.read(new String(in.readAllBytes(), StandardCharsets.UTF_8),
						"$.properties[?(@.name =~ /zk\\.lock\\.fence\\..*/)]"));
			}
		}
		assertThat(properties).extracting((property) -> property.get("name"))
			.containsExactlyInAnyOrder("zk.lock.fence.table-name", "zk.lock.fence.initialize-schema");
		assertThat(properties).allSatisfy((property) -> assertThat((String) property.get("description")).isNotBlank());
		assertThat(properties).filteredOn((property) -> property.get("name").equals("zk.lock.fence.table-name"))
			.singleElement()
			.satisfies((property) -> assertThat(property.get("defaultValue")).isEqualTo(JdbcLockFence.DEFAULT_TABLE));
		assertThat(properties).filteredOn((property) -> property.get("name").equals("zk.lock.fence.initialize-schema"))
			.singleElement()
			.satisfies((property) -> assertThat(property.get("defaultValue")).isEqualTo(false));
	}

	/** The tables of the context's (H2) database, by their stored (upper-case) names. */
	private static List<String> tables(AssertableApplicationContext context) {
		return new JdbcTemplate(context.getBean(DataSource.class)).queryForList(
				"SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'PUBLIC'", String.class);
	}

}
