package io.github.zklock;

import java.time.Duration;

/**
 * Thrown when a lock was not granted within its wait time because another owner held it (the
 * lock is busy). The guarded method or callback was not invoked.
 *
 * <p>Never thrown for infrastructure failures: when ZooKeeper is unreachable a plain
 * {@link LockException} is thrown instead.
 */
public class LockAcquisitionException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String path;

	private final LockMode mode;

	private final Duration waitTime;

	/**
	 * Create an exception for a lock that was not granted in time.
	 * @param path the full znode path of the lock
	 * @param mode the requested mode
	 * @param waitTime how long the caller waited
	 */
	public LockAcquisitionException(String path, LockMode mode, Duration waitTime) {
		this(path, mode, waitTime, "held by another owner");
	}

	/**
	 * Create an exception for a lock that was not granted, with the reason.
	 * @param path the full znode path of the lock
	 * @param mode the requested mode
	 * @param waitTime how long the caller waited
	 * @param reason why the lock was not granted
	 */
	public LockAcquisitionException(String path, LockMode mode, Duration waitTime, String reason) {
		super("Could not acquire " + mode + " lock '" + path + "' within " + waitTime.toMillis() + " ms: " + reason);
		this.path = path;
		this.mode = mode;
		this.waitTime = waitTime;
	}

	/**
	 * Return the full znode path of the lock.
	 * @return the lock path
	 */
	public String getPath() {
		return this.path;
	}

	/**
	 * Return the requested mode.
	 * @return the lock mode
	 */
	public LockMode getMode() {
		return this.mode;
	}

	/**
	 * Return how long the caller waited before giving up.
	 * @return the wait time
	 */
	public Duration getWaitTime() {
		return this.waitTime;
	}

}
