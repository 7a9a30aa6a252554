package io.github.zklock.curator;

/**
 * What a grant made without a thread ({@link CuratorLockRegistry#submit}) goes back to when it is
 * released: its asynchronous chain, which hands the lock on, or its request with a znode of its own,
 * which deletes the znode.
 */
interface AsyncRelease {

	/**
	 * The grant was released (once); must not block.
	 * @param handle the grant
	 */
	void released(CuratorLockHandle handle);

}
