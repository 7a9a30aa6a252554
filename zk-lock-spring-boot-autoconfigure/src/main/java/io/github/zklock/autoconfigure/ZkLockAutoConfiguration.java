package io.github.zklock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
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
import io.github.zklock.curator.LockAclProvider;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.transaction.LockCommitGuard;

/**
 * Auto-configuration for zk-lock: a started
 * {@link CuratorFramework} built from {@code zk.lock.*} (unless the application defines one), an
 * optional embedded ZooKeeper server, the {@link CuratorLockRegistry}, the {@link LockTemplate}
 * and the {@code @DistributedLock} advisor. {@code zk.lock.enabled=false} switches it all off.
 *
 * <p>With {@code zk.lock.auth.credentials}, the client authenticates and creates the root path
 * (persistent, as soon as it connects) and the lock znodes with a creator-only ACL
 * ({@link LockAclProvider}). With
 * {@code zk.lock.fail-fast=true}, the start waits up to {@code zk.lock.connection-timeout} for a
 * first connection and fails with {@link ZooKeeperUnreachableException} if none is made.
 */
@AutoConfiguration
@ConditionalOnClass(CuratorFramework.class)
@ConditionalOnBooleanProperty(name = "zk.lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ZkLockProperties.class)
@Import({ ZkLockAutoConfiguration.EmbeddedZooKeeperConfiguration.class,
		ZkLockAutoConfiguration.MissingEmbeddedZooKeeperConfiguration.class,
		ZkLockAutoConfiguration.CommitGuardConfiguration.class,
		ZkLockAutoConfiguration.CredentialsSanitizingConfiguration.class,
		ZkLockAutoConfiguration.AutoProxyRegistrar.class })
public class ZkLockAutoConfiguration {

	private static final Log logger = LogFactory.getLog(ZkLockAutoConfiguration.class);

	static final String CURATOR_TEST_CLASS = "org.apache.curator.test.TestingServer";

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	CuratorFramework zkLockCuratorFramework(ZkLockProperties properties,
			ObjectProvider<EmbeddedZooKeeper> embeddedZooKeeper,
			ObjectProvider<CuratorFrameworkBuilderCustomizer> customizers) {
		EmbeddedZooKeeper embedded = embeddedZooKeeper.getIfAvailable();
		String connectString = (embedded != null) ? embedded.getConnectString() : properties.getConnectString();
		// The properties validated themselves when bound: the durations fit in an int of millis.
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs((int) properties.getSessionTimeout().toMillis())
			.connectionTimeoutMs((int) properties.getConnectionTimeout().toMillis())
			.retryPolicy(retryPolicy(properties.getRetry()));
		ZkLockProperties.Auth auth = properties.getAuth();
		if (auth.hasCredentials()) {
			builder.authorization(auth.getScheme(), auth.getCredentials().getBytes(StandardCharsets.UTF_8));
		}
		ACLProvider defaultAclProvider = builder.getAclProvider();
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		if (auth.hasCredentials() && builder.getAclProvider() == defaultAclProvider) {
			// After the customizers, to see their namespace; a customizer's own ACL provider wins.
			builder.aclProvider(new LockAclProvider(builder.getNamespace(), properties.getRootPath()));
		}
		CuratorFramework client = builder.build();
		client.start();
		if (properties.isFailFast()) {
			awaitFirstConnection(client, connectString, properties.getConnectionTimeout());
		}
		if (auth.hasCredentials()) {
			createPersistentRootPath(client, properties.getRootPath());
		}
		return client;
	}

	/**
	 * Curator creates the parents of a lock znode as containers, which the server deletes once
	 * empty; another client could then create the root path again with an open ACL. A persistent
	 * root path keeps its creator-only ACL. Best effort, in the background: if it fails (ZooKeeper
	 * is down for longer than the retries), the first lock creates the root path as a container.
	 */
	private static void createPersistentRootPath(CuratorFramework client, String rootPath) {
		try {
			client.create().creatingParentsIfNeeded().inBackground((source, event) -> {
				KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
				if (code != KeeperException.Code.OK && code != KeeperException.Code.NODEEXISTS) {
					logger.warn("Could not create the lock root path " + rootPath + " (" + code
							+ "); the first lock will create it as a container");
				}
			}).forPath(rootPath);
		}
		catch (Exception ex) {
			logger.warn("Could not create the lock root path " + rootPath
					+ "; the first lock will create it as a container", ex);
		}
	}

	/**
	 * Waits for the first connection; closes the client (the context will not) if none is made.
	 */
	private static void awaitFirstConnection(CuratorFramework client, String connectString, Duration timeout) {
		try {
			if (client.blockUntilConnected((int) timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				return;
			}
			client.close();
			throw new ZooKeeperUnreachableException(connectString, timeout);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			client.close();
			throw new ZooKeeperUnreachableException(connectString, timeout, ex);
		}
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(LockProvider.class)
	CuratorLockRegistry zkLockRegistry(CuratorFramework client, ZkLockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LockStateListener> listeners) {
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

	private static RetryPolicy retryPolicy(ZkLockProperties.Retry retry) {
		int baseSleep = (int) retry.getBaseSleep().toMillis();
		Duration maxSleep = retry.getMaxSleep();
		if (maxSleep == null) {
			return new ExponentialBackoffRetry(baseSleep, retry.getMaxRetries());
		}
		return new ExponentialBackoffRetry(baseSleep, retry.getMaxRetries(), (int) maxSleep.toMillis());
	}

	/**
	 * Masks {@code zk.lock.auth.credentials} in the actuator's {@code configprops} and
	 * {@code env} endpoints, also when they are set to show values.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(SanitizingFunction.class)
	static class CredentialsSanitizingConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "zkLockCredentialsSanitizingFunction")
		SanitizingFunction zkLockCredentialsSanitizingFunction() {
			// Any spelling of the key: zk.lock.auth.credentials, ZK_LOCK_AUTH_CREDENTIALS...
			return SanitizingFunction.sanitizeValue()
				.ifKeyMatches((key) -> key.replaceAll("[^A-Za-z0-9]", "").equalsIgnoreCase("zklockauthcredentials"));
		}

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
			throw new EmbeddedZooKeeperUnavailableException();
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
