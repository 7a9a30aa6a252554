package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;

import io.github.zklock.autoconfigure.ZooKeeperSecurityException.Reason;

/**
 * The start-up check of the auto-configured client: the first connection, and, for a session
 * with an identity, the lock root path.
 * <ul>
 * <li>With {@code zk.lock.fail-fast=true} ({@link #awaitFirstConnection}), the start waits up to
 * {@code zk.lock.connection-timeout}: it fails with a {@link ZooKeeperSecurityException} when the
 * server refuses the session's authentication, when a TLS probe ({@link ZooKeeperTlsProbe}) finds
 * that the client's TLS does not match the server's, or when the session's identity may not use
 * the root path; with a {@link ZooKeeperUnreachableException} when no connection is made and
 * nothing else is found. The second half of the timeout (at most 2 s) is kept for the probe.</li>
 * <li>Otherwise ({@link #reportLaterIfNotConnected}), the start goes on; a daemon thread logs the
 * same findings at ERROR if the client is not connected once the connection timeout has passed.</li>
 * </ul>
 * With an identity, the root path is created persistent with its creator-only ACL (empty
 * containers are deleted by the server, and another client could then create the path with an
 * open ACL): synchronously with {@code fail-fast}, in the background otherwise.
 */
final class ConnectionCheck {

	private static final Log logger = LogFactory.getLog(ConnectionCheck.class);

	private static final Duration MAX_PROBE_TIME = Duration.ofSeconds(2);

	private final CuratorFramework client;

	private final String connectString;

	private final @Nullable SslBundle bundle;

	private final @Nullable String bundleName;

	private final String rootPath;

	private final boolean hasIdentity;

	private volatile boolean authenticationFailed;

	ConnectionCheck(CuratorFramework client, String connectString, @Nullable SslBundle bundle,
			@Nullable String bundleName, String rootPath, boolean hasIdentity) {
		this.client = client;
		this.connectString = connectString;
		this.bundle = bundle;
		this.bundleName = bundleName;
		this.rootPath = rootPath;
		this.hasIdentity = hasIdentity;
		client.getCuratorListenable().addListener((source, event) -> {
			if (event.getType() == CuratorEventType.WATCHED && event.getWatchedEvent() != null
					&& event.getWatchedEvent().getState() == KeeperState.AuthFailed) {
				this.authenticationFailed = true;
			}
		});
	}

	/**
	 * Wait for the first connection and check the root path; close the client (the context will
	 * not) and throw if either fails.
	 * @param timeout {@code zk.lock.connection-timeout}
	 * @throws ZooKeeperSecurityException if TLS, authentication or permissions do not match
	 * @throws ZooKeeperUnreachableException if no connection is made and nothing else is found
	 */
	void awaitFirstConnection(Duration timeout) {
		Duration probeTime = min(MAX_PROBE_TIME, timeout.dividedBy(2));
		try {
			if (!awaitConnected(timeout.minus(probeTime))) {
				ZooKeeperSecurityException finding = this.authenticationFailed ? authenticationFailure()
						: ZooKeeperTlsProbe.diagnose(this.connectString, this.bundle, this.bundleName, probeTime);
				if (finding != null) {
					throw finding;
				}
				if (!this.client.getZookeeperClient().isConnected()) {
					throw new ZooKeeperUnreachableException(this.connectString, timeout);
				}
			}
			if (this.hasIdentity) {
				checkRootPath();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.client.close();
			throw new ZooKeeperUnreachableException(this.connectString, timeout, ex);
		}
		catch (RuntimeException ex) {
			this.client.close();
			throw ex;
		}
	}

	/**
	 * Start a daemon thread that creates the root path once connected (with an identity), and
	 * logs at ERROR what a probe finds if the client is not connected after the timeout.
	 * @param timeout {@code zk.lock.connection-timeout}
	 */
	void reportLaterIfNotConnected(Duration timeout) {
		Thread thread = new Thread(() -> {
			try {
				if (awaitConnected(timeout)) {
					if (this.hasIdentity) {
						checkRootPath();
					}
					return;
				}
				ZooKeeperSecurityException finding = this.authenticationFailed ? authenticationFailure()
						: ZooKeeperTlsProbe.diagnose(this.connectString, this.bundle, this.bundleName, MAX_PROBE_TIME);
				if (finding != null && !this.client.getZookeeperClient().isConnected()) {
					logger.error("zk-lock's client is not connected after " + timeout.toMillis()
							+ " ms (zk.lock.connection-timeout): " + finding.getMessage());
				}
			}
			catch (ZooKeeperSecurityException ex) {
				logger.error("zk-lock's client cannot use the lock root path: " + ex.getMessage());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (RuntimeException ex) {
				logger.warn("zk-lock's start-up check of the ZooKeeper connection failed", ex);
			}
		}, "zk-lock-connection-check");
		thread.setDaemon(true);
		thread.start();
	}

	/** Connected (and not refused), in slices so that a refused authentication ends the wait. */
	private boolean awaitConnected(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!this.authenticationFailed) {
			long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
			if (left <= 0) {
				return false;
			}
			if (this.client.blockUntilConnected((int) Math.min(left, 100), TimeUnit.MILLISECONDS)) {
				return !this.authenticationFailed;
			}
		}
		return false;
	}

	/**
	 * Create the root path, persistent (its parents too; an existing one is fine), and list it: the
	 * first request of the session, so that a refused SASL login, a missing identity and a
	 * foreign ACL show here. Other failures (a connection lost meanwhile) are logged: the first
	 * lock then creates the root path as a container.
	 */
	private void checkRootPath() {
		try {
			try {
				this.client.create().creatingParentsIfNeeded().forPath(this.rootPath);
			}
			catch (KeeperException.NodeExistsException ex) {
				// created before, by this identity or another: the listing tells
			}
			this.client.getChildren().forPath(this.rootPath);
		}
		catch (KeeperException.InvalidACLException ex) {
			throw new ZooKeeperSecurityException(this.connectString, Reason.NO_IDENTITY, "creating " + this.rootPath
					+ " with a creator-only ACL was refused (InvalidACL): the session has no authenticated identity "
					+ "(a client certificate the server does not map to an x509 identity, or no login)", ex);
		}
		catch (KeeperException.NoAuthException ex) {
			throw new ZooKeeperSecurityException(this.connectString, Reason.ACCESS_DENIED, "the ACL of "
					+ ex.getPath() + " does not admit this session's identity (NoAuth); it was created by "
					+ "another identity", ex);
		}
		catch (KeeperException.AuthFailedException ex) {
			throw authenticationFailure();
		}
		catch (Exception ex) {
			if (this.authenticationFailed) {
				throw authenticationFailure();
			}
			logger.warn("Could not create the lock root path " + this.rootPath
					+ "; the first lock will create it as a container", ex);
		}
	}

	private ZooKeeperSecurityException authenticationFailure() {
		return new ZooKeeperSecurityException(this.connectString, Reason.AUTHENTICATION_FAILED,
				"the server refused the session's SASL login (ZooKeeper's AuthFailed state): check "
						+ "zk.lock.sasl.username and password, or the JAAS login context",
				null);
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

}
