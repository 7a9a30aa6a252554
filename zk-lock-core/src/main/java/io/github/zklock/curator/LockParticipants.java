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
 *
 * <p>Who holds, by each recipe's rule on the queue order (the sequence of creation): a mutex's
 * first znode; for a read/write lock a leading WRITE, or every READ before the first WRITE
 * ({@code InterProcessReadWriteLock}'s rule, leaving out the re-entry of a READ under its own
 * thread's WRITE, which the znodes cannot show); the first N leases of a semaphore of N permits
 * (one for the non-reentrant lock). The container of the lock's condition waiters
 * ({@link ConditionQueues}) is no participant: they wait for a signal, not for the lock.
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
	static List<LockParticipant> describe(CuratorFramework client, String lockPath) throws Exception {
		List<Znode> znodes = new ArrayList<>();
		int permits = 0;
		for (String child : childrenOrEmpty(client, lockPath)) {
			if (child.equals(Protocol.LEASES)) {
				permits = permits(client, lockPath);
				String kind = (permits > 0) ? "PERMIT (of " + permits + ")" : "EXCLUSIVE (reentrant = false)";
				for (String lease : childrenOrEmpty(client, ZKPaths.makePath(lockPath, child))) {
					add(client, znodes, ZKPaths.makePath(lockPath, child, lease), kind, Group.LEASE);
				}
			}
			else if (!child.equals(Protocol.LOCKS) && !ConditionQueues.isQueue(child)) {
				String kind = kind(child);
				add(client, znodes, ZKPaths.makePath(lockPath, child), kind,
						kind.equals(LockMode.EXCLUSIVE.name()) ? Group.MUTEX : Group.READ_WRITE);
			}
		}
		znodes.sort(Comparator.comparingLong((znode) -> znode.stat.getCzxid()));
		int maxLeases = Math.max(permits, 1);
		int mutexes = 0;
		int leases = 0;
		int readWrites = 0;
		boolean writeSeen = false;
		List<LockParticipant> participants = new ArrayList<>(znodes.size());
		for (Znode znode : znodes) {
			boolean holder;
			switch (znode.group) {
				case MUTEX -> holder = mutexes++ == 0;
				case LEASE -> holder = leases++ < maxLeases;
				default -> {
					boolean write = znode.kind.equals(LockMode.WRITE.name());
					// A WRITE holds when it is first; a READ while no WRITE is before it.
					holder = write ? readWrites == 0 : !writeSeen;
					readWrites++;
					writeSeen |= write;
				}
			}
			participants.add(znode.participant(holder));
		}
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

	private static void add(CuratorFramework client, List<Znode> znodes, String node, String kind, Group group)
			throws Exception {
		Stat stat = new Stat();
		byte[] data;
		try {
			data = client.getData().storingStatIn(stat).forPath(node);
		}
		catch (KeeperException.NoNodeException ex) {
			// Released between the listing and this read.
			return;
		}
		znodes.add(new Znode(node, kind, group, stat, (data != null) ? new String(data, StandardCharsets.UTF_8) : ""));
	}

	/**
	 * The number of permits of the semaphore whose leases live below the lock path (see
	 * {@link SemaphorePermits}), or 0 for the leases of a non-reentrant lock (one lease).
	 */
	private static int permits(CuratorFramework client, String lockPath) throws Exception {
		byte[] data;
		try {
			data = client.getData().forPath(lockPath);
		}
		catch (KeeperException.NoNodeException ex) {
			data = null;
		}
		int permits = (data != null) ? SemaphorePermits.parse(data) : -1;
		return Math.max(permits, 0);
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

	/** Which recipe's rule decides whether a znode holds. */
	private enum Group {

		MUTEX, READ_WRITE, LEASE

	}

	private record Znode(String path, String kind, Group group, Stat stat, String data) {

		LockParticipant participant(boolean holder) {
			LockOwner owner = LockNodeData.parse(this.data);
			return new LockParticipant(ZKPaths.getNodeFromPath(this.path), this.path, this.kind,
					this.stat.getCzxid(), Instant.ofEpochMilli(this.stat.getCtime()),
					Long.toHexString(this.stat.getEphemeralOwner()), this.data,
					(owner != null) ? owner.pid() : null, (owner != null) ? owner.host() : null, holder, null);
		}

	}

}
