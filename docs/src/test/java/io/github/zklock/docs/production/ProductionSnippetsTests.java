package io.github.zklock.docs.production;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockProperties;
import io.github.zklock.docs.testing.OrderApplication;
import io.github.zklock.test.ZooKeeperExtension;
import io.github.zklock.transaction.JdbcLockFence;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The production checklist's settings and schema work as written: an application started with
 * its properties (the connect string pointed at a real, in-process server, the credentials given)
 * binds them, has zk-lock's health in its readiness group and not in liveness, and locks; the
 * fence table's DDL is the one the fence itself gives, and creates a table it works on.
 */
class ProductionSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void productionSettingsBindAndPutZooKeeperInReadinessOnly() {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(OrderApplication.class)
			.web(WebApplicationType.NONE)
			.properties("spring.config.import=classpath:production/zk-lock-production.properties",
					"ZK_LOCK_CREDENTIALS=orders:s3cret")
			.run("--zk.lock.connect-string=" + zooKeeper.getConnectString())) {
			ZkLockProperties properties = context.getBean(ZkLockProperties.class);
			assertThat(properties.getSessionTimeout()).isEqualTo(Duration.ofSeconds(30));
			assertThat(properties.getDefaultWaitTime()).isEqualTo(Duration.ofSeconds(5));
			assertThat(properties.isFailFast()).isTrue();
			assertThat(properties.getAuth().getCredentials()).isEqualTo("orders:s3cret");
			HealthEndpointGroups groups = context.getBean(HealthEndpointGroups.class);
			assertThat(groups.get("readiness").isMember("zkLock")).isTrue();
			assertThat(groups.get("liveness").isMember("zkLock")).isFalse();
			LockTemplate locks = context.getBean(LockTemplate.class);
			Boolean held = locks.execute("/orders/42", LockMode.EXCLUSIVE, Duration.ofSeconds(5), LockHandle::isHeld);
			assertThat(held).isTrue();
		}
	}

	@Test
	void fenceSchemaIsTheFencesOwnAndCreatesATableItWorksOn() throws Exception {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL("jdbc:h2:mem:fence-schema-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
		String schema = new ClassPathResource("production/fence-schema.sql").getContentAsString(StandardCharsets.UTF_8)
			.lines()
			.filter((line) -> !line.startsWith("--"))
			.reduce("", String::concat)
			.strip();
		JdbcLockFence fence = JdbcLockFence.fenceTable(dataSource);
		assertThat(schema).isEqualTo(fence.createTableSql() + ";");
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute(schema);
		jdbc.update("INSERT INTO zk_lock_fence (lock_path, fencing_token) VALUES ('/locks/orders/42', 7)");
		assertThat(jdbc.queryForObject("SELECT fencing_token FROM zk_lock_fence", Long.class)).isEqualTo(7L);
	}

}
