package io.github.zklock.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * The {@link ZooKeeperConnectionDetails} of {@code zk.lock.connect-string} and
 * {@code zk.lock.auth.*}, the default when the application defines none.
 */
class PropertiesZooKeeperConnectionDetails implements ZooKeeperConnectionDetails {

	private final ZkLockProperties properties;

	PropertiesZooKeeperConnectionDetails(ZkLockProperties properties) {
		this.properties = properties;
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

}
