package io.github.zklock.autoconfigure;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.zookeeper.client.ZKClientConfig;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;

/**
 * The TLS and SASL settings of the auto-configured client ({@code zk.lock.ssl.*},
 * {@code zk.lock.sasl.*} and the connection details' SSL bundle), set on the client's own
 * {@link ZKClientConfig}, never as JVM-wide system properties, and what they leave behind (TLS
 * files, a JAAS section), removed when the client closes.
 */
final class SecuredConnection implements AutoCloseable {

	private final @Nullable ZooKeeperTlsFiles tls;

	private final @Nullable String bundleName;

	private final ZkLockProperties.Sasl sasl;

	private final @Nullable String ownSaslSection;

	private SecuredConnection(@Nullable ZooKeeperTlsFiles tls, @Nullable String bundleName, ZkLockProperties.Sasl sasl,
			@Nullable String ownSaslSection) {
		this.tls = tls;
		this.bundleName = bundleName;
		this.sasl = sasl;
		this.ownSaslSection = ownSaslSection;
	}

	/**
	 * Prepare the settings: write the TLS files, define the DIGEST-MD5 login section.
	 * @param properties the properties
	 * @param connectionDetails the connection details, whose SSL bundle counts
	 * @return the settings
	 * @throws IllegalStateException if SASL is on with a login context that the JAAS configuration
	 * lacks, or the bundle's stores cannot be used
	 */
	static SecuredConnection of(ZkLockProperties properties, ZooKeeperConnectionDetails connectionDetails) {
		SslBundle bundle = connectionDetails.getSslBundle();
		String bundleName = (connectionDetails instanceof PropertiesZooKeeperConnectionDetails)
				? properties.getSsl().getBundle() : "of the " + connectionDetails.getClass().getName() + " bean";
		ZkLockProperties.Sasl sasl = properties.getSasl();
		String ownSection = null;
		if (sasl.isEnabled()) {
			if (sasl.getUsername() != null && sasl.getPassword() != null) {
				ownSection = ZooKeeperSaslLogins.register(sasl.getUsername(), sasl.getPassword());
			}
			else if (!ZooKeeperSaslLogins.hasSection(sasl.getLoginContext())) {
				throw new IllegalStateException("zk.lock.sasl.enabled=true but the JAAS configuration has no section '"
						+ sasl.getLoginContext() + "' (zk.lock.sasl.login-context; java.security.auth.login.config="
						+ System.getProperty("java.security.auth.login.config") + "): add the section, or set "
						+ "zk.lock.sasl.username and zk.lock.sasl.password for a DIGEST-MD5 login without a file");
			}
		}
		ZooKeeperTlsFiles tls = (bundle != null) ? ZooKeeperTlsFiles.write(bundle, bundleName) : null;
		return new SecuredConnection(tls, bundleName, sasl, ownSection);
	}

	/**
	 * Return whether anything is to be set on the client's configuration.
	 * @return whether TLS is on or SASL set either way
	 */
	boolean needsClientConfig() {
		return this.tls != null || this.sasl.isConfigured();
	}

	/**
	 * Return whether the session gets an identity from these settings: a client certificate
	 * (ZooKeeper's x509 scheme) or a SASL login. Lock znodes are then created with a creator-only
	 * ACL.
	 * @return whether the session has an identity
	 */
	boolean hasIdentity() {
		return (this.tls != null && this.tls.hasClientCertificate()) || this.sasl.isEnabled();
	}

	/**
	 * Return the TLS files, if TLS is on.
	 * @return the files, or {@code null}
	 */
	@Nullable ZooKeeperTlsFiles tls() {
		return this.tls;
	}

	/**
	 * Return the name of the SSL bundle, for messages.
	 * @return the name, or {@code null} for the JVM's default material
	 */
	@Nullable String bundleName() {
		return this.bundleName;
	}

	/**
	 * Set TLS and SASL on a client configuration.
	 * @param config the client's own configuration
	 */
	void applyTo(ZKClientConfig config) {
		if (this.tls != null) {
			this.tls.applyTo(config);
		}
		if (this.sasl.isConfigured()) {
			config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, String.valueOf(this.sasl.isEnabled()));
			if (this.sasl.isEnabled()) {
				config.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY,
						(this.ownSaslSection != null) ? this.ownSaslSection : this.sasl.getLoginContext());
			}
		}
	}

	/**
	 * Remove the files and the login section when the client closes.
	 * @param client the client
	 */
	void closeWith(CuratorFramework client) {
		client.getCuratorListenable().addListener((source, event) -> {
			if (event.getType() == CuratorEventType.CLOSING) {
				close();
			}
		});
	}

	@Override
	public void close() {
		if (this.tls != null) {
			this.tls.close();
		}
		if (this.ownSaslSection != null) {
			ZooKeeperSaslLogins.unregister(this.ownSaslSection);
		}
	}

}
