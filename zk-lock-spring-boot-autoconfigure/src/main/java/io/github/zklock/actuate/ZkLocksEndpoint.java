package io.github.zklock.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import io.github.zklock.Leadership;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.HeldLock;
import io.github.zklock.curator.LockOwner;
import io.github.zklock.curator.LockParticipant;
import io.github.zklock.curator.LockQueue;
import io.github.zklock.curator.Revocation;
import io.github.zklock.curator.RevocationMode;
import io.github.zklock.curator.WaitingLock;

/**
 * The {@code zklocks} actuator endpoint:
 * <ul>
 * <li>{@code GET /actuator/zklocks}: this application's process id and host, the locks it holds
 * (path, mode, state, holder thread, held since, znode, fencing token if it was read, chain
 * length, and the {@code deadline} at which its ceiling, {@code lockAtMostFor}, ends it, left out
 * for a grant without one) and the threads waiting for one, local state; with a
 * {@link Leadership}, the leader of each group the application takes part in (reads ZooKeeper,
 * one group after the other);</li>
 * <li>{@code GET /actuator/zklocks/{key}}: the participants of one key's lock across the
 * ensemble, any client and any kind, in queue order (reads ZooKeeper), for example
 * {@code /actuator/zklocks/stock/apple} for the key {@code /stock/apple}: per znode whether it
 * holds, its owner's process id and host, its creation time and fencing token, the chain length
 * of this application's held znodes; and how many wait;</li>
 * <li>{@code DELETE /actuator/zklocks/{key}} (a write operation): revoke a stuck lock (see
 * {@link CuratorLockAdmin#revoke}): by default Curator's revocation protocol asks the holders
 * to give it up (this library's holders do, their grants become LOST and the commit guard rolls
 * their transactions back), waiting up to {@value #REVOKE_WAIT_SECONDS} s for their znodes to go;
 * with {@code ?force=true} the holders' znodes are deleted. The answer says what was done.</li>
 * </ul>
 * Like any Boot endpoint's, the write operation is reachable only where the endpoint is exposed;
 * {@code management.endpoint.zklocks.access=read-only} keeps the reads and refuses it.
 */
@Endpoint(id = "zklocks")
public class ZkLocksEndpoint {

	/** How long a revocation waits for the holders to give the lock up, in seconds. */
	public static final int REVOKE_WAIT_SECONDS = 5;

	private final CuratorLockAdmin admin;

	private final @Nullable Leadership leadership;

	/**
	 * Create the endpoint.
	 * @param admin the operator side of the lock registry it describes
	 */
	public ZkLocksEndpoint(CuratorLockAdmin admin) {
		this(admin, null);
	}

	/**
	 * Create the endpoint, describing the leadership groups too.
	 * @param admin the operator side of the lock registry it describes
	 * @param leadership the application's leadership, or {@code null} for none
	 */
	public ZkLocksEndpoint(CuratorLockAdmin admin, @Nullable Leadership leadership) {
		this.admin = admin;
		this.leadership = leadership;
	}

	/**
	 * Describe the locks this application holds and waits for, and the leader of each group it
	 * takes part in (one getChildren and one getData per group).
	 * @return the description
	 * @throws io.github.zklock.LockException if ZooKeeper cannot tell a group's leader
	 */
	@ReadOperation
	public ApplicationLocks locks() {
		List<GroupLeader> leaders = new ArrayList<>();
		if (this.leadership != null) {
			for (String group : new TreeSet<>(this.leadership.getGroups())) {
				leaders.add(new GroupLeader(group, this.leadership.getLeader(group).orElse(null),
						this.leadership.isLeader(group)));
			}
		}
		LockOwner owner = this.admin.owner();
		return new ApplicationLocks(owner.pid(), owner.host(), this.admin.registry().getRootPath(),
				this.admin.describeHeldLocks(), this.admin.describeWaitingLocks(), leaders);
	}

	/**
	 * Describe who holds and waits for the lock of one key, across the ensemble (see
	 * {@link CuratorLockAdmin#describeQueue}).
	 * @param key the segments of the key below the root path
	 * @return the description
	 * @throws io.github.zklock.InvalidLockPathException if the segments do not form a legal key
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached
	 */
	@ReadOperation
	public PathParticipants participants(@Selector(match = Selector.Match.ALL_REMAINING) String... key) {
		LockQueue queue = this.admin.describeQueue("/" + String.join("/", key));
		return new PathParticipants(queue.path(), queue.waiters(), queue.localWaiters(), queue.participants());
	}

	/**
	 * Revoke the lock of one key, held by any application: see {@link CuratorLockAdmin#revoke}.
	 * @param key the segments of the key below the root path
	 * @param force whether to delete the holders' znodes rather than ask the holders to give the
	 * lock up; {@code null} for {@code false}
	 * @return what was done, with the holders found and whether their znodes were gone when the
	 * call returned
	 * @throws io.github.zklock.InvalidLockPathException if the segments do not form a legal key
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached
	 */
	@DeleteOperation
	public Revocation revoke(@Selector(match = Selector.Match.ALL_REMAINING) String[] key,
			@Nullable Boolean force) {
		return this.admin.revoke("/" + String.join("/", key),
				Boolean.TRUE.equals(force) ? RevocationMode.FORCE : RevocationMode.REQUEST,
				Duration.ofSeconds(REVOKE_WAIT_SECONDS));
	}

	/**
	 * The locks of this application.
	 *
	 * @param pid this application's process id (as written into its lock znodes)
	 * @param host this application's host name (as written into its lock znodes)
	 * @param rootPath the znode below which lock paths live
	 * @param held the grants held, oldest first
	 * @param waiting the threads waiting, longest waiting first
	 * @param leadership the leadership groups this application takes part in, by name
	 */
	public record ApplicationLocks(long pid, String host, String rootPath, List<HeldLock> held,
			List<WaitingLock> waiting, List<GroupLeader> leadership) {
	}

	/**
	 * The leader of one leadership group.
	 *
	 * @param group the group
	 * @param leader the participant id of its leader, {@code null} while nobody leads
	 * @param self whether this application leads it
	 */
	public record GroupLeader(String group, @Nullable String leader, boolean self) {
	}

	/**
	 * The participants of one lock.
	 *
	 * @param path the znode path of the lock
	 * @param waiters how many wait for it: its znodes that do not hold (of any application), plus
	 * this application's threads waiting in its local queues (see
	 * {@link LockQueue#waiters()})
	 * @param localWaiters how many threads of this application wait for it (in ZooKeeper's queue
	 * or in the application's local queue)
	 * @param participants its lock znodes in queue order
	 */
	public record PathParticipants(String path, int waiters, int localWaiters,
			List<LockParticipant> participants) {
	}

}
