package io.github.zklock.aop;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;

import io.github.zklock.annotation.EnableDistributedLocks;

/**
 * Registers an auto-proxy creator unless one exists (an AspectJ-aware one, such as Spring Boot's,
 * is kept: it applies advisors too), switched to class proxies when
 * {@link EnableDistributedLocks#proxyTargetClass()} says so.
 */
public class DistributedLockProxyRegistrar implements ImportBeanDefinitionRegistrar {

	@Override
	public void registerBeanDefinitions(AnnotationMetadata importingClassMetadata, BeanDefinitionRegistry registry) {
		AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		AnnotationAttributes attributes = AnnotationAttributes
			.fromMap(importingClassMetadata.getAnnotationAttributes(EnableDistributedLocks.class.getName()));
		if (attributes != null && attributes.getBoolean("proxyTargetClass")) {
			AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
		}
	}

}
