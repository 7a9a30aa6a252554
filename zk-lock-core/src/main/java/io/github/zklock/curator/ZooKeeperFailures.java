package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.client.ZooKeeperSaslClient;
import org.apache.zookeeper.common.ClientX509Util;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockAccessDeniedException;
import io.github.zklock.LockException;
import io.github.zklock.LockMode;

/**
 * Turns what Curator and ZooKeeper throw into a {@link LockException} that says what happened:
 * interrupted, ZooKeeper unreachable (connection loss, timeout, session expired or moved), access
 * denied ({@link LockAccessDeniedException}), or another server answer. Never into "busy": that is only ever a wait that ended
 * without a grant.
 */
final class ZooKeeperFailures {

	private ZooKeeperFailures() {
	}

	/**
	 * Translate a failure. Restores the thread's interrupt flag when the cause is an interruption.
	 * @param ex what Curator threw
	 * @param action what was being done, for example {@code acquire}
	 * @param lockPath the lock's znode path
	 * @param mode the lock mode
	 * @param client the client, for its connect string and state
	 * @return the exception to throw
	 */
	static LockException translate(Exception ex, String action, String lockPath, LockMode mode,
			CuratorFramework client) {
		return translate(ex, "Could not " + action + " " + mode + " lock '" + lockPath + "': ", client);
	}

	/**
	 * Translate the failure of an acquisition (see {@link ZnodeAcquisition}), or of the check of a
	 * semaphore's permits, as it completed the request's future.
	 * @param ex the future's failure, a {@link java.util.concurrent.CompletionException}'s cause unwrapped
	 * @return the exception to fail the request with: a {@link LockException} as it is, else
	 * translated as {@link #translate(Exception, String, String, LockMode, CuratorFramework)} does
	 */
	static LockException translateAcquisition(Throwable ex, String lockPath, LockMode mode,
			CuratorFramework client) {
		Throwable cause = (ex instanceof java.util.concurrent.CompletionException && ex.getCause() != null)
				? ex.getCause() : ex;
		if (cause instanceof LockException typed) {
			// Already said in the library's terms (a number of permits that does not match, say).
			return typed;
		}
		return translate((cause instanceof Exception exception) ? exception : new IllegalStateException(cause),
				"acquire", lockPath, mode, client);
	}

	/**
	 * Translate a failure of something other than a lock request. Restores the thread's interrupt
	 * flag when the cause is an interruption.
	 * @param ex what Curator threw
	 * @param what the start of the message, saying what failed and ending with {@code ": "}
	 * @param client the client, for its connect string and state
	 * @return the exception to throw
	 */
	static LockException translate(Exception ex, String what, CuratorFramework client) {
		if (ex instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
			Thread.currentThread().interrupt();
			return new LockException(what + "interrupted while waiting", ex);
		}
		KeeperException keeperException = findKeeperException(ex);
		if (keeperException != null) {
			return switch (keeperException.code()) {
				case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED -> new LockException(
						what + "ZooKeeper is unreachable (" + connectString(client) + ", " + keeperException.code() + ")",
						ex);
				case NOAUTH, AUTHFAILED, SESSIONCLOSEDREQUIRESASLAUTH -> accessDenied(what, keeperException, ex, client);
				default -> new LockException(what + "ZooKeeper returned " + keeperException.code(), ex);
			};
		}
		if (ex instanceof IllegalStateException && client.getState() != CuratorFrameworkState.STARTED) {
			return new LockException(what + "the Curator client is " + client.getState(), ex);
		}
		return new LockException(what + ex, ex);
	}

	private static LockAccessDeniedException accessDenied(String what, KeeperException keeperException, Exception ex,
			CuratorFramework client) {
		List<String> schemes = visibleSchemes(client);
		String path = (keeperException.getPath() != null) ? keeperException.getPath() : "unknown path";
		return new LockAccessDeniedException(what + "ZooKeeper denied access to " + path + " ("
				+ keeperException.code() + ") for this session's identity (" + (schemes.isEmpty()
						? "no x509 or sasl identity; credentials added with addAuthInfo, such as digest, are not shown"
						: String.join(", ", schemes))
				+ "): check the authentication and the ACLs of the lock znodes", path, schemes, ex);
	}

	/**
	 * The schemes the ZooKeeper client can tell its session authenticated with: {@code x509} when it
	 * connects with TLS and a client certificate, {@code sasl} when its SASL login completed.
	 */
	static List<String> visibleSchemes(CuratorFramework client) {
		List<String> schemes = new ArrayList<>();
		try {
			ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
			ZKClientConfig config = zooKeeper.getClientConfig();
			try (ClientX509Util x509 = new ClientX509Util()) {
				String keyStore = config.getProperty(x509.getSslKeystoreLocationProperty());
				if (config.getBoolean(ZKClientConfig.SECURE_CLIENT) && keyStore != null && !keyStore.isEmpty()) {
					schemes.add("x509");
				}
			}
			ZooKeeperSaslClient sasl = zooKeeper.getSaslClient();
			if (sasl != null && sasl.getSaslState() == ZooKeeperSaslClient.SaslState.COMPLETE) {
				schemes.add("sasl");
			}
		}
		catch (Exception ex) {
			// the client is closing or has no connection yet: nothing to tell
		}
		return schemes;
	}

	/**
	 * The failure of a wait that ended without a grant and without an answer that showed the lock
	 * held: the wait may have ended because ZooKeeper could not be reached, so it is not reported as
	 * busy. Not connected, or connected and silent (a server that stopped, or a network that drops
	 * packets, before the client noticed; or a server slower than the wait time).
	 * @param connected whether the client was connected as the wait ended
	 */
	static LockException notAnswered(String lockPath, LockMode mode, boolean connected, CuratorFramework client) {
		return new LockException("Could not acquire " + mode + " lock '" + lockPath + "': ZooKeeper is unreachable ("
				+ connectString(client) + "): "
				+ (connected ? "connected, but no answer within the wait time showed whether the lock is held"
						: "not connected when the wait ended"));
	}

	static String connectString(CuratorFramework client) {
		try {
			return "connect string " + client.getZookeeperClient().getCurrentConnectionString();
		}
		catch (RuntimeException ex) {
			return "connect string unknown";
		}
	}

	private static @Nullable KeeperException findKeeperException(Throwable ex) {
		for (Throwable current = ex; current != null; current = current.getCause()) {
			if (current instanceof KeeperException keeperException) {
				return keeperException;
			}
		}
		return null;
	}

}
