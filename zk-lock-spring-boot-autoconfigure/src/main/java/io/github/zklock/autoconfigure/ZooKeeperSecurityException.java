package io.github.zklock.autoconfigure;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockException;

/**
 * Thrown at start-up, with {@code zk.lock.fail-fast=true}, when the client's TLS, authentication
 * or permissions do not match the servers': the start fails, and a failure analyzer says which
 * setting to change. Without {@code fail-fast}, the same finding is logged at ERROR once the
 * client has failed to connect for {@code zk.lock.connection-timeout}.
 *
 * <p>The message names the connect string (servers and chroot, never credentials), the
 * {@link #getReason() reason} and what the client or the server reported.
 */
public class ZooKeeperSecurityException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String connectString;

	private final Reason reason;

	/**
	 * Create an exception.
	 * @param connectString the servers the client tried, {@code host:port[,host:port...][/chroot]}
	 * @param reason what does not match
	 * @param detail what was observed: the server and what it or the TLS handshake answered
	 * @param cause the exception of that answer, or {@code null}
	 */
	public ZooKeeperSecurityException(String connectString, Reason reason, String detail, @Nullable Throwable cause) {
		super(reason.summary + " (ZooKeeper at '" + connectString + "'): " + detail, cause);
		this.connectString = connectString;
		this.reason = reason;
	}

	/**
	 * Return the connect string of the servers the client tried.
	 * @return {@code host:port[,host:port...][/chroot]}
	 */
	public String getConnectString() {
		return this.connectString;
	}

	/**
	 * Return what does not match.
	 * @return the reason
	 */
	public Reason getReason() {
		return this.reason;
	}

	/**
	 * What does not match between the client and the servers.
	 */
	public enum Reason {

		/** The client connects without TLS to a port that speaks TLS (a {@code secureClientPort}). */
		TLS_REQUIRED("The server expects TLS and the client connects without it"),

		/** The client connects with TLS to a port that does not speak it (a plain {@code clientPort}). */
		TLS_NOT_SPOKEN("The client connects with TLS to a port that does not speak TLS"),

		/**
		 * The client does not trust the server's certificate: unknown issuer, expired, or issued for
		 * another host name than the connect string's.
		 */
		SERVER_CERTIFICATE_REJECTED("The client rejected the server's TLS certificate"),

		/** The server and the client have no TLS version or cipher suite in common. */
		TLS_PARAMETERS_REJECTED("The server and the client have no TLS version or cipher suite in common"),

		/** The server ended the TLS handshake over the client's certificate, or its absence. */
		CLIENT_CERTIFICATE_REJECTED("The server rejected the client's TLS certificate"),

		/** The server refused the session's authentication (SASL). */
		AUTHENTICATION_FAILED("The server refused the session's authentication"),

		/**
		 * The session's identity may not use the lock root path: its ACL names another identity,
		 * often other credentials.
		 */
		ACCESS_DENIED("The session's identity has no permission on the lock root path"),

		/**
		 * Lock znodes are to be created with a creator-only ACL, but the server gave the session no
		 * identity (for example a client certificate that the server does not map to an x509
		 * identity).
		 */
		NO_IDENTITY("The server gave the session no identity for a creator-only ACL");

		private final String summary;

		Reason(String summary) {
			this.summary = summary;
		}

		/**
		 * Return a one-sentence summary, without a full stop.
		 * @return the summary
		 */
		public String summary() {
			return this.summary;
		}

	}

}
