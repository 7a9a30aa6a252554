package io.github.zklock;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.KeptLocks;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ZooKeeper requests of the distributed condition ({@link io.github.zklock.spi.LockCondition}),
 * counted at the client ({@link CountingZooKeeper}) on a real server, per cycle once the key was
 * used, against the plain lock cycle of the same template (the {@code REQUESTS condition=...} lines
 * of the benchmarks, {@code RequestCounts}):
 * <ul>
 * <li>a signal with nobody waiting adds one {@code getChildren} to the lock cycle;</li>
 * <li>an {@code await} that times out adds the waiter's create, its watching {@code getData} and
 * its delete, and a second lock cycle (the release and the grant taken again);</li>
 * <li>an {@code await} signalled by another thread of the application, in rounds where each thread
 * queues locally for the lock before the other lets it go: with local hand-off (the default) the
 * lock goes back and forth on one znode with no request, and a round costs the waiter's create
 * and {@code getData} and the signal's {@code getChildren} and delete. The waiters come and go in
 * their container, below the lock path, so the handed-over znode's watch on the lock path's
 * children (to learn whether another participant queues) stays quiet. Without hand-off the lock
 * goes through ZooKeeper twice per round (two lock cycles more);</li>
 * <li>with kept locks the lock cycle costs nothing, a signal with nobody waiting its listing
 * only, and an await that times out its waiter's create, {@code getData} and delete: the kept
 * znode stays kept (a waiter is no participant asking for the lock).</li>
 * </ul>
 * The registries check no revocations (a sweep would watch a znode held past its interval with one
 * {@code getData} more), so that every count is exact.
 */
class ConditionRequestCountTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(30);

	/** Counted cycles per kind, each on its own, after one that creates the key's znodes. */
	private static final int CYCLES = 3;

	private static final String SIGNALLER = "condition-signaller";

	private final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private String key;

	private final ExecutorService signaller = Executors.newSingleThreadExecutor((task) -> {
		Thread thread = new Thread(task, SIGNALLER);
		thread.setDaemon(true);
		return thread;
	});

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		CuratorFramework client = zooKeeper
			.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.counts)));
		this.registry = new CuratorLockRegistry(client, "/locks", 100);
		this.registry.setRevocationCheckInterval(Duration.ZERO);
		this.template = new LockTemplate(this.registry, BOUND);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.signaller.shutdownNow();
		this.registry.close();
	}

	@Test
	void aSignalWithNobodyWaitingAddsOneListingToTheLockCycle() throws Exception {
		Lock lock = this.template.lock(this.key);
		Condition condition = lock.newCondition();
		assertCycles("lock cycle", () -> cycle(lock), Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
		assertCycles("signal", () -> {
			lock.lock();
			try {
				condition.signal();
			}
			finally {
				lock.unlock();
			}
		}, Map.of("create", 1L, "getChildren", 2L, "delete", 1L));
		assertCycles("signalAll", () -> {
			lock.lock();
			try {
				condition.signalAll();
			}
			finally {
				lock.unlock();
			}
		}, Map.of("create", 1L, "getChildren", 2L, "delete", 1L));
	}

	@Test
	void anAwaitThatTimesOutAddsTheWaitersThreeRequestsAndALockCycle() throws Exception {
		Lock lock = this.template.lock(this.key);
		Condition condition = lock.newCondition();
		assertCycles("await timed out", () -> timedOut(lock, condition),
				Map.of("create", 3L, "getChildren", 2L, "getData", 1L, "delete", 3L));
	}

	/**
	 * The lock is handed over locally both ways, without a request; the waiters come and go in their
	 * container, so the handed-over znode's watch on the lock path's children stays quiet.
	 */
	@Test
	void anAwaitSignalledByAnotherThreadCostsFourRequests() throws Exception {
		assertSignalledRounds(Map.of("create", 1L, "getData", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void withoutLocalHandoffAnAwaitSignalledByAnotherThreadAddsTwoLockCycles() throws Exception {
		this.registry.setLocalHandoff(LocalHandoff.DISABLED);
		Lock lock = this.template.lock(this.key);
		assertCycles("lock cycle", () -> cycle(lock), Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
		assertSignalledRounds(Map.of("create", 3L, "getData", 1L, "getChildren", 3L, "delete", 3L));
	}

	@Test
	void withKeptLocksTheLockCycleIsFreeAndAnAwaitKeepsTheKeptZnode() throws Exception {
		this.registry.setKeptLocks(KeptLocks.ENABLED);
		Lock lock = this.template.lock(this.key);
		Condition condition = lock.newCondition();
		assertCycles("kept lock cycle", () -> cycle(lock), Map.of());
		assertCycles("signal on a kept lock", () -> {
			lock.lock();
			try {
				condition.signal();
			}
			finally {
				lock.unlock();
			}
		}, Map.of("getChildren", 1L));
		// The waiter's create, watch and delete once its time ran out, in the waiters' container:
		// the kept znode's watch on the lock path's children does not fire, and it stays kept.
		assertCycles("await timed out on a kept lock", () -> timedOut(lock, condition),
				Map.of("create", 1L, "getData", 1L, "delete", 1L));
		assertSignalledRounds(Map.of("create", 1L, "getData", 1L, "getChildren", 1L, "delete", 1L));
	}

	private static void cycle(Lock lock) {
		lock.lock();
		lock.unlock();
	}

	private static void timedOut(Lock lock, Condition condition) throws InterruptedException {
		lock.lock();
		try {
			assertThat(condition.await(1, TimeUnit.MILLISECONDS)).as("nobody signals").isFalse();
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Rounds of await and signal: this thread holds the lock; the signaller asks for it and queues
	 * locally; this thread awaits (its release lets the signaller in); the signaller signals, waits
	 * until the woken thread queues for the lock again, and unlocks. Each thread waits for the
	 * other's place in the local queue (local state), so that every round goes the same way.
	 */
	private void assertSignalledRounds(Map<String, Long> expected) throws Exception {
		String roundKey = this.key + "-rounds";
		Lock lock = this.template.lock(roundKey);
		Condition condition = lock.newCondition();
		String lockPath = this.registry.lockPath(roundKey);
		lock.lock();
		try {
			assertCycles("await signalled", () -> {
				String waiter = Thread.currentThread().getName();
				Future<?> signalled = this.signaller.submit(() -> {
					lock.lock();
					try {
						condition.signal();
						awaitQueued(lockPath, waiter);
					}
					finally {
						lock.unlock();
					}
					return null;
				});
				awaitQueued(lockPath, SIGNALLER);
				assertThat(condition.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("signalled").isTrue();
				signalled.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			}, expected);
		}
		finally {
			lock.unlock();
		}
	}

	/** Wait until a thread of this application waits for the lock in its local queue. */
	private void awaitQueued(String lockPath, String thread) throws InterruptedException {
		long deadline = System.nanoTime() + BOUND.toNanos();
		while (admin(this.registry).describeWaitingLocks()
			.stream()
			.noneMatch((waiting) -> waiting.path().equals(lockPath) && waiting.waiter().equals(thread))) {
			assertThat(System.nanoTime() - deadline).as("'%s' queued for %s", thread, lockPath).isNegative();
			TimeUnit.MICROSECONDS.sleep(50);
		}
	}

	/**
	 * Run a cycle once (the key's znodes), then {@value #CYCLES} times, each counted on its own
	 * once what it sent in the background had time to be sent.
	 */
	private void assertCycles(String what, Cycle cycle, Map<String, Long> expected) throws Exception {
		cycle.run();
		for (int i = 0; i < CYCLES; i++) {
			TimeUnit.MILLISECONDS.sleep(100);
			this.counts.reset();
			cycle.run();
			TimeUnit.MILLISECONDS.sleep(100);
			assertThat(this.counts.snapshot()).as("%s, cycle %d", what, i).isEqualTo(expected);
		}
	}

	@FunctionalInterface
	private interface Cycle {

		void run() throws Exception;

	}

}
