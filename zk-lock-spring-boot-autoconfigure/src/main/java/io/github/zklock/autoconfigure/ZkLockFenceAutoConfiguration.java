package io.github.zklock.autoconfigure;

import javax.sql.DataSource;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

import io.github.zklock.transaction.JdbcLockFence;

/**
 * Auto-configuration of store-side fencing: a {@link JdbcLockFence} on the application's
 * {@link DataSource}, with a fence table keyed by lock path ({@code zk.lock.fence.table-name}),
 * when spring-jdbc is on the class path and the application has a single DataSource (or a primary
 * one), unless it defines a fence of its own. With {@code zk.lock.fence.initialize-schema=true}
 * the table is created at start-up if it does not exist ({@link JdbcLockFence#createTableSql()});
 * otherwise the application's schema management (a script, Flyway, Liquibase) creates it. Locked
 * code calls {@code fence.advance(grant)} in the transaction of its write.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass(JdbcTemplate.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "zk.lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ZkLockProperties.class)
public class ZkLockFenceAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	JdbcLockFence jdbcLockFence(DataSource dataSource, ZkLockProperties properties) {
		ZkLockProperties.Fence settings = properties.getFence();
		JdbcLockFence fence = FenceTables.create(settings, (tableName) -> JdbcLockFence.fenceTable(dataSource, tableName));
		if (settings.isInitializeSchema()) {
			new JdbcTemplate(dataSource).execute(fence.createTableSql());
		}
		return fence;
	}

}
