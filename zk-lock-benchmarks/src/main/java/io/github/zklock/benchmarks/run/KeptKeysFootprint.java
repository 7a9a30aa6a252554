package io.github.zklock.benchmarks.run;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;

import io.github.zklock.LockCallback;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.benchmarks.ZooKeeperServers;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.KeptLocks;

/**
 * Part of scenario 4, run in a JVM of its own (started by {@link MemoryScenario}, the server runs in
 * the parent): one application with kept locks on locks and unlocks N distinct keys once each, with
 * {@code zk.lock.keep.max-keys} at M &lt; N, then closes its registry. Reports in one
 * {@code KEPT_KEYS} line the keys kept (at most M: the least recently used are given up), the
 * ephemeral lock znodes left on the server (the kept ones), the heap the registry retains per kept
 * key (heap in use after full GCs, minus the same before the run), and, after {@code close()}, how
 * long it took and the lock znodes left (none: each kept znode is deleted before it returns).
 * <p>
 * Arguments: connect string, N, M, root path.
 */
public final class KeptKeysFootprint {

	private static final LockCallback<Object> NOTHING = (handle) -> null;

	private KeptKeysFootprint() {
	}

	/**
	 * Run the scenario and print one {@code KEPT_KEYS} line.
	 * @param args connect string, number of keys, most keys kept, root path
	 * @throws Exception if ZooKeeper fails
	 */
	public static void main(String[] args) throws Exception {
		String connectString = args[0];
		int keys = Integer.parseInt(args[1]);
		int maxKeys = Integer.parseInt(args[2]);
		String root = args[3];
		try (CuratorFramework client = ZooKeeperServers.startClient(connectString)) {
			// The code path warm, on a throw-away registry.
			CuratorLockRegistry warmUp = registry(client, root + "-warm-up", maxKeys);
			LockTemplate warmUpTemplate = new LockTemplate(warmUp, LockRequest.WAIT_FOREVER);
			for (int i = 0; i < 200; i++) {
				warmUpTemplate.execute("/w" + i, LockMode.EXCLUSIVE, null, NOTHING);
			}
			warmUp.close();
			CuratorLockRegistry registry = registry(client, root, maxKeys);
			LockTemplate template = new LockTemplate(registry, LockRequest.WAIT_FOREVER);
			CuratorLockAdmin admin = new CuratorLockAdmin(registry);
			long before = KeyCacheFootprint.usedHeapAfterGc();
			for (int i = 0; i < keys; i++) {
				template.execute("/k" + i, LockMode.EXCLUSIVE, null, NOTHING);
			}
			// The least recently used beyond the bound are given up in the background.
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (admin.keptGivenUpCount("max-keys") < keys - maxKeys && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			int kept = admin.keptLockCount();
			long after = KeyCacheFootprint.usedHeapAfterGc();
			long znodes = ephemeralsBelow(client, root);
			long closing = System.nanoTime();
			registry.close();
			long closeNanos = System.nanoTime() - closing;
			long znodesAfterClose = ephemeralsBelow(client, root);
			System.out.printf("KEPT_KEYS keys=%d max_keys=%d kept=%d given_up_max_keys=%d lock_znodes=%d "
					+ "retained_bytes=%d per_kept_bytes=%d close_millis=%d lock_znodes_after_close=%d "
					+ "given_up_closed=%d%n", keys, maxKeys, kept, admin.keptGivenUpCount("max-keys"), znodes,
					after - before, (after - before) / Math.max(1, kept), TimeUnit.NANOSECONDS.toMillis(closeNanos),
					znodesAfterClose, admin.keptGivenUpCount("closed"));
		}
	}

	private static CuratorLockRegistry registry(CuratorFramework client, String root, int maxKeys) {
		CuratorLockRegistry registry = new CuratorLockRegistry(client, root, 2 * maxKeys);
		registry.setKeptLocks(new KeptLocks(true, Duration.ofMinutes(10), maxKeys, KeptLocks.DEFAULT_GIVE_UP_WAIT));
		return registry;
	}

	/** This session's ephemeral znodes below the root: the lock znodes it holds or keeps. */
	private static long ephemeralsBelow(CuratorFramework client, String root) throws Exception {
		return client.getZookeeperClient().getZooKeeper().getEphemerals(root).size();
	}

}
