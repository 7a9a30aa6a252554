package io.github.zklock;

/**
 * Root of the unchecked exceptions thrown by zk-lock.
 *
 * <p>Thrown as such (not as a subclass) when ZooKeeper cannot serve the request: the ensemble is
 * unreachable, the session expired, authentication or authorization failed, or the waiting thread
 * was interrupted. The message says which. Such failures are never reported as
 * {@link LockAcquisitionException} ("busy").
 */
public class LockException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create an exception with a message.
	 * @param message what failed, including the lock path where one is known
	 */
	public LockException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a message and a cause.
	 * @param message what failed, including the lock path where one is known
	 * @param cause the underlying failure, typically a ZooKeeper {@code KeeperException}
	 */
	public LockException(String message, Throwable cause) {
		super(message, cause);
	}

}
