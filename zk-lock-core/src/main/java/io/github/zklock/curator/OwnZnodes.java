package io.github.zklock.curator;

import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The lock znodes this application's acquisitions queue with, by full path, so that an
 * acquisition can tell that the znode it watches is one of its own application's, and whether that
 * one was granted. It lets a queue of the application's own waiters drain without listing the
 * queue once per waiter (each listing of a queue of n costs n names): see
 * {@link ZnodeAcquisition}. Only the protocols whose waiters watch the znode just before theirs
 * ({@link Protocol#MUTEX}, the internal mutex of {@link Protocol#LEASE} among them, and
 * {@link Protocol#WRITE}) are kept.
 *
 * <p>One per registry (a client and its sessions); thread-safe. An acquisition is kept from the
 * answer of its create until its end.
 */
final class OwnZnodes {

	private final ConcurrentHashMap<String, ZnodeAcquisition> byPath = new ConcurrentHashMap<>();

	/** Keep an acquisition under its znode's full path. */
	void add(String node, ZnodeAcquisition acquisition) {
		this.byPath.put(node, acquisition);
	}

	/** Forget an acquisition, if it is the one kept under the path. */
	void remove(String node, ZnodeAcquisition acquisition) {
		this.byPath.remove(node, acquisition);
	}

	/**
	 * Return the acquisition of this application whose znode has the path.
	 * @return the acquisition, {@code null} when the znode is another participant's (or ended)
	 */
	@Nullable ZnodeAcquisition get(String node) {
		return this.byPath.get(node);
	}

	/** How many are kept, for the tests. */
	int size() {
		return this.byPath.size();
	}

}
