package io.github.zklock.curator;

import java.time.Instant;
import java.util.List;

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
	 * @param path the znode's full path
	 * @param kind {@code EXCLUSIVE}, {@code READ}, {@code WRITE}, {@code EXCLUSIVE (reentrant = false)}
	 * or {@code PERMIT (of N)}
	 * @param fencingToken its creation transaction id, the fencing token of its grant
	 * @param created when it was created: the grant time of a holder that got the lock at once, else
	 * when it started to wait
	 * @param sessionId the session that owns it, in hexadecimal
	 * @param owner the data stored in it: {@code <pid>@<host>} for this library's znodes, the
	 * client's IP address for raw Curator's by default
	 * @param pid the owner's process id, {@code null} if the data is not this library's
	 * @param host the owner's host name, {@code null} if the data is not this library's
	 * @param holder whether it holds the lock (by the rules of its recipe: the first of a mutex's
	 * queue, a leading WRITE or every READ before the first WRITE, the first N leases of a
	 * semaphore of N permits), else it waits
	 * @param chainLength for a znode this application holds, how many grants it has served so far
	 * (more than 1 when handed over locally, see {@link LocalHandoff}); {@code null} for other
	 * applications' znodes and waiting ones
	 */
	public record Participant(String node, String path, String kind, long fencingToken, Instant created,
			String sessionId, String owner, @Nullable Long pid, @Nullable String host, boolean holder,
			@Nullable Integer chainLength) {

		Participant withChainLength(@Nullable Integer chainLength) {
			return new Participant(this.node, this.path, this.kind, this.fencingToken, this.created, this.sessionId,
					this.owner, this.pid, this.host, this.holder, chainLength);
		}

	}

	/**
	 * Who holds and waits for the lock of one key (see {@link CuratorLockRegistry#describeQueue}).
	 *
	 * @param path the lock path
	 * @param participants its lock znodes, of any application, in queue order
	 * @param waiters how many wait for it: its znodes that do not hold, plus the threads of this
	 * application that wait for it without a znode in its queue (in the application's local queue or
	 * its local hand-off chain); the local queues of other applications are not known here
	 * @param localWaiters how many threads of this application wait for it, with a znode in its
	 * queue or not
	 */
	public record LockQueue(String path, List<Participant> participants, int waiters, int localWaiters) {
	}

	/**
	 * A process that holds or waits for locks, as written in the data of the lock znodes it
	 * creates ({@code <pid>@<host>}).
	 *
	 * @param pid the process id
	 * @param host the host name the process reports
	 */
	public record Owner(long pid, String host) {
	}

	/**
	 * What a revocation of a lock did (see {@link CuratorLockRegistry#revoke}).
	 *
	 * @param path the lock path
	 * @param action what was done
	 * @param holders the holders found, before the action
	 * @param released whether every holder's znode was gone when the call returned
	 */
	public record Revocation(String path, RevocationAction action, List<Participant> holders, boolean released) {
	}

	/** What a revocation did. */
	public enum RevocationAction {

		/** Nobody held the lock: nothing was written. */
		NOT_HELD,

		/**
		 * Curator's revocation protocol: the holders' znodes were marked ({@code Revoker}); a holder
		 * that watches its znode gives the lock up and deletes it.
		 */
		REVOCATION_REQUESTED,

		/** The holders' znodes were deleted. */
		FORCED_DELETE

	}

}
