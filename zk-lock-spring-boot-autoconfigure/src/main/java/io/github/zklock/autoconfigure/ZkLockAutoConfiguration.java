package io.github.zklock.autoconfigure;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import io.micrometer.observation.ObservationRegistry;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.client.ConnectStringParser;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.util.function.SingletonSupplier;

import io.github.zklock.LockProvider;
import io.github.zklock.LockStateListener;
import io.github.zklock.LockTemplate;
import io.github.zklock.aop.DistributedLockAdvisor;
import io.github.zklock.aop.DistributedLockInterceptor;
import io.github.zklock.aop.DistributedLockMethodValidator;
import io.github.zklock.aop.LockOperationSource;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.transaction.LockCommitGuard;

/**
 * Auto-configuration for zk-lock: a started
 * {@link CuratorFramework} built from {@code zk.lock.*} (unless the application defines one), an
 * optional embedded ZooKeeper server, the {@link CuratorLockRegistry}, the {@link LockTemplate}
 * and the {@code @DistributedLock} advisor. {@code zk.lock.enabled=false} switches it all off.
 */
@AutoConfiguration
@ConditionalOnClass(CuratorFramework.class)
@ConditionalOnBooleanProperty(name = "zk.lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ZkLockProperties.class)
@Import({ ZkLockAutoConfiguration.EmbeddedZooKeeperConfiguration.class,
		ZkLockAutoConfiguration.MissingEmbeddedZooKeeperConfiguration.class,
		ZkLockAutoConfiguration.CommitGuardConfiguration.class, ZkLockAutoConfiguration.AutoProxyRegistrar.class })
public class ZkLockAutoConfiguration {

	static final String CURATOR_TEST_CLASS = "org.apache.curator.test.TestingServer";

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	CuratorFramework zkLockCuratorFramework(ZkLockProperties properties,
			ObjectProvider<EmbeddedZooKeeper> embeddedZooKeeper,
			ObjectProvider<CuratorFrameworkBuilderCustomizer> customizers) {
		EmbeddedZooKeeper embedded = embeddedZooKeeper.getIfAvailable();
		String connectString = (embedded != null) ? embedded.getConnectString()
				: validConnectString(properties.getConnectString());
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs(millis("zk.lock.session-timeout", properties.getSessionTimeout()))
			.connectionTimeoutMs(millis("zk.lock.connection-timeout", properties.getConnectionTimeout()))
			.retryPolicy(retryPolicy(properties.getRetry()));
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		CuratorFramework client = builder.build();
		client.start();
		return client;
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(LockProvider.class)
	CuratorLockRegistry zkLockRegistry(CuratorFramework client, ZkLockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LockStateListener> listeners) {
		if (properties.getCacheCapacity() < 1) {
			throw new IllegalArgumentException(
					"zk.lock.cache-capacity must be positive, was " + properties.getCacheCapacity());
		}
		CuratorLockRegistry registry = new CuratorLockRegistry(client, properties.getRootPath(),
				properties.getCacheCapacity());
		registry.addLockStateListener(eventPublisher::publishEvent);
		listeners.orderedStream().forEach(registry::addLockStateListener);
		registry.setInterruptOnLost(properties.isInterruptOnLost());
		return registry;
	}

	@Bean
	@ConditionalOnMissingBean
	LockTemplate lockTemplate(LockProvider lockProvider, ZkLockProperties properties,
			ObjectProvider<ObservationRegistry> observationRegistry) {
		LockTemplate template = new LockTemplate(lockProvider, properties.getDefaultWaitTime());
		observationRegistry.ifAvailable(template::setObservationRegistry);
		return template;
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static LockOperationSource zkLockOperationSource(BeanFactory beanFactory) {
		return new LockOperationSource(new LockPathExpressionEvaluator(beanFactory));
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static DistributedLockMethodValidator zkLockMethodValidator(ObjectProvider<LockOperationSource> operationSource) {
		return new DistributedLockMethodValidator(operationSource.getObject());
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static DistributedLockAdvisor zkLockAdvisor(ObjectProvider<LockOperationSource> operationSource,
			ObjectProvider<LockTemplate> lockTemplate, Environment environment) {
		// Bound directly: this static bean is created before configuration properties beans are.
		int order = Binder.get(environment)
			.bind("zk.lock.aspect-order", Integer.class)
			.orElse(new ZkLockProperties().getAspectOrder());
		// The template (and with it the Curator client) is looked up on the first locked call, so
		// that creating the advisor early does not pull the client into the post-processor phase.
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(operationSource.getObject(),
				SingletonSupplier.of(lockTemplate::getObject));
		return new DistributedLockAdvisor(interceptor, order);
	}

	/**
	 * Rolls back a transaction that would commit after its lock was lost.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(TransactionExecutionListener.class)
	static class CommitGuardConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LockCommitGuard zkLockCommitGuard() {
			return new LockCommitGuard();
		}

	}

	private static String validConnectString(String connectString) {
		List<InetSocketAddress> servers;
		try {
			servers = new ConnectStringParser(connectString).getServerAddresses();
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("zk.lock.connect-string '" + connectString
					+ "' is malformed, expected host:port[,host:port...][/chroot]: " + ex.getMessage(), ex);
		}
		if (servers.isEmpty() || servers.stream().anyMatch((server) -> server.getHostString().isEmpty())) {
			throw new IllegalArgumentException("zk.lock.connect-string '" + connectString
					+ "' names no server, expected host:port[,host:port...][/chroot]");
		}
		return connectString;
	}

	private static int millis(String property, Duration duration) {
		if (duration.isNegative() || duration.isZero() || duration.toMillis() > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					property + " must be between 1 ms and " + Integer.MAX_VALUE + " ms, was " + duration);
		}
		return (int) duration.toMillis();
	}

	private static RetryPolicy retryPolicy(ZkLockProperties.Retry retry) {
		int baseSleep = millis("zk.lock.retry.base-sleep", retry.getBaseSleep());
		if (retry.getMaxSleep() == null) {
			return new ExponentialBackoffRetry(baseSleep, retry.getMaxRetries());
		}
		return new ExponentialBackoffRetry(baseSleep, retry.getMaxRetries(),
				millis("zk.lock.retry.max-sleep", retry.getMaxSleep()));
	}

	/**
	 * Starts the in-process ZooKeeper server before the client, when
	 * {@code zk.lock.embedded.enabled=true} and curator-test is on the class path.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty("zk.lock.embedded.enabled")
	@ConditionalOnClass(name = CURATOR_TEST_CLASS)
	static class EmbeddedZooKeeperConfiguration {

		@Bean
		@ConditionalOnMissingBean
		EmbeddedZooKeeper zkLockEmbeddedZooKeeper(ZkLockProperties properties) throws Exception {
			return new EmbeddedZooKeeper(properties.getEmbedded().getPort());
		}

	}

	/**
	 * Fails the start with an actionable message when the embedded server is asked for but
	 * curator-test is missing, instead of silently connecting to {@code connect-string}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty("zk.lock.embedded.enabled")
	@ConditionalOnMissingClass(CURATOR_TEST_CLASS)
	static class MissingEmbeddedZooKeeperConfiguration {

		MissingEmbeddedZooKeeperConfiguration() {
			throw new IllegalStateException("zk.lock.embedded.enabled=true needs org.apache.curator:curator-test on "
					+ "the class path: add it as a dependency, or set zk.lock.embedded.enabled=false and "
					+ "zk.lock.connect-string to a ZooKeeper ensemble");
		}

	}

	/**
	 * Makes sure an auto-proxy creator exists, even with {@code spring.aop.auto=false}; an
	 * AspectJ-aware one registered by Spring Boot takes precedence.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
