package io.github.zklock.autoconfigure.actuate;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.config.MeterFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.zklock.actuate.ZkLockMetrics;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.ZkLockProperties;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * Auto-configuration of the lock meters ({@code zk.lock.active}, {@code zk.lock.lost}), bound by
 * Spring Boot to every meter registry. The timers {@code zk.lock.acquire} and
 * {@code zk.lock.held} come from the observations the {@code LockTemplate} makes with the
 * application's {@code ObservationRegistry}; their {@code name} tags are capped at
 * {@code zk.lock.metrics.max-names} distinct values.
 */
@AutoConfiguration(after = ZkLockAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(CuratorLockAdmin.class)
public class ZkLockMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ZkLockMetrics zkLockMetrics(CuratorLockAdmin admin) {
		return new ZkLockMetrics(admin);
	}

	/**
	 * At most {@code zk.lock.metrics.max-names} distinct {@code name} tags on the {@code zk.lock}
	 * meters, applied by Spring Boot to every meter registry it configures.
	 * @param properties the zk-lock properties
	 * @return the meter filter
	 */
	@Bean
	MeterFilter zkLockNameTagLimit(ZkLockProperties properties) {
		return LockNameTagLimit.of(properties.getMetrics().getMaxNames());
	}

}
