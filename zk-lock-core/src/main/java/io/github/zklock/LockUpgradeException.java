package io.github.zklock;

/**
 * Thrown at once when a thread that holds the READ side of a path asks for the WRITE side of the
 * same path. Curator's read/write lock would make that thread wait for itself forever; release
 * the read lock first, or take WRITE from the start (a WRITE holder may take READ).
 */
public class LockUpgradeException extends LockException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create an exception for a refused read-to-write upgrade.
	 * @param path the full znode path of the lock
	 */
	public LockUpgradeException(String path) {
		super("Cannot take the " + LockMode.WRITE + " lock '" + path + "' while this thread holds its "
				+ LockMode.READ + " lock: read-to-write upgrade would wait forever; release the read lock first");
	}

}
