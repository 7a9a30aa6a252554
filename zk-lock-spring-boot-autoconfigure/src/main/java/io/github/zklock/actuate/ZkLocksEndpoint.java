package io.github.zklock.actuate;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import io.github.zklock.Leadership;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LockSnapshots;

/**
 * The {@code zklocks} actuator endpoint, read-only:
 * <ul>
 * <li>{@code GET /actuator/zklocks}: the locks this application holds (path, mode, state, holder
 * thread, held since, znode, fencing token if it was read) and the threads waiting for one,
 * local state; with a {@link Leadership}, the leader of each group the application takes part in
 * (reads ZooKeeper, one group after the other);</li>
 * <li>{@code GET /actuator/zklocks/{key}}: the participants of one key's lock across the
 * ensemble, any client and any kind, in queue order (reads ZooKeeper), for example
 * {@code /actuator/zklocks/stock/apple} for the key {@code /stock/apple}.</li>
 * </ul>
 */
@Endpoint(id = "zklocks")
public class ZkLocksEndpoint {

	private final CuratorLockRegistry registry;

	private final @Nullable Leadership leadership;

	/**
	 * Create the endpoint.
	 * @param registry the lock registry it describes
	 */
	public ZkLocksEndpoint(CuratorLockRegistry registry) {
		this(registry, null);
	}

	/**
	 * Create the endpoint, describing the leadership groups too.
	 * @param registry the lock registry it describes
	 * @param leadership the application's leadership, or {@code null} for none
	 */
	public ZkLocksEndpoint(CuratorLockRegistry registry, @Nullable Leadership leadership) {
		this.registry = registry;
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
		return new ApplicationLocks(this.registry.getRootPath(), this.registry.describeHeldLocks(),
				this.registry.describeWaitingLocks(), leaders);
	}

	/**
	 * Describe who holds and waits for the lock of one key, across the ensemble.
	 * @param key the segments of the key below the root path
	 * @return the description
	 * @throws io.github.zklock.InvalidLockPathException if the segments do not form a legal key
	 */
	@ReadOperation
	public PathParticipants participants(@Selector(match = Selector.Match.ALL_REMAINING) String... key) {
		String lockKey = "/" + String.join("/", key);
		return new PathParticipants(this.registry.lockPath(lockKey), this.registry.describeParticipants(lockKey));
	}

	/**
	 * The locks of this application.
	 *
	 * @param rootPath the znode below which lock paths live
	 * @param held the grants held, oldest first
	 * @param waiting the threads waiting, longest waiting first
	 * @param leadership the leadership groups this application takes part in, by name
	 */
	public record ApplicationLocks(String rootPath, List<LockSnapshots.HeldLock> held,
			List<LockSnapshots.WaitingLock> waiting, List<GroupLeader> leadership) {
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
	 * @param participants its lock znodes in queue order
	 */
	public record PathParticipants(String path, List<LockSnapshots.Participant> participants) {
	}

}
