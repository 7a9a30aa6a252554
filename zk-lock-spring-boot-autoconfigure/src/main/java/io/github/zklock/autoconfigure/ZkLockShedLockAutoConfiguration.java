package io.github.zklock.autoconfigure;

import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.zklock.LockTemplate;
import io.github.zklock.shedlock.ZkLockProvider;

/**
 * Auto-configuration of ShedLock's {@link LockProvider} on zk-lock: a {@link ZkLockProvider} on
 * the application's {@link LockTemplate}, with its keys below {@code zk.lock.shedlock.key-prefix},
 * when zk-lock-shedlock is on the class path and the application defines no lock provider of its
 * own. A ShedLock application switches to zk-lock's ephemeral locks by adding the module and
 * removing its own {@code LockProvider} bean; {@code @EnableSchedulerLock} stays the
 * application's.
 */
@AutoConfiguration(after = ZkLockAutoConfiguration.class)
@ConditionalOnClass({ LockProvider.class, ZkLockProvider.class })
@ConditionalOnBean(LockTemplate.class)
@EnableConfigurationProperties(ZkLockProperties.class)
public class ZkLockShedLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockProvider.class)
	ZkLockProvider zkShedLockProvider(LockTemplate lockTemplate, ZkLockProperties properties) {
		return new ZkLockProvider(lockTemplate, properties.getShedlock().getKeyPrefix());
	}

}
