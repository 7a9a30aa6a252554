package io.github.zklock.autoconfigure.actuate;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.github.zklock.Leadership;
import io.github.zklock.actuate.ZkLockHealthIndicator;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * Auto-configuration of the {@code zkLock} health indicator; switch it off with
 * {@code management.health.zklock.enabled=false}.
 */
@AutoConfiguration(after = ZkLockAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, CuratorFramework.class })
@ConditionalOnBean(CuratorLockAdmin.class)
@ConditionalOnEnabledHealthIndicator("zklock")
public class ZkLockHealthContributorAutoConfiguration {

	/** How long the health check waits for the server to answer its probe. */
	static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

	@Bean
	@ConditionalOnMissingBean(name = "zkLockHealthIndicator")
	ZkLockHealthIndicator zkLockHealthIndicator(CuratorFramework client, CuratorLockAdmin admin,
			ObjectProvider<Leadership> leadership) {
		return new ZkLockHealthIndicator(client, admin, PROBE_TIMEOUT, leadership.getIfUnique());
	}

}
