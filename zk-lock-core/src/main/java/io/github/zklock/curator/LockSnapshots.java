package io.github.zklock.curator;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockState;
import io.github.zklock.LockMode;

/**
 * Read-only views of the locks of an application and of a lock path, for operators (the
 * {@code zklocks} actuator endpoint). None of them holds a credential.
 */
public final class LockSnapshots {

	private LockSnapshots() {
	}

	/**
	 * A grant this application holds.
	 *
	 * @param path the full znode path of the lock
	 * @param mode the mode it was granted in
	 * @param state where it stands
	 * @param holder the name of the thread that acquired it
	 * @param since when it was granted
	 * @param node the grant's lock znode
	 * @param fencingToken its fencing token if it is known without a request, else {@code null}
	 * @param chainLength how many grants its znode has served so far, this one included: 1 for a
	 * grant made through ZooKeeper, more when the znode was handed over locally from grant to grant
	 * (see {@link LocalHandoff})
	 */
	public record HeldLock(String path, LockMode mode, LockState state, String holder, Instant since, String node,
			@Nullable Long fencingToken, int chainLength) {
	}

	/**
	 * A thread of this application waiting for a lock.
	 *
	 * @param path the full znode path of the lock
	 * @param mode the requested mode
	 * @param waiter the name of the waiting thread
	 * @param since when it started waiting
	 */
	public record WaitingLock(String path, LockMode mode, String waiter, Instant since) {
	}

	/**
	 * A lock znode below a lock path, from any client of the ensemble, in queue order.
	 *
	 * @param node the znode name
	 * @param kind {@code EXCLUSIVE}, {@code READ}, {@code WRITE} or {@code EXCLUSIVE (reentrant = false)}
	 * @param fencingToken its creation transaction id, the fencing token of its grant
	 * @param created when it was created
	 * @param sessionId the session that owns it, in hexadecimal
	 * @param owner the data Curator stored in it (by default the client's IP address)
	 */
	public record Participant(String node, String kind, long fencingToken, Instant created, String sessionId,
			String owner) {
	}

}
