package io.github.zklock.autoconfigure;

import java.time.Duration;

import io.r2dbc.spi.ConnectionFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.r2dbc.core.DatabaseClient;

import io.github.zklock.transaction.R2dbcLockFence;

/**
 * Auto-configuration of store-side fencing for reactive applications: an {@link R2dbcLockFence}
 * on the application's R2DBC {@link ConnectionFactory}, with the fence table of
 * {@link ZkLockFenceAutoConfiguration} ({@code zk.lock.fence.table-name}), when spring-r2dbc is on
 * the class path and the application has a single ConnectionFactory (or a primary one), unless it
 * defines a fence of its own. With {@code zk.lock.fence.initialize-schema=true} the table is
 * created at start-up if it does not exist ({@link R2dbcLockFence#createTableSql()}, waited for
 * at most 30 s). Locked reactive code subscribes to {@code fence.advance(grant)} in the reactive
 * transaction of its write. An application with both a DataSource and a ConnectionFactory gets
 * both fences, on one table name.
 */
@AutoConfiguration(afterName = "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration")
@ConditionalOnClass({ DatabaseClient.class, ConnectionFactory.class })
@ConditionalOnSingleCandidate(ConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "zk.lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ZkLockProperties.class)
public class ZkLockR2dbcFenceAutoConfiguration {

	/** The longest wait for the fence table's creation at start-up. */
	static final Duration INITIALIZE_TIMEOUT = Duration.ofSeconds(30);

	@Bean
	@ConditionalOnMissingBean
	R2dbcLockFence r2dbcLockFence(ConnectionFactory connectionFactory, ZkLockProperties properties) {
		ZkLockProperties.Fence settings = properties.getFence();
		R2dbcLockFence fence = FenceTables.create(settings,
				(tableName) -> R2dbcLockFence.fenceTable(connectionFactory, tableName));
		if (settings.isInitializeSchema()) {
			DatabaseClient client = DatabaseClient.create(connectionFactory);
			fence.createTableSql().flatMap((sql) -> client.sql(sql).then()).block(INITIALIZE_TIMEOUT);
		}
		return fence;
	}

}
