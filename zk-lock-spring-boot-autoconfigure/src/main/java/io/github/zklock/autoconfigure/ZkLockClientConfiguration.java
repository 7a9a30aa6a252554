package io.github.zklock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.RetryPolicy;
import org.apache.curator.ensemble.EnsembleProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.ZKClientConfig;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import io.github.zklock.curator.LockAclProvider;

/**
 * The client part of {@link ZkLockAutoConfiguration}: a started {@link CuratorFramework} built
 * from {@code zk.lock.*}, unless the application defines one. It connects to the connect string of
 * the {@link ZooKeeperConnectionDetails} bean ({@code zk.lock.connect-string} unless the
 * application defines one), or to the ensemble of a Curator {@link EnsembleProvider} bean when
 * there is one (the embedded server of zk-lock-test provides one).
 *
 * <p>With authentication in the connection details ({@code zk.lock.auth.credentials}), a client
 * certificate in its SSL bundle (ZooKeeper's x509 scheme) or a SASL login ({@code zk.lock.sasl.*}),
 * the client creates the root path (persistent, as soon as it connects) and the lock znodes with a
 * creator-only ACL ({@link LockAclProvider}). TLS ({@code zk.lock.ssl.*}, or the connection
 * details' SSL bundle) and SASL are set on this client's own {@code ZKClientConfig}
 * ({@link SecuredConnection}), never as JVM-wide system properties. With {@code zk.lock.fail-fast=true}, the start waits up to
 * {@code zk.lock.connection-timeout} for a first connection and fails with
 * {@link ZooKeeperSecurityException} if TLS, authentication or permissions do not match the
 * servers', or {@link ZooKeeperUnreachableException} if no connection is made
 * ({@link ConnectionCheck}). The client's ZooKeeper socket is
 * {@code zk.lock.client-socket}, Netty by default (see {@link #clientConfig}).
 */
@Configuration(proxyBeanMethods = false)
@Import({ ZkLockClientConfiguration.MissingEmbeddedZooKeeperConfiguration.class,
		ZkLockClientConfiguration.CredentialsSanitizingConfiguration.class })
class ZkLockClientConfiguration {

	private static final Log logger = LogFactory.getLog(ZkLockClientConfiguration.class);

	/** A class of zk-lock-test, which provides the embedded server. */
	static final String EMBEDDED_ZOOKEEPER_CLASS = "io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration";

	/** The server itself, from curator-test, which zk-lock-test brings. */
	static final String CURATOR_TEST_CLASS = "org.apache.curator.test.TestingServer";

	@Bean
	@ConditionalOnMissingBean(ZooKeeperConnectionDetails.class)
	PropertiesZooKeeperConnectionDetails zkLockConnectionDetails(ZkLockProperties properties,
			ObjectProvider<SslBundles> sslBundles) {
		return new PropertiesZooKeeperConnectionDetails(properties, sslBundles.getIfAvailable());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	CuratorFramework zkLockCuratorFramework(ZkLockProperties properties, ZooKeeperConnectionDetails connectionDetails,
			ObjectProvider<EnsembleProvider> ensembleProvider,
			ObjectProvider<CuratorFrameworkBuilderCustomizer> customizers, ObjectProvider<SslBundles> sslBundles) {
		EnsembleProvider ensemble = ensembleProvider.getIfUnique();
		// The properties validated themselves when bound: the durations fit in an int of millis.
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
			.sessionTimeoutMs((int) properties.getSessionTimeout().toMillis())
			.connectionTimeoutMs((int) properties.getConnectionTimeout().toMillis())
			.retryPolicy(retryPolicy(properties.getRetry()));
		String connectString;
		if (ensemble != null) {
			builder.ensembleProvider(ensemble);
			connectString = ensemble.getConnectionString();
		}
		else {
			connectString = validConnectString(connectionDetails);
			builder.connectString(connectString);
		}
		ZooKeeperConnectionDetails.Authentication auth = connectionDetails.getAuthentication();
		if (auth != null) {
			builder.authorization(auth.scheme(), auth.credentials().getBytes(StandardCharsets.UTF_8));
		}
		ACLProvider defaultAclProvider = builder.getAclProvider();
		ZookeeperFactory defaultZookeeperFactory = builder.getZookeeperFactory();
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		SecuredConnection secured = SecuredConnection.of(properties, connectionDetails);
		ZKClientConfig config = builder.getZkClientConfig();
		if (config == null && builder.getZookeeperFactory() == defaultZookeeperFactory) {
			// After the customizers: a ZooKeeper factory of theirs that implements only the
			// four-argument newZooKeeper would be bypassed once a ZKClientConfig is set (Curator's
			// default five-argument method then creates a plain ZooKeeperAdmin).
			config = clientConfig(properties.getClientSocket());
			builder.zkClientConfig(config);
		}
		else if (properties.getClientSocket() != null) {
			logger.warn("zk.lock.client-socket is not applied: a CuratorFrameworkBuilderCustomizer set its own "
					+ "ZKClientConfig or ZookeeperFactory");
		}
		if (secured.needsClientConfig()) {
			if (config == null) {
				secured.close();
				throw new IllegalStateException("zk.lock.ssl and zk.lock.sasl cannot be applied: a "
						+ "CuratorFrameworkBuilderCustomizer set a ZookeeperFactory without a ZKClientConfig; set "
						+ "the TLS and SASL settings in a ZKClientConfig of the customizer instead");
			}
			secured.applyTo(config);
		}
		if ((auth != null || secured.hasIdentity()) && builder.getAclProvider() == defaultAclProvider) {
			// After the customizers, to see their namespace; a customizer's own ACL provider wins.
			builder.aclProvider(new LockAclProvider(builder.getNamespace(), properties.getRootPath()));
		}
		CuratorFramework client = builder.build();
		secured.closeWith(client);
		String bundleName = properties.getSsl().getBundle();
		SslBundles bundles = sslBundles.getIfAvailable();
		if (secured.tls() != null && bundleName != null && bundles != null
				&& connectionDetails instanceof PropertiesZooKeeperConnectionDetails) {
			bundles.addBundleUpdateHandler(bundleName, (updated) -> secured.tls().rewrite(updated, bundleName));
		}
		ConnectionCheck check = new ConnectionCheck(client, connectString, connectionDetails.getSslBundle(),
				secured.bundleName(), properties.getRootPath(), auth != null || secured.hasIdentity());
		client.start();
		if (properties.isFailFast()) {
			check.awaitFirstConnection(properties.getConnectionTimeout());
		}
		else {
			check.reportLaterIfNotConnected(properties.getConnectionTimeout());
		}
		return client;
	}

	/**
	 * Checked here rather than when the properties are bound: an {@code EnsembleProvider} bean,
	 * such as the embedded server's, replaces the connect string, which then does not matter.
	 */
	private static String validConnectString(ZooKeeperConnectionDetails connectionDetails) {
		String connectString = connectionDetails.getConnectString();
		String problem = ZkLockPropertiesValidator.connectStringProblem(connectString);
		if (problem == null) {
			return connectString;
		}
		if (connectionDetails instanceof PropertiesZooKeeperConnectionDetails) {
			throw new InvalidConfigurationPropertyValueException("zk.lock.connect-string", connectString, problem);
		}
		throw new IllegalStateException("The connect string '" + connectString + "' of the ZooKeeperConnectionDetails "
				+ "bean (" + connectionDetails.getClass().getName() + ") is not valid: " + problem);
	}

	/**
	 * The ZooKeeper client's settings: the {@code zookeeper.*} system properties, read as ZooKeeper
	 * reads them, and the socket implementation of {@code zk.lock.client-socket}; when that is not
	 * set, Netty unless the {@code zookeeper.clientCnxnSocket} system property names a socket. When
	 * the server closes a session (it expired, or was taken over), the default NIO socket reports the
	 * closed connection 100 ms late ({@code ClientCnxnSocketNIO.cleanup()} sleeps first), so a holder
	 * goes in doubt about 100 ms after the next client is granted the lock; with Netty, a few
	 * milliseconds before it in zk-lock-core's chaos {@code SessionCloseTests}. Not used when a
	 * customizer sets a {@code ZKClientConfig} or a {@code ZookeeperFactory} of its own.
	 */
	static ZKClientConfig clientConfig(ZkLockProperties.@Nullable ClientSocket socket) {
		ZKClientConfig config = new ZKClientConfig();
		if (socket == null && config.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET) != null) {
			return config;
		}
		Class<?> implementation = (socket == ZkLockProperties.ClientSocket.NIO) ? ClientCnxnSocketNIO.class
				: ClientCnxnSocketNetty.class;
		config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, implementation.getName());
		return config;
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
	 * Fails the start with an actionable message when the embedded server is asked for but
	 * zk-lock-test, or the curator-test it brings, is missing, instead of silently connecting to
	 * {@code connect-string}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty("zk.lock.embedded.enabled")
	@Conditional(EmbeddedZooKeeperMissingCondition.class)
	static class MissingEmbeddedZooKeeperConfiguration {

		MissingEmbeddedZooKeeperConfiguration() {
			throw new EmbeddedZooKeeperUnavailableException();
		}

	}

	/** zk-lock-test or curator-test is not on the class path. */
	static class EmbeddedZooKeeperMissingCondition extends AnyNestedCondition {

		EmbeddedZooKeeperMissingCondition() {
			super(ConfigurationPhase.PARSE_CONFIGURATION);
		}

		@ConditionalOnMissingClass(EMBEDDED_ZOOKEEPER_CLASS)
		static class ZkLockTestMissing {

		}

		@ConditionalOnMissingClass(CURATOR_TEST_CLASS)
		static class CuratorTestMissing {

		}

	}

	/**
	 * Masks {@code zk.lock.auth.credentials} and {@code zk.lock.sasl.password} in the actuator's {@code configprops} and
	 * {@code env} endpoints, also when they are set to show values.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(SanitizingFunction.class)
	static class CredentialsSanitizingConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "zkLockCredentialsSanitizingFunction")
		SanitizingFunction zkLockCredentialsSanitizingFunction() {
			// Any spelling of the key: zk.lock.auth.credentials, ZK_LOCK_AUTH_CREDENTIALS...
			return SanitizingFunction.sanitizeValue().ifKeyMatches((key) -> {
				String letters = key.replaceAll("[^A-Za-z0-9]", "");
				return letters.equalsIgnoreCase("zklockauthcredentials") || letters.equalsIgnoreCase("zklocksaslpassword");
			});
		}

	}

}
