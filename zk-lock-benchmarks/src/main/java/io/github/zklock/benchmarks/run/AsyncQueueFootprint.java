package io.github.zklock.benchmarks.run;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.benchmarks.ZooKeeperServers;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;

/**
 * What queued asynchronous grants cost, run in a JVM of its own (started by {@link MemoryScenario},
 * the server runs in the parent): another application (a second client) holds one key; this one
 * asks for it N times through {@code LockTemplate.async().acquire}, as a reactive service does
 * when N requests wait for the same lock. Once all N wait (the operators' view lists them), it
 * reports the live threads the waiting added ({@code ThreadMXBean}) and the heap they retain (used
 * heap after a full GC once two readings agree, minus before, per grant); then the holder lets go
 * and every grant is released as it comes, and the time until the last is granted is reported.
 * Arguments: connect string, N, key.
 */
public final class AsyncQueueFootprint {

	private static final Duration BOUND = Duration.ofMinutes(3);

	private static final int SETTLE_READINGS = 20;

	private AsyncQueueFootprint() {
	}

	/**
	 * Run the scenario and print one {@code ASYNC_QUEUE} line.
	 * @param args connect string, number of grants, key, and the kind: {@code exclusive} (an EXCLUSIVE
	 * lock, the default) or {@code permit} (one permit of a semaphore of one, another application
	 * holding it)
	 * @throws Exception if ZooKeeper fails or the grants do not all wait or complete within three
	 * minutes
	 */
	public static void main(String[] args) throws Exception {
		String connectString = args[0];
		int grants = Integer.parseInt(args[1]);
		String key = args[2];
		String kind = (args.length > 3) ? args[3] : "exclusive";
		LockRequest request = switch (kind) {
			case "exclusive" -> LockRequest.of(key);
			case "permit" -> LockRequest.permit(key, 1);
			default -> throw new IllegalArgumentException("Unknown kind '" + kind + "': exclusive or permit");
		};
		try (CuratorFramework client = ZooKeeperServers.startClient(connectString);
				CuratorFramework otherClient = ZooKeeperServers.startClient(connectString)) {
			CuratorLockRegistry registry = new CuratorLockRegistry(client, "/async-queue", 10_000);
			CuratorLockRegistry otherRegistry = new CuratorLockRegistry(otherClient, "/async-queue", 10_000);
			LockTemplate template = new LockTemplate(registry, LockRequest.WAIT_FOREVER);
			CuratorLockAdmin admin = new CuratorLockAdmin(registry);
			// Warm the code path, and the pool of grant threads, on another key.
			for (int i = 0; i < 50; i++) {
				template.async().acquire(request.withKeys(List.of(key + "-warm-up"))).thenCompose(AsyncLockHandle::releaseAsync)
					.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
			}
			LockHandle holder = new LockTemplate(otherRegistry, Duration.ZERO).acquire(request.withWaitTime(Duration.ZERO));
			Thread.sleep(1_000);
			int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
			long heapBefore = settledHeap(grants);

			List<CompletableFuture<Void>> cycles = new ArrayList<>(grants);
			for (int i = 0; i < grants; i++) {
				cycles.add(template.async().acquire(request).thenCompose(AsyncLockHandle::releaseAsync));
			}
			long deadline = System.nanoTime() + BOUND.toNanos();
			while (admin.describeWaitingLocks().size() < grants) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Only " + admin.describeWaitingLocks().size() + " of " + grants
							+ " asynchronous grants wait after " + BOUND);
				}
				Thread.sleep(50);
			}
			if (kind.equals("permit")) {
				// Each permit request queues a znode of its own on the semaphore's internal mutex:
				// measure once they are all created.
				String locks = "/async-queue" + key + "/locks";
				while (childCount(otherClient, locks) < grants) {
					if (System.nanoTime() > deadline) {
						throw new IllegalStateException("Only " + childCount(otherClient, locks) + " of " + grants
								+ " permit requests queued in ZooKeeper after " + BOUND);
					}
					Thread.sleep(50);
				}
			}
			int threadsQueued = ManagementFactory.getThreadMXBean().getThreadCount();
			long settling = System.nanoTime();
			long heapQueued = settledHeap(grants);
			double settleSeconds = (System.nanoTime() - settling) / 1e9;

			long released = System.nanoTime();
			holder.release();
			CompletableFuture.allOf(cycles.toArray(CompletableFuture[]::new)).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
			double drainSeconds = (System.nanoTime() - released) / 1e9;
			System.out.printf("ASYNC_QUEUE grants=%d kind=%s added_threads=%d heap_per_grant_bytes=%d threads_before=%d "
					+ "settle_seconds=%.1f drain_seconds=%.2f "
					+ "method=ThreadMXBean-thread-count,heap-pools-collection-usage-after-System.gc()-settled%n",
					grants, kind, threadsQueued - threadsBefore, (heapQueued - heapBefore) / grants, threadsBefore,
					settleSeconds, drainSeconds);
			registry.close();
			otherRegistry.close();
		}
	}

	/**
	 * The heap in use after full GCs ({@link KeyCacheFootprint#usedHeapAfterGc()}) once it has
	 * settled: read again every half second until two readings differ by less than 16 bytes per grant, so that what is only on its way (responses
	 * still arriving, each permit request's listing of the whole queue among them) is not counted
	 * as what a waiting grant keeps. Gives up after {@value #SETTLE_READINGS} readings and returns
	 * the last one.
	 */
	private static long settledHeap(int grants) throws InterruptedException {
		long previous = KeyCacheFootprint.usedHeapAfterGc();
		for (int i = 1; i < SETTLE_READINGS; i++) {
			Thread.sleep(500);
			long current = KeyCacheFootprint.usedHeapAfterGc();
			if (Math.abs(current - previous) < 16L * grants) {
				return current;
			}
			previous = current;
		}
		return previous;
	}

	private static int childCount(CuratorFramework client, String path) throws Exception {
		Stat stat = client.checkExists().forPath(path);
		return (stat != null) ? stat.getNumChildren() : 0;
	}

}
