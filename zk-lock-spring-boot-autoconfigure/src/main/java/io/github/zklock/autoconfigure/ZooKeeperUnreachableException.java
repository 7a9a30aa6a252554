package io.github.zklock.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockException;

/**
 * Thrown at start-up, with {@code zk.lock.fail-fast=true}, when the auto-configured client made no
 * connection to ZooKeeper within {@code zk.lock.connection-timeout}. The start fails; a failure
 * analyzer tells what to check.
 *
 * <p>The message names the connect string (servers and chroot; ZooKeeper connect strings carry no
 * credentials, those are {@code zk.lock.auth.*}) and the timeout.
 */
public class ZooKeeperUnreachableException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String connectString;

	private final Duration timeout;

	/**
	 * Create an exception for a connection that was not made in time.
	 * @param connectString the servers the client tried, {@code host:port[,host:port...][/chroot]}
	 * @param timeout how long the start waited
	 */
	public ZooKeeperUnreachableException(String connectString, Duration timeout) {
		this(connectString, timeout, null);
	}

	/**
	 * Create an exception for a connection that was not made in time, or whose wait was
	 * interrupted.
	 * @param connectString the servers the client tried, {@code host:port[,host:port...][/chroot]}
	 * @param timeout how long the start waited, or was to wait
	 * @param cause the interruption, or {@code null}
	 */
	public ZooKeeperUnreachableException(String connectString, Duration timeout, @Nullable Throwable cause) {
		super("Could not connect to ZooKeeper at '" + connectString + "' within " + timeout.toMillis()
				+ " ms (zk.lock.connection-timeout) while starting with zk.lock.fail-fast=true"
				+ ((cause != null) ? ": interrupted while waiting" : ""), cause);
		this.connectString = connectString;
		this.timeout = timeout;
	}

	/**
	 * Return the connect string of the servers the client tried.
	 * @return {@code host:port[,host:port...][/chroot]}
	 */
	public String getConnectString() {
		return this.connectString;
	}

	/**
	 * Return how long the start waited for a connection.
	 * @return the connection timeout
	 */
	public Duration getTimeout() {
		return this.timeout;
	}

}
