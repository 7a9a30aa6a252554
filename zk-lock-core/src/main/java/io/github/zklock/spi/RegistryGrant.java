package io.github.zklock.spi;

import io.github.zklock.AsyncLockHandle;

/**
 * A grant as a {@link LockRegistry} makes it: a handle of one key, released from any thread unless
 * it is bound to the thread that acquired it (a synchronous grant of a reentrant request), with what
 * the template needs of the backend besides: whether it was handed over locally. The template wraps
 * it in the handle its caller gets (with the request's {@code lockAtLeastFor}, observations and, for
 * a multi-lock, the other keys' grants); applications never see this type.
 */
public interface RegistryGrant extends AsyncLockHandle {

	/**
	 * Return whether this grant was handed over locally: another grant of this application on the
	 * same key ended and left its lock znode to this one, with no ZooKeeper request (its fencing
	 * token is then the one of the grants before it). The {@code handoff} tag of the acquisition's
	 * observation. Local state.
	 * @return whether the grant rides the znode of an earlier one
	 */
	default boolean isLocalHandoff() {
		return false;
	}

	/**
	 * Return whether this grant was made on a znode this application kept while nobody held it (a
	 * kept lock, see {@link io.github.zklock.LockRequest#withKeep(Boolean)}): with no ZooKeeper
	 * write, its fencing token the one of the grants before it. Such a grant is a local hand-off
	 * too. Local state.
	 * @return whether the grant rides a kept znode
	 */
	default boolean isFromKeptZnode() {
		return false;
	}

}
