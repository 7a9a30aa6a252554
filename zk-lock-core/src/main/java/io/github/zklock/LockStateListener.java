package io.github.zklock;

/**
 * Told when a held lock goes in doubt, is regained or is lost, because the ZooKeeper connection
 * was suspended, reconnected or lost. Curator's lock recipes do not tell the holder; zk-lock
 * does, through this interface.
 *
 * <p>Called on Curator's connection-state thread, once per affected grant, in the order of the
 * connection events: return quickly and do not block on ZooKeeper. An exception thrown by a
 * listener is logged and does not stop the others.
 */
@FunctionalInterface
public interface LockStateListener {

	/** A listener that does nothing. */
	LockStateListener NO_OP = (event) -> {
	};

	/**
	 * A held lock changed state.
	 * @param event what changed
	 */
	void onLockStateChanged(LockStateEvent event);

}
