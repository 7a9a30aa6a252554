package io.github.zklock;

import java.util.OptionalLong;

/**
 * A held lock changed state because the ZooKeeper connection did: it went in doubt
 * ({@link LockState#IN_DOUBT}), was regained ({@link LockState#HELD}) or was lost
 * ({@link LockState#LOST}). Published to {@link LockStateListener}s and, in a Spring application,
 * as an application event ({@code @EventListener void on(LockStateEvent event)}).
 *
 * @param handle the grant that changed state
 * @param path the full znode path of the lock
 * @param mode the mode it was granted in
 * @param state the new state
 * @param fencingToken the grant's fencing token if it had been read before (reading it now could
 * need the very connection that failed), otherwise empty
 * @param holder the name of the thread that acquired the grant
 */
public record LockStateEvent(LockHandle handle, String path, LockMode mode, LockState state,
		OptionalLong fencingToken, String holder) {

	@Override
	public String toString() {
		return this.mode + " lock '" + this.path + "' held by thread '" + this.holder + "' is now " + this.state
				+ this.fencingToken.stream().mapToObj((token) -> " (fencing token " + token + ")").findFirst().orElse("");
	}

}
