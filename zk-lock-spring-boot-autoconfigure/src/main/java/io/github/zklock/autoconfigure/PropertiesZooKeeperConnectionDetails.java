package io.github.zklock.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * The {@link ZooKeeperConnectionDetails} of {@code zk.lock.connect-string}, {@code zk.lock.auth.*}
 * and {@code zk.lock.ssl.*}, the default when the application defines none.
 */
class PropertiesZooKeeperConnectionDetails implements ZooKeeperConnectionDetails {

	private final ZkLockProperties properties;

	private final @Nullable SslBundles sslBundles;

	PropertiesZooKeeperConnectionDetails(ZkLockProperties properties, @Nullable SslBundles sslBundles) {
		this.properties = properties;
		this.sslBundles = sslBundles;
	}

	@Override
	public String getConnectString() {
		return this.properties.getConnectString();
	}

	@Override
	public @Nullable Authentication getAuthentication() {
		ZkLockProperties.Auth auth = this.properties.getAuth();
		String credentials = auth.getCredentials();
		return (auth.hasCredentials() && credentials != null) ? new Authentication(auth.getScheme(), credentials)
				: null;
	}

	/**
	 * The bundle {@code zk.lock.ssl.bundle} names; with TLS on and no bundle named, the JVM's
	 * default trust material ({@link SslBundle#systemDefault()}).
	 * @throws org.springframework.boot.ssl.NoSuchSslBundleException if no bundle has that name
	 */
	@Override
	public @Nullable SslBundle getSslBundle() {
		ZkLockProperties.Ssl ssl = this.properties.getSsl();
		if (!ssl.isEnabled()) {
			return null;
		}
		String bundle = ssl.getBundle();
		if (bundle == null) {
			return SslBundle.systemDefault();
		}
		if (this.sslBundles == null) {
			throw new IllegalStateException("zk.lock.ssl.bundle=" + bundle + " but the application has no SslBundles "
					+ "bean (Spring Boot's SslAutoConfiguration defines it)");
		}
		return this.sslBundles.getBundle(bundle);
	}

}
