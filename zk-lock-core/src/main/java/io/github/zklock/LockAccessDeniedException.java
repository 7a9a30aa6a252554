package io.github.zklock;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when ZooKeeper refuses a lock request's operation for lack of permission ({@code NoAuth}):
 * the session's identity is not in the ACL of the znode it read, created or deleted (for example
 * a lock path created with a creator-only ACL by another application, or other credentials), or
 * its authentication failed ({@code AuthFailed}). Never "busy": nothing says whether the lock is
 * held.
 *
 * <p>{@link #getSchemes()} names the identities the client can tell its session has: {@code x509}
 * (TLS with a client certificate) and {@code sasl} (a completed SASL login). Credentials added
 * with {@code addAuthInfo} (Curator's {@code authorization}, zk-lock's {@code zk.lock.auth.*},
 * for example {@code digest}) are not visible to the client and are not listed.
 */
public class LockAccessDeniedException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String path;

	private final List<String> schemes;

	/**
	 * Create an exception.
	 * @param message the message, which names the path and the schemes
	 * @param path the znode path ZooKeeper refused
	 * @param schemes the session's authentication schemes the client can tell, possibly none
	 * @param cause ZooKeeper's exception, or {@code null}
	 */
	public LockAccessDeniedException(String message, String path, List<String> schemes, @Nullable Throwable cause) {
		super(message, cause);
		this.path = path;
		this.schemes = List.copyOf(schemes);
	}

	/**
	 * Return the znode path ZooKeeper refused.
	 * @return the full path, for example {@code /locks/orders/1} or one of its znodes
	 */
	public String getPath() {
		return this.path;
	}

	/**
	 * Return the authentication schemes of the session that the client can tell.
	 * @return {@code x509} and/or {@code sasl}, or empty (no such identity, or only credentials
	 * added with {@code addAuthInfo}, which the client does not show)
	 */
	public List<String> getSchemes() {
		return this.schemes;
	}

}
