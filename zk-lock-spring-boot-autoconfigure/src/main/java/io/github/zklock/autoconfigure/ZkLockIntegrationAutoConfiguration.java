package io.github.zklock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

import io.github.zklock.LockTemplate;
import io.github.zklock.integration.ZkLockRegistry;

/**
 * Auto-configuration of Spring Integration's {@link LockRegistry} on zk-lock: a
 * {@link ZkLockRegistry} on the application's {@link LockTemplate}, with its keys below
 * {@code zk.lock.integration.key-prefix}, when zk-lock-spring-integration is on the class path and
 * the application defines no Spring Integration lock registry of its own. Spring Integration's
 * components that take a lock registry (leader initiators, lock advices, aggregators) are given
 * it by the application; this makes one ready for them.
 */
@AutoConfiguration(after = ZkLockAutoConfiguration.class)
@ConditionalOnClass({ LockRegistry.class, ZkLockRegistry.class })
@ConditionalOnBean(LockTemplate.class)
@EnableConfigurationProperties(ZkLockProperties.class)
public class ZkLockIntegrationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockRegistry.class)
	ZkLockRegistry zkIntegrationLockRegistry(LockTemplate lockTemplate, ZkLockProperties properties) {
		return new ZkLockRegistry(lockTemplate, properties.getIntegration().getKeyPrefix());
	}

}
