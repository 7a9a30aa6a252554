package io.github.zklock.autoconfigure;

import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;
import org.springframework.boot.ssl.SslBundle;

/**
 * Where the ZooKeeper ensemble of zk-lock's client is, and how to authenticate to it, as Spring
 * Boot's {@link ConnectionDetails}: the client configuration reads this bean. Unless the
 * application (or a library, such as a Testcontainers or Docker Compose integration) defines
 * one, it comes from {@code zk.lock.connect-string}, {@code zk.lock.auth.*} and
 * {@code zk.lock.ssl.*}. A Curator
 * {@code EnsembleProvider} bean (the embedded server of zk-lock-test provides one) still takes
 * precedence over the connect string.
 */
public interface ZooKeeperConnectionDetails extends ConnectionDetails {

	/**
	 * Return the connect string.
	 * @return comma-separated {@code host:port} pairs, optionally followed by a chroot path, for
	 * example {@code zk1:2181,zk2:2181/apps}
	 */
	String getConnectString();

	/**
	 * Return how the client authenticates, if it does.
	 * @return the scheme and credentials, or {@code null} to connect without authenticating (the
	 * default)
	 */
	default @Nullable Authentication getAuthentication() {
		return null;
	}

	/**
	 * Return the TLS material of the connection, if it uses TLS.
	 * @return the bundle whose trust store verifies the servers and whose key store, if it has
	 * one, holds the client certificate; or {@code null} to connect without TLS (the default)
	 */
	default @Nullable SslBundle getSslBundle() {
		return null;
	}

	/**
	 * Authentication of the ZooKeeper session ({@code addAuthInfo}); lock znodes are then created
	 * with a creator-only ACL.
	 * @param scheme the ZooKeeper authentication scheme, for example {@code digest}
	 * @param credentials the credentials, for {@code digest} {@code user:password} (UTF-8)
	 */
	record Authentication(String scheme, String credentials) {

		public Authentication {
			Objects.requireNonNull(scheme, "scheme must not be null");
			Objects.requireNonNull(credentials, "credentials must not be null");
		}

		/** Keeps the credentials out of logs. */
		@Override
		public String toString() {
			return "Authentication[scheme=" + this.scheme + ", credentials=******]";
		}

	}

}
