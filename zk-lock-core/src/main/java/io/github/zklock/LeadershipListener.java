package io.github.zklock;

/**
 * Told when this instance is granted the leadership of a group and when it loses it again
 * (see {@link Leadership}). For each group, calls alternate: granted, revoked, granted, ... with
 * no two grants in a row.
 *
 * <p>Called on a Curator thread (the ZooKeeper client's event thread or Curator's connection-state
 * thread), or on the thread that gives leadership up ({@link Leadership#yieldLeadership(String)},
 * closing): return quickly and do not block on ZooKeeper. The calls of one group never overlap and
 * come in the order of the changes; a listener may call the {@link Leadership}'s methods, also to
 * give leadership up, and is told of the changes this causes after it returns. An exception thrown
 * by a listener is logged and does not stop the others.
 */
public interface LeadershipListener {

	/** A listener that does nothing. */
	LeadershipListener NO_OP = new LeadershipListener() {
	};

	/**
	 * This instance now leads a group.
	 * @param event the group and this instance's participant id
	 */
	default void granted(LeadershipGrantedEvent event) {
	}

	/**
	 * This instance no longer leads a group it led.
	 * @param event the group and this instance's participant id
	 */
	default void revoked(LeadershipRevokedEvent event) {
	}

}
