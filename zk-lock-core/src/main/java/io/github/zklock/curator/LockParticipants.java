package io.github.zklock.curator;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import io.github.zklock.LockMode;

/**
 * Lists the lock znodes below a lock path, of any client and any lock kind, from the names Curator
 * gives them: {@code InterProcessReadWriteLock} marks its znodes {@code __READ__} and
 * {@code __WRIT__}; {@code InterProcessSemaphoreV2} keeps its leases below {@code leases} and its
 * internal mutex below {@code locks}; {@code InterProcessMutex} znodes carry no mark. Sends one
 * getChildren per level, then one getData per participant.
 */
final class LockParticipants {

	/** Curator's mark of a read lock znode ({@code InterProcessReadWriteLock.READ_LOCK_NAME}). */
	private static final String READ_MARK = "__READ__";

	/** Curator's mark of a write lock znode ({@code InterProcessReadWriteLock.WRITE_LOCK_NAME}). */
	private static final String WRITE_MARK = "__WRIT__";

	private LockParticipants() {
	}

	/**
	 * Describe the participants of a lock path in queue order (by creation id).
	 * @param client the client to read with
	 * @param lockPath the lock's znode path
	 * @return the participants, empty if the lock path does not exist
	 * @throws Exception what Curator throws when the read fails
	 */
	static List<LockSnapshots.Participant> describe(CuratorFramework client, String lockPath) throws Exception {
		List<LockSnapshots.Participant> participants = new ArrayList<>();
		for (String child : childrenOrEmpty(client, lockPath)) {
			if (child.equals(LockRecipe.Leases.LEASES)) {
				String kind = leaseKind(client, lockPath);
				for (String lease : childrenOrEmpty(client, ZKPaths.makePath(lockPath, child))) {
					add(client, participants, ZKPaths.makePath(lockPath, child, lease), kind);
				}
			}
			else if (!child.equals(LockRecipe.Leases.LOCKS)) {
				add(client, participants, ZKPaths.makePath(lockPath, child), kind(child));
			}
		}
		participants.sort(Comparator.comparingLong(LockSnapshots.Participant::fencingToken));
		return participants;
	}

	private static List<String> childrenOrEmpty(CuratorFramework client, String path) throws Exception {
		try {
			return client.getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

	private static void add(CuratorFramework client, List<LockSnapshots.Participant> participants, String node,
			String kind) throws Exception {
		Stat stat = new Stat();
		byte[] data;
		try {
			data = client.getData().storingStatIn(stat).forPath(node);
		}
		catch (KeeperException.NoNodeException ex) {
			// Released between the listing and this read.
			return;
		}
		participants.add(new LockSnapshots.Participant(ZKPaths.getNodeFromPath(node), kind, stat.getCzxid(),
				Instant.ofEpochMilli(stat.getCtime()), Long.toHexString(stat.getEphemeralOwner()),
				(data != null) ? new String(data, StandardCharsets.UTF_8) : ""));
	}

	/**
	 * What the leases of a lock path are: permits of a semaphore when the lock path holds its
	 * number of permits (see {@link SemaphorePermits}), else grants of a non-reentrant lock.
	 */
	private static String leaseKind(CuratorFramework client, String lockPath) throws Exception {
		byte[] data;
		try {
			data = client.getData().forPath(lockPath);
		}
		catch (KeeperException.NoNodeException ex) {
			data = null;
		}
		int permits = (data != null) ? SemaphorePermits.parse(data) : -1;
		return (permits > 0) ? "PERMIT (of " + permits + ")" : "EXCLUSIVE (reentrant = false)";
	}

	private static String kind(String node) {
		if (node.contains(READ_MARK)) {
			return LockMode.READ.name();
		}
		if (node.contains(WRITE_MARK)) {
			return LockMode.WRITE.name();
		}
		return LockMode.EXCLUSIVE.name();
	}

}
