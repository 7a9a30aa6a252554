package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executor;

import io.micrometer.observation.ObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import io.github.zklock.LockStateListener;
import io.github.zklock.LockTemplate;
import io.github.zklock.LockTemplateBuilder;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.aop.DistributedLockConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.KeptLocks;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.spi.LockRegistry;

/**
 * The lock part of {@link ZkLockAutoConfiguration}: a {@link CuratorLockRegistry} on the Curator
 * client (unless the application defines a {@link LockRegistry}), told of lock state changes by
 * {@link LockStateListener} beans and through application events, and its operator side
 * ({@link CuratorLockAdmin}, for the endpoint, the health indicator and the meters); the
 * {@link LockTemplate}, with
 * the application's {@code ObservationRegistry} when there is one; and the
 * {@code @DistributedLock} advice, as {@link EnableDistributedLocks @EnableDistributedLocks}
 * would register it, ordered by {@code zk.lock.aspect-order}.
 */
@Configuration(proxyBeanMethods = false)
class ZkLockTemplateConfiguration {

	/** The name of the executor bean of Boot's task execution auto-configuration. */
	static final String APPLICATION_TASK_EXECUTOR = "applicationTaskExecutor";

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(LockRegistry.class)
	CuratorLockRegistry zkLockRegistry(CuratorFramework client, ZkLockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LockStateListener> listeners) {
		CuratorLockRegistry registry = new CuratorLockRegistry(client, properties.getRootPath(),
				properties.getCacheCapacity());
		registry.addLockStateListener(eventPublisher::publishEvent);
		listeners.orderedStream().forEach(registry::addLockStateListener);
		registry.setInterruptOnLost(properties.isInterruptOnLost());
		registry.setRevocationCheckInterval(properties.getRevocationCheckInterval());
		ZkLockProperties.LocalHandoff handoff = properties.getLocalHandoff();
		registry.setLocalHandoff(new LocalHandoff(handoff.isEnabled(), handoff.getMaxGrants(), handoff.getMaxTime()));
		ZkLockProperties.Keep keep = properties.getKeep();
		registry.setKeptLocks(new KeptLocks(keep.isEnabled(), keep.getMaxIdle(), keep.getMaxKeys(), keep.getGiveUpWait()));
		return registry;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(CuratorLockRegistry.class)
	CuratorLockAdmin zkLockAdmin(CuratorLockRegistry registry) {
		return new CuratorLockAdmin(registry);
	}

	/**
	 * The template, with the defaults of requests that do not give their own wait time
	 * ({@code zk.lock.default-wait-time}) or ceiling ({@code zk.lock.default-lock-at-most-for}). Its
	 * asynchronous work (and {@code @DistributedLock} methods returning
	 * {@code CompletableFuture}, {@code Mono} or {@code Flux}) is invoked on Boot's
	 * {@code applicationTaskExecutor} when there is one; the waits for ZooKeeper never occupy it
	 * (see {@link LockTemplateBuilder#asyncExecutor}). With
	 * {@code spring.threads.virtual.enabled=true} (on Java 21+) asynchronous grants are owned by
	 * virtual threads ({@link LockTemplateBuilder#virtualGrantThreads}).
	 */
	@Bean
	@ConditionalOnMissingBean
	LockTemplate lockTemplate(LockRegistry lockRegistry, ZkLockProperties properties,
			ObjectProvider<ObservationRegistry> observationRegistry,
			@Qualifier(APPLICATION_TASK_EXECUTOR) ObjectProvider<Executor> applicationTaskExecutor,
			Environment environment) {
		LockTemplateBuilder template = LockTemplate.builder(lockRegistry)
			.defaultWaitTime(properties.getDefaultWaitTime())
			.asyncExecutor(applicationTaskExecutor.getIfAvailable())
			.virtualGrantThreads(Threading.VIRTUAL.isActive(environment));
		// Unset: the builder's default, no ceiling.
		Duration defaultLockAtMostFor = properties.getDefaultLockAtMostFor();
		if (defaultLockAtMostFor != null) {
			template.defaultLockAtMostFor(defaultLockAtMostFor);
		}
		observationRegistry.ifAvailable(template::observationRegistry);
		return template.build();
	}

	/**
	 * The advice, unless the application turned it on itself with
	 * {@code @EnableDistributedLocks}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingBean(DistributedLockConfiguration.class)
	@EnableDistributedLocks
	static class AdviceConfiguration {

	}

}
