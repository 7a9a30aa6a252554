package io.github.zklock.benchmarks.run;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

import io.github.zklock.LockCallback;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.LockMode;
import io.github.zklock.benchmarks.ZooKeeperServers;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;

/**
 * Scenario 4, run in a JVM of its own (started by {@link MemoryScenario}, the server runs in the
 * parent): lock and unlock N distinct paths once each, then report
 * <ul>
 * <li>the heap the lock registry's cache retains: heap in use after full GCs, minus the same before
 * the run (registry already built, code path warmed on a throw-away registry); and, as a check, the
 * heap freed when the registry is dropped;</li>
 * <li>the number of cached entries (zk-lock: lock paths kept, Spring Integration: its locks);</li>
 * <li>the znodes left below the root right after the run, and after the server has reaped the empty
 * container parents (see {@link MemoryScenario} for the server's settings).</li>
 * </ul>
 * Arguments: connect string, {@code zk-lock} or {@code spring-integration}, N, root path.
 */
public final class KeyCacheFootprint {

	private static final LockCallback<Object> NOTHING = (handle) -> null;

	private static final long REAP_TIMEOUT_MS = 90_000;

	private KeyCacheFootprint() {
	}

	/**
	 * Run the scenario and print one {@code MEMORY} and one {@code ZNODES} line.
	 * @param args connect string, library, number of paths, root path
	 * @throws Exception if ZooKeeper fails
	 */
	public static void main(String[] args) throws Exception {
		String connectString = args[0];
		String library = args[1];
		int paths = Integer.parseInt(args[2]);
		String root = args[3];
		try (CuratorFramework client = ZooKeeperServers.startClient(connectString)) {
			Locker warmUp = locker(library, client, root + "-warm-up", paths);
			for (int i = 0; i < 200; i++) {
				warmUp.lockAndUnlock("w" + i);
			}
			warmUp.close();
			warmUp = null;
			Locker locker = locker(library, client, root, paths);
			long before = usedHeapAfterGc();
			long started = System.nanoTime();
			for (int i = 0; i < paths; i++) {
				locker.lockAndUnlock("k" + i);
			}
			long cycleNanos = (System.nanoTime() - started) / paths;
			long after = usedHeapAfterGc();
			int cached = locker.cachedCount();
			locker.close();
			locker = null;
			long dropped = usedHeapAfterGc();
			System.out.printf("MEMORY library=%s paths=%d cached=%d retained_bytes=%d per_path_bytes=%d "
					+ "freed_on_drop_bytes=%d cycle_micros=%d method=heap-pools-collection-usage-after-System.gc()%n",
					library, paths, cached, after - before, (after - before) / paths, after - dropped,
					cycleNanos / 1000);
			reaping(client, root);
		}
	}

	private static void reaping(CuratorFramework client, String root) throws Exception {
		long afterRun = countBelow(client, root);
		long started = System.nanoTime();
		long remaining = afterRun;
		while (remaining > 0 && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(REAP_TIMEOUT_MS)) {
			Thread.sleep(100);
			remaining = countBelow(client, root);
		}
		boolean rootExists = client.checkExists().forPath(root) != null;
		System.out.printf("ZNODES root=%s after_run=%d after_reaping=%d root_exists=%s reap_seconds=%.1f%n", root,
				afterRun, remaining, rootExists, (System.nanoTime() - started) / 1e9);
	}

	/** Znodes below the path, all levels, in one request; 0 once the path itself is gone. */
	private static long countBelow(CuratorFramework client, String path) throws Exception {
		if (client.checkExists().forPath(path) == null) {
			return 0;
		}
		try {
			return client.getZookeeperClient().getZooKeeper().getAllChildrenNumber(path);
		}
		catch (org.apache.zookeeper.KeeperException.NoNodeException ex) {
			return 0;
		}
	}

	/**
	 * The heap that full garbage collections leave in use: the sum, over the heap's memory pools, of
	 * what each held right after the last collection ({@code MemoryPoolMXBean.getCollectionUsage}).
	 * Not the pools' current usage: a thread that allocates after the collection takes a whole
	 * thread-local allocation buffer, which counts as used at once (about 1.4 MB seen here, now and
	 * then, which made per-item figures jump between runs).
	 */
	static long usedHeapAfterGc() throws InterruptedException {
		for (int i = 0; i < 4; i++) {
			Thread.sleep(100);
			System.gc();
		}
		long used = 0;
		for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
			MemoryUsage afterCollection = pool.getCollectionUsage();
			if (pool.getType() == MemoryType.HEAP && afterCollection != null) {
				used += afterCollection.getUsed();
			}
		}
		return used;
	}

	private static Locker locker(String library, CuratorFramework client, String root, int capacity) {
		return switch (library) {
			case "zk-lock" -> new ZkLockLocker(client, root, capacity);
			case "spring-integration" -> new SpringIntegrationLocker(client, root);
			default -> throw new IllegalArgumentException("Unknown library " + library);
		};
	}

	private interface Locker {

		void lockAndUnlock(String key) throws Exception;

		int cachedCount();

		void close();

	}

	/** The starter: {@code LockTemplate} on a registry with a cache capacity of at least N. */
	private static final class ZkLockLocker implements Locker {

		private final CuratorLockRegistry registry;

		private final LockTemplate template;

		ZkLockLocker(CuratorFramework client, String root, int capacity) {
			this.registry = new CuratorLockRegistry(client, root, Math.max(10_000, capacity));
			this.template = new LockTemplate(this.registry, LockRequest.WAIT_FOREVER);
		}

		@Override
		public void lockAndUnlock(String key) {
			this.template.execute("/" + key, LockMode.EXCLUSIVE, null, NOTHING);
		}

		@Override
		public int cachedCount() {
			return new CuratorLockAdmin(this.registry).cachedKeyCount();
		}

		@Override
		public void close() {
			this.registry.close();
		}

	}

	/** Peer: Spring Integration's registry (default cache capacity 30,000). */
	private static final class SpringIntegrationLocker implements Locker {

		private final ZookeeperLockRegistry registry;

		SpringIntegrationLocker(CuratorFramework client, String root) {
			this.registry = new ZookeeperLockRegistry(client, root);
		}

		@Override
		public void lockAndUnlock(String key) {
			Lock lock = this.registry.obtain(key);
			lock.lock();
			lock.unlock();
		}

		@Override
		public int cachedCount() {
			// Its cache is private: read its size, for the report only.
			try {
				Field locks = ZookeeperLockRegistry.class.getDeclaredField("locks");
				locks.setAccessible(true);
				return ((Map<?, ?>) locks.get(this.registry)).size();
			}
			catch (ReflectiveOperationException ex) {
				return -1;
			}
		}

		@Override
		public void close() {
			this.registry.destroy();
		}

	}

}
