package io.github.zklock.actuate;

import java.util.List;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LockSnapshots;

/**
 * The {@code zklocks} actuator endpoint, read-only:
 * <ul>
 * <li>{@code GET /actuator/zklocks}: the locks this application holds (path, mode, state, holder
 * thread, held since, znode, fencing token if it was read) and the threads waiting for one;
 * local state, no ZooKeeper request;</li>
 * <li>{@code GET /actuator/zklocks/{key}}: the participants of one key's lock across the
 * ensemble, any client and any kind, in queue order (reads ZooKeeper), for example
 * {@code /actuator/zklocks/stock/apple} for the key {@code /stock/apple}.</li>
 * </ul>
 */
@Endpoint(id = "zklocks")
public class ZkLocksEndpoint {

	private final CuratorLockRegistry registry;

	/**
	 * Create the endpoint.
	 * @param registry the lock registry it describes
	 */
	public ZkLocksEndpoint(CuratorLockRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Describe the locks this application holds and waits for.
	 * @return the description
	 */
	@ReadOperation
	public ApplicationLocks locks() {
		return new ApplicationLocks(this.registry.getRootPath(), this.registry.describeHeldLocks(),
				this.registry.describeWaitingLocks());
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
	 */
	public record ApplicationLocks(String rootPath, List<LockSnapshots.HeldLock> held,
			List<LockSnapshots.WaitingLock> waiting) {
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
