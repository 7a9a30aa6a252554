package io.github.zklock;

/**
 * Where a lock grant stands, following the ZooKeeper connection.
 *
 * <pre>
 * HELD --SUSPENDED--&gt; IN_DOUBT --RECONNECTED, same session--&gt; HELD
 * HELD, IN_DOUBT --LOST, or RECONNECTED with a new session--&gt; LOST (final)
 * any --release()--&gt; RELEASED (final)
 * </pre>
 */
public enum LockState {

	/** Granted and the connection is up. */
	HELD,

	/**
	 * The connection is suspended: the lock znode may still exist, but if the session expires
	 * meanwhile another client can be granted the lock. Do not act on the lock while in doubt.
	 */
	IN_DOUBT,

	/** The session was lost: the lock znode is gone and another client may hold the lock. */
	LOST,

	/** Released by its holder. */
	RELEASED

}
