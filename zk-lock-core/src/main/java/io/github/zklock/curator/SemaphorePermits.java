package io.github.zklock.curator;

import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
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
 * <p>Requests: one {@code create} and one {@code exists} when the znode is new; when its parents
 * are missing, the {@code create} refused, then their creates as containers and the {@code create}
 * again sent back to back ({@link CuratorZnodes#sendLevelCreates}; if that is refused too,
 * Curator's {@code creatingParentContainersIfNeeded}, which names what stops it); else one {@code create} refused plus one {@code getData}, and
 * a {@code setData} and an {@code exists} when no number was stored yet. Each check leaves a watch
 * on the znode (the {@code exists} or the {@code getData}): the registry checks once per key,
 * number of permits and cache entry, not per lease, and again once the znode was deleted (reaped)
 * or the session ended, so that a number stored anew after the znode was reaped is compared as
 * well.
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
	 * @param znodes the client's lock requests, which create a missing path's levels
	 * @param lockPath the semaphore's znode path
	 * @param permits the number of permits the caller names
	 * @param watcher left on the znode (a one-shot ZooKeeper watch), told when it is deleted or
	 * its data changes; the same object for one key, so that repeated checks leave one watch
	 * @throws PermitsMismatchException if another number is stored
	 * @throws LockException if the znode holds data that is not a number of permits
	 * @throws Exception what Curator throws for ZooKeeper failures
	 */
	static void check(CuratorFramework client, CuratorZnodes znodes, String lockPath, int permits, Watcher watcher)
			throws Exception {
		byte[] data = (PREFIX + permits).getBytes(StandardCharsets.UTF_8);
		for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
			try {
				Stat created = new Stat();
				try {
					client.create().storingStatIn(created).withMode(CreateMode.CONTAINER).forPath(lockPath, data);
				}
				catch (KeeperException.NoNodeException ex) {
					// Its parents are missing: their creates, then this one again, back to back.
					znodes.sendLevelCreates(ZKPaths.getPathAndNode(lockPath).getPath());
					try {
						client.create().storingStatIn(created).withMode(CreateMode.CONTAINER).forPath(lockPath, data);
					}
					catch (KeeperException.NoNodeException stale) {
						// A level known to exist was reaped since, or a level's create was refused (its
						// answer is not awaited): Curator's walk creates every missing level, or throws
						// why it cannot (access denied, say).
						client.create()
							.storingStatIn(created)
							.creatingParentContainersIfNeeded()
							.withMode(CreateMode.CONTAINER)
							.forPath(lockPath, data);
					}
				}
				// Its locks and leases are missing: created before their first create.
				znodes.createdEmpty(lockPath);
				Stat watched = client.checkExists().usingWatcher(watcher).forPath(lockPath);
				if (watched != null && watched.getCzxid() == created.getCzxid()) {
					return;
				}
				// Reaped already (and maybe created again by another participant): check again.
				continue;
			}
			catch (KeeperException.NodeExistsException ex) {
				// Read below.
			}
			Stat stat = new Stat();
			byte[] stored;
			try {
				stored = client.getData().storingStatIn(stat).usingWatcher(watcher).forPath(lockPath);
			}
			catch (KeeperException.NoNodeException ex) {
				// Reaped since: create it again.
				continue;
			}
			if (stored == null || stored.length == 0) {
				Stat written;
				try {
					written = client.setData().withVersion(stat.getVersion()).forPath(lockPath, data);
				}
				catch (KeeperException.BadVersionException | KeeperException.NoNodeException ex) {
					// Another participant stored its number first, or the znode was reaped: read again.
					continue;
				}
				// The write fired the watch set by the read (a data change, which the watcher ignores):
				// set it again.
				Stat watched = client.checkExists().usingWatcher(watcher).forPath(lockPath);
				if (watched != null && watched.getCzxid() == written.getCzxid()) {
					return;
				}
				continue;
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
