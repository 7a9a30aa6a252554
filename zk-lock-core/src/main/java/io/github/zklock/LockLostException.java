package io.github.zklock;

/**
 * Thrown when a lock that was granted can no longer be trusted: the ZooKeeper connection is
 * suspended (the lock is in doubt) or the session was lost (another client may now hold it).
 */
public class LockLostException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String path;

	private final LockMode mode;

	/**
	 * Create an exception for a lock that is no longer held.
	 * @param path the full znode path of the lock
	 * @param mode the mode it was granted in
	 * @param reason what happened to it
	 */
	public LockLostException(String path, LockMode mode, String reason) {
		super(mode + " lock '" + path + "' is no longer held: " + reason);
		this.path = path;
		this.mode = mode;
	}

	/**
	 * Return the full znode path of the lock.
	 * @return the lock path
	 */
	public String getPath() {
		return this.path;
	}

	/**
	 * Return the mode the lock was granted in.
	 * @return the lock mode
	 */
	public LockMode getMode() {
		return this.mode;
	}

}
