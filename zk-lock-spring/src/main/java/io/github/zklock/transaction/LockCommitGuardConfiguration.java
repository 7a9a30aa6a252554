package io.github.zklock.transaction;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * Adds the {@link LockCommitGuard} to the application's transaction managers; imported by
 * {@code @EnableDistributedLocks} when spring-tx is on the class path.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class LockCommitGuardConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LockCommitGuardPostProcessor zkLockCommitGuardPostProcessor() {
		return new LockCommitGuardPostProcessor();
	}

}
