package io.github.zklock.curator;

import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import io.github.zklock.LockException;
import io.github.zklock.PermitsMismatchException;

/**
 * Keeps a semaphore's number of permits with its key, so that participants that disagree are
 * told instead of each counting against its own limit (Curator's {@code InterProcessSemaphoreV2}
 * takes the number from each participant and never compares them).
 *
 * <p>The number lives in the data of the semaphore's znode (the lock path, parent of Curator's
 * {@code leases} and {@code locks} children) as {@code permits=N}. That znode is a container, as
 * Curator would create it: ZooKeeper removes it, number included, once it has had children and has
 * none left, so a semaphore nobody uses can be given another number later. The first participant
 * to create the znode, or to find it without a number (created by an older client or by raw
 * Curator), stores its number; every other participant compares.
 *
 * <p>Requests: one {@code create} when the znode is new (its parents created as containers if
 * missing); else one {@code create} refused plus one {@code getData}, and a {@code setData} when
 * no number was stored yet. The registry checks once per key, number of permits and cache entry,
 * not per lease.
 */
final class SemaphorePermits {

	private static final String PREFIX = "permits=";

	/** Races with other participants creating, reaping or filling the znode are retried this often. */
	private static final int ATTEMPTS = 10;

	private SemaphorePermits() {
	}

	/**
	 * Store the number of permits with the key, or check it against the stored one.
	 * @param client the Curator client
	 * @param lockPath the semaphore's znode path
	 * @param permits the number of permits the caller names
	 * @throws PermitsMismatchException if another number is stored
	 * @throws LockException if the znode holds data that is not a number of permits
	 * @throws Exception what Curator throws for ZooKeeper failures
	 */
	static void check(CuratorFramework client, String lockPath, int permits) throws Exception {
		byte[] data = (PREFIX + permits).getBytes(StandardCharsets.UTF_8);
		for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
			try {
				client.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(lockPath, data);
				return;
			}
			catch (KeeperException.NodeExistsException ex) {
				// Read below.
			}
			Stat stat = new Stat();
			byte[] stored;
			try {
				stored = client.getData().storingStatIn(stat).forPath(lockPath);
			}
			catch (KeeperException.NoNodeException ex) {
				// Reaped since: create it again.
				continue;
			}
			if (stored == null || stored.length == 0) {
				try {
					client.setData().withVersion(stat.getVersion()).forPath(lockPath, data);
					return;
				}
				catch (KeeperException.BadVersionException | KeeperException.NoNodeException ex) {
					// Another participant stored its number first, or the znode was reaped: read again.
					continue;
				}
			}
			int storedPermits = parse(stored);
			if (storedPermits < 1) {
				throw new LockException("Semaphore '" + lockPath + "' cannot be used: its znode holds data that is "
						+ "not a number of permits ('" + new String(stored, StandardCharsets.UTF_8)
						+ "'); is another tool using this path?");
			}
			if (storedPermits != permits) {
				throw new PermitsMismatchException(lockPath, permits, storedPermits);
			}
			return;
		}
		throw new LockException("Semaphore '" + lockPath + "': could not store or read its number of permits in "
				+ ATTEMPTS + " attempts, other participants kept changing its znode");
	}

	/** The stored number of permits, or -1 if the data is not one. */
	static int parse(byte[] stored) {
		String text = new String(stored, StandardCharsets.UTF_8);
		if (!text.startsWith(PREFIX)) {
			return -1;
		}
		try {
			return Integer.parseInt(text.substring(PREFIX.length()));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

}
