package io.github.zklock.benchmarks.run;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

import com.baomidou.lock.LockInfo;
import com.baomidou.lock.executor.ZookeeperLockExecutor;
import com.baomidou.lock.spring.boot.autoconfigure.Lock4jProperties;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.benchmarks.LockedService;
import io.github.zklock.benchmarks.LockedServiceApplication;
import io.github.zklock.benchmarks.RawCuratorState;
import io.github.zklock.benchmarks.ZooKeeperServers;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.KeptLocks;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.CountingZooKeeper;

/**
 * Counts the ZooKeeper requests of one uncontended lock cycle, at the ZooKeeper client
 * ({@link CountingZooKeeper}), for each lock kind through {@code @DistributedLock} (the
 * asynchronous kinds through {@code LockTemplate.executeAsync}) and for the raw Curator recipe of
 * the same kind, the peers and the plain-client floor, with the round trips of the kinds and the
 * recipes (requests sent back to back, before any answer, share one). Each kind runs one cycle
 * first (it creates the parent znodes), then {@value #CYCLES} counted cycles; the cold-key kinds
 * lock a never-seen key in every cycle, so that each creates its parents. Then the requests of the
 * distributed condition (a signal with nobody waiting, an await that times out, an await and its
 * signal between two threads), each against the plain lock cycle of its template: the starter's
 * template, then one with kept locks on ({@code _kept}) and one with local hand-off off
 * ({@code _no_handoff}). Then the requests per grant with {@value #THREADS} threads on one path.
 */
final class RequestCounts {

	static final int CYCLES = 20;

	static final int THREADS = 8;

	static final int CONTENDED_CYCLES = 50;

	/** The longest wait of a condition's round for a signal or a thread's place in the queue. */
	static final Duration CONDITION_BOUND = Duration.ofSeconds(30);

	private RequestCounts() {
	}

	/**
	 * Count on a fresh in-process server.
	 * @return the {@code REQUESTS ...} lines, the starter's kinds first
	 * @throws Exception if the server or a lock fails
	 */
	static List<String> measure() throws Exception {
		List<String> lines = new ArrayList<>();
		try (TestingServer server = ZooKeeperServers.startInProcess()) {
			CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();
			CuratorFramework client = ZooKeeperServers.startClient(CuratorFrameworkFactory.builder()
				.connectString(server.getConnectString())
				.zookeeperFactory(CountingZooKeeper.factory(counts)));
			ZookeeperLockRegistry springIntegration = new ZookeeperLockRegistry(client, "/requests/si");
			try (ConfigurableApplicationContext context = LockedServiceApplication.start(server.getConnectString(),
					"/requests/ours", client)) {
				LockedService service = context.getBean(LockedService.class);
				InterProcessMutex mutex = new InterProcessMutex(client, "/requests/raw/mutex/k");
				InterProcessReadWriteLock readWrite = new InterProcessReadWriteLock(client, "/requests/raw/rw/k");
				InterProcessSemaphoreMutex semaphoreMutex = new InterProcessSemaphoreMutex(client,
						"/requests/raw/sem/k");
				lines.add(ours("EXCLUSIVE", count(counts, () -> service.exclusive("k")),
						count(counts, () -> cycle(mutex))));
				lines.add(ours("READ", count(counts, () -> service.read("k")),
						count(counts, () -> cycle(readWrite.readLock()))));
				lines.add(ours("WRITE", count(counts, () -> service.write("k")),
						count(counts, () -> cycle(readWrite.writeLock()))));
				lines.add(ours("EXCLUSIVE_NON_REENTRANT", count(counts, () -> service.nonReentrant("k")),
						count(counts, () -> {
							semaphoreMutex.acquire();
							semaphoreMutex.release();
						})));
				InterProcessMultiLock multiLock = new InterProcessMultiLock(client,
						List.of("/requests/raw/multi/a", "/requests/raw/multi/b"));
				lines.add(ours("EXCLUSIVE_MULTI_2", count(counts, () -> service.transfer("b", "a")), count(counts, () -> {
					multiLock.acquire();
					multiLock.release();
				})));
				InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, "/requests/raw/permits/k",
						RawCuratorState.PERMITS);
				lines.add(ours("PERMIT", count(counts, () -> service.permit("k")),
						count(counts, () -> semaphore.returnLease(semaphore.acquire()))));
				lines.add(ours("EXCLUSIVE_WITH_FENCING_TOKEN",
						count(counts, () -> service.exclusiveWithFencingToken("k")), count(counts, () -> cycle(mutex))));
				LockTemplate template = context.getBean(LockTemplate.class);
				lines.addAll(coldKeys(counts, template, client));
				lines.add(ours("EXCLUSIVE_ASYNC", count(counts, () -> template.executeAsync("/async/mutex/k",
						LockMode.EXCLUSIVE, null, (handle) -> CompletableFuture.completedFuture(handle)).join()),
						count(counts, () -> cycle(mutex))));
				lines.add(ours("EXCLUSIVE_ASYNC_ANNOTATED", count(counts, () -> service.exclusiveAsync("k").join()),
						count(counts, () -> cycle(mutex))));
				lines.add(ours("READ_ASYNC", count(counts, () -> template.executeAsync("/async/rw/k", LockMode.READ, null,
						(handle) -> CompletableFuture.completedFuture(handle)).join()),
						count(counts, () -> cycle(readWrite.readLock()))));
				lines.addAll(conditions(counts, context.getBean(CuratorLockRegistry.class), template, ""));
				try (CuratorLockRegistry kept = new CuratorLockRegistry(client, "/requests/kept", 100);
						CuratorLockRegistry withoutHandoff = new CuratorLockRegistry(client, "/requests/no-handoff", 100)) {
					kept.setKeptLocks(KeptLocks.ENABLED);
					withoutHandoff.setLocalHandoff(LocalHandoff.DISABLED);
					lines.addAll(conditions(counts, kept, new LockTemplate(kept, CONDITION_BOUND), "_kept"));
					lines.addAll(conditions(counts, withoutHandoff, new LockTemplate(withoutHandoff, CONDITION_BOUND),
							"_no_handoff"));
				}
				lines.add(peer("spring_integration", count(counts, () -> {
					Lock lock = springIntegration.obtain("k");
					lock.lock();
					lock.unlock();
				})));
				com.baomidou.lock.LockTemplate lock4j = lock4j(client);
				lines.add(peer("lock4j", count(counts, () -> {
					LockInfo info = lock4j.lock("requests-k");
					if (info == null) {
						throw new IllegalStateException("lock4j did not acquire");
					}
					lock4j.releaseLock(info);
				})));
				lines.add(contended(counts, "zk_lock_template", (thread) -> () -> template.execute("/contended/k",
						LockMode.EXCLUSIVE, null, (handle) -> null)));
				InterProcessMutex shared = new InterProcessMutex(client, "/requests/raw/contended/k");
				lines.add(contended(counts, "raw_shared_mutex", (thread) -> () -> cycle(shared)));
				lines.add(contended(counts, "raw_mutex_per_thread", (thread) -> {
					InterProcessMutex own = new InterProcessMutex(client, "/requests/raw/contended/k");
					return () -> cycle(own);
				}));
				lines.add(contended(counts, "spring_integration", (thread) -> () -> {
					Lock lock = springIntegration.obtain("contended-k");
					lock.lock();
					lock.unlock();
				}));
				lines.add(contended(counts, "lock4j", (thread) -> () -> {
					LockInfo info = lock4j.lock("requests-contended-k");
					if (info == null) {
						throw new IllegalStateException("lock4j did not acquire");
					}
					lock4j.releaseLock(info);
				}));
				client.create().creatingParentsIfNeeded().forPath("/requests/floor");
				ZooKeeper plain = client.getZookeeperClient().getZooKeeper();
				lines.add(peer("zookeeper_floor", count(counts, () -> {
					plain.create("/requests/floor/k", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
					plain.delete("/requests/floor/k", -1);
				})));
			}
			finally {
				springIntegration.destroy();
				client.close();
			}
		}
		return lines;
	}

	/**
	 * The requests of the distributed condition ({@code LockTemplate.lock(key).newCondition()}) on
	 * a template, each cycle on the lock of one key, with the plain lock cycle of the same template
	 * and key as the baseline:
	 * <ul>
	 * <li>{@code signal_without_waiter}: lock, {@code signal()} with nobody waiting, unlock;</li>
	 * <li>{@code await_timed_out}: lock, {@code await(1 ms)} that nobody signals (the lock released
	 * and taken again), unlock;</li>
	 * <li>{@code await_signalled}: a round of two threads of the application, one waiting, one
	 * signalling. The waiting thread holds the lock; the signalling thread asks for it and waits in
	 * the application's local queue; the waiting thread awaits (its release hands the lock to the
	 * signalling thread when local hand-off is on); the signalling thread signals, waits until the
	 * woken thread asks for the lock again, and unlocks (handing it back). Each thread waits for
	 * the other's place in the local queue (local state, no request), so that every round goes the
	 * same way. A round ends when {@code await} has returned with the lock held.</li>
	 * </ul>
	 * @param suffix added to each line's name, for the registry's settings ({@code _kept})
	 */
	private static List<String> conditions(CountingZooKeeper.Counts counts, CuratorLockRegistry registry,
			LockTemplate template, String suffix) throws Exception {
		List<String> lines = new ArrayList<>();
		Lock signalLock = template.lock("/condition/signal/k");
		Condition signalCondition = signalLock.newCondition();
		lines.add(condition("signal_without_waiter" + suffix, count(counts, () -> {
			signalLock.lock();
			try {
				signalCondition.signal();
			}
			finally {
				signalLock.unlock();
			}
		}), count(counts, () -> cycle(signalLock))));
		Lock timedLock = template.lock("/condition/timed/k");
		Condition timedCondition = timedLock.newCondition();
		lines.add(condition("await_timed_out" + suffix, count(counts, () -> {
			timedLock.lock();
			try {
				if (timedCondition.await(1, TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("Signalled, or woken spuriously, with nobody signalling");
				}
			}
			finally {
				timedLock.unlock();
			}
		}), count(counts, () -> cycle(timedLock))));
		String key = "/condition/signalled/k";
		Lock roundLock = template.lock(key);
		Budget lockCycle = count(counts, () -> cycle(roundLock));
		try (SignalRounds rounds = new SignalRounds(registry, template, key)) {
			lines.add(condition("await_signalled" + suffix, count(counts, rounds::round), lockCycle));
		}
		return lines;
	}

	private static void cycle(Lock lock) {
		lock.lock();
		lock.unlock();
	}

	/**
	 * Rounds of {@code await} and {@code signal} between the calling thread, which holds the lock
	 * of the key from construction to {@link #close()}, and a signalling thread of its own (see
	 * {@link #conditions}).
	 */
	private static final class SignalRounds implements AutoCloseable {

		private static final String SIGNALLER = "condition-signaller";

		private final CuratorLockAdmin admin;

		private final String lockPath;

		private final Lock lock;

		private final Condition condition;

		private final ExecutorService signaller = Executors.newSingleThreadExecutor((task) -> {
			Thread thread = new Thread(task, SIGNALLER);
			thread.setDaemon(true);
			return thread;
		});

		SignalRounds(CuratorLockRegistry registry, LockTemplate template, String key) {
			this.admin = new CuratorLockAdmin(registry);
			this.lockPath = registry.lockPath(key);
			this.lock = template.lock(key);
			this.condition = this.lock.newCondition();
			this.lock.lock();
		}

		void round() throws Exception {
			String waiter = Thread.currentThread().getName();
			Future<?> signalled = this.signaller.submit(() -> {
				this.lock.lock();
				try {
					this.condition.signal();
					awaitQueued(waiter);
				}
				finally {
					this.lock.unlock();
				}
				return null;
			});
			awaitQueued(SIGNALLER);
			if (!this.condition.await(CONDITION_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("Not signalled within " + CONDITION_BOUND);
			}
			signalled.get(CONDITION_BOUND.toMillis(), TimeUnit.MILLISECONDS);
		}

		/** Wait until a thread waits for the lock in the application's local queue: local state. */
		private void awaitQueued(String thread) throws InterruptedException {
			long deadline = System.nanoTime() + CONDITION_BOUND.toNanos();
			while (this.admin.describeWaitingLocks()
				.stream()
				.noneMatch((waiting) -> waiting.path().equals(this.lockPath) && waiting.waiter().equals(thread))) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("'" + thread + "' did not queue for " + this.lockPath);
				}
				TimeUnit.MICROSECONDS.sleep(50);
			}
		}

		@Override
		public void close() {
			this.lock.unlock();
			this.signaller.shutdownNow();
		}

	}

	/**
	 * A never-seen key per cycle, with every znode below the root absent, for each kind: a key
	 * {@code /cold-<kind>-<n>/k} below the starter's root ({@code LockTemplate}) against a new raw
	 * recipe of the same kind on {@code /requests/raw/cold-<kind>-<n>/k} (the same depth, its top
	 * existing as the starter's root does). Curator's recipes create the missing parents after the
	 * lock znode's create fails: what a key costs the first time it is used, or after the server
	 * reaped its empty containers. The multi-lock takes two such keys.
	 */
	private static List<String> coldKeys(CountingZooKeeper.Counts counts, LockTemplate template,
			CuratorFramework client) throws Exception {
		List<String> lines = new ArrayList<>();
		lines.add(coldKey(counts, "EXCLUSIVE_COLD_KEY", (key) -> template.execute(key, LockMode.EXCLUSIVE, null,
				(handle) -> null), (path) -> cycle(new InterProcessMutex(client, path))));
		lines.add(coldKey(counts, "READ_COLD_KEY",
				(key) -> template.execute(key, LockMode.READ, null, (handle) -> null),
				(path) -> cycle(new InterProcessReadWriteLock(client, path).readLock())));
		lines.add(coldKey(counts, "WRITE_COLD_KEY",
				(key) -> template.execute(key, LockMode.WRITE, null, (handle) -> null),
				(path) -> cycle(new InterProcessReadWriteLock(client, path).writeLock())));
		lines.add(coldKey(counts, "EXCLUSIVE_NON_REENTRANT_COLD_KEY",
				(key) -> template.execute(LockRequest.of(key).withReentrant(false), (handle) -> null), (path) -> {
					InterProcessSemaphoreMutex semaphoreMutex = new InterProcessSemaphoreMutex(client, path);
					semaphoreMutex.acquire();
					semaphoreMutex.release();
				}));
		lines.add(coldKey(counts, "PERMIT_COLD_KEY",
				(key) -> template.execute(LockRequest.permit(key, RawCuratorState.PERMITS), (handle) -> null),
				(path) -> {
					InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path,
							RawCuratorState.PERMITS);
					semaphore.returnLease(semaphore.acquire());
				}));
		int[] ours = new int[1];
		int[] raw = new int[1];
		lines.add(ours("EXCLUSIVE_MULTI_2_COLD_KEY", count(counts, () -> {
			int n = ++ours[0];
			template.execute(LockRequest.of(List.of("/cold-multi-a" + n + "/k", "/cold-multi-b" + n + "/k")),
					(handle) -> null);
		}), count(counts, () -> {
			int n = ++raw[0];
			InterProcessMultiLock multiLock = new InterProcessMultiLock(client,
					List.of("/requests/raw/cold-multi-a" + n + "/k", "/requests/raw/cold-multi-b" + n + "/k"));
			multiLock.acquire();
			multiLock.release();
		})));
		lines.add(coldKey(counts, "EXCLUSIVE_ASYNC_COLD_KEY",
				(key) -> template
					.executeAsync(key, LockMode.EXCLUSIVE, null, (handle) -> CompletableFuture.completedFuture(handle))
					.join(),
				(path) -> cycle(new InterProcessMutex(client, path))));
		return lines;
	}

	/**
	 * Count a cold-key kind: {@code ours} on key {@code /cold-<kind>-<n>/k} ({@code /cold-read-7/k}),
	 * {@code raw} on path {@code /requests/raw/cold-<kind>-<n>/k}, {@code n} new in each cycle.
	 */
	private static String coldKey(CountingZooKeeper.Counts counts, String mode, ColdCycle ours, ColdCycle raw)
			throws Exception {
		String name = "/cold-" + mode.replace("_COLD_KEY", "").toLowerCase(Locale.ROOT).replace('_', '-') + "-";
		int[] oursSerial = new int[1];
		int[] rawSerial = new int[1];
		return ours(mode, count(counts, () -> ours.run(name + (++oursSerial[0]) + "/k")),
				count(counts, () -> raw.run("/requests/raw" + name + (++rawSerial[0]) + "/k")));
	}

	private static com.baomidou.lock.LockTemplate lock4j(CuratorFramework client) throws Exception {
		com.baomidou.lock.LockTemplate template = new com.baomidou.lock.LockTemplate();
		template.setProperties(new Lock4jProperties());
		template.setExecutors(List.of(new ZookeeperLockExecutor(client)));
		template.afterPropertiesSet();
		return template;
	}

	private static void cycle(InterProcessMutex mutex) throws Exception {
		mutex.acquire();
		mutex.release();
	}

	private static Budget count(CountingZooKeeper.Counts counts, Cycle cycle) throws Exception {
		cycle.run();
		counts.reset();
		for (int i = 0; i < CYCLES; i++) {
			cycle.run();
		}
		return new Budget(counts.total(), counts.writes(), counts.roundTrips(), counts.snapshot());
	}

	/**
	 * Requests per grant with {@value #THREADS} threads locking one path, {@value #CONTENDED_CYCLES}
	 * cycles each: what a hand-over costs beyond the uncontended cycle (the wake-up and the read of
	 * the queue, per waiter woken).
	 */
	private static String contended(CountingZooKeeper.Counts counts, String name, IntFunction<Cycle> cycles)
			throws Exception {
		List<Cycle> perThread = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			perThread.add(cycles.apply(t));
		}
		perThread.get(0).run();
		counts.reset();
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		try {
			CountDownLatch go = new CountDownLatch(1);
			List<Future<Object>> done = new ArrayList<>();
			for (Cycle cycle : perThread) {
				done.add(threads.submit(() -> {
					go.await();
					for (int i = 0; i < CONTENDED_CYCLES; i++) {
						cycle.run();
					}
					return null;
				}));
			}
			go.countDown();
			for (Future<Object> future : done) {
				future.get(5, TimeUnit.MINUTES);
			}
		}
		finally {
			threads.shutdownNow();
		}
		long grants = (long) THREADS * CONTENDED_CYCLES;
		return String.format(Locale.ROOT, "REQUESTS contended%d=%s per_grant=%.2f writes=%.2f ops=%s", THREADS, name,
				(double) counts.total() / grants, (double) counts.writes() / grants,
				counts.snapshot()
					.entrySet()
					.stream()
					.map((entry) -> String.format(Locale.ROOT, "%s:%.2f", entry.getKey(),
							(double) entry.getValue() / grants))
					.collect(Collectors.joining(",")));
	}

	private static String ours(String mode, Budget ours, Budget raw) {
		return "REQUESTS mode=" + mode + " per_cycle=" + ours.perCycle(ours.total) + " writes="
				+ ours.perCycle(ours.writes) + " round_trips=" + ours.perCycle(ours.roundTrips) + " raw_per_cycle="
				+ raw.perCycle(raw.total) + " raw_writes=" + raw.perCycle(raw.writes) + " raw_round_trips="
				+ raw.perCycle(raw.roundTrips) + " ops=" + ours.operations();
	}

	private static String condition(String name, Budget budget, Budget lockCycle) {
		return "REQUESTS condition=" + name + " per_cycle=" + budget.perCycle(budget.total) + " writes="
				+ budget.perCycle(budget.writes) + " round_trips=" + budget.perCycle(budget.roundTrips)
				+ " lock_cycle_per_cycle=" + lockCycle.perCycle(lockCycle.total) + " lock_cycle_writes="
				+ lockCycle.perCycle(lockCycle.writes) + " ops=" + budget.operations();
	}

	private static String peer(String name, Budget budget) {
		return "REQUESTS peer=" + name + " per_cycle=" + budget.perCycle(budget.total) + " writes="
				+ budget.perCycle(budget.writes) + " ops=" + budget.operations();
	}

	@FunctionalInterface
	private interface Cycle {

		void run() throws Exception;

	}

	/** One cycle of a cold-key kind, on the key (or path) it is given. */
	@FunctionalInterface
	private interface ColdCycle {

		void run(String key) throws Exception;

	}

	/** Requests and round trips counted over {@value #CYCLES} cycles. */
	private record Budget(long total, long writes, long roundTrips, Map<String, Long> byOperation) {

		String perCycle(long requests) {
			return (requests % CYCLES == 0) ? Long.toString(requests / CYCLES)
					: String.format(java.util.Locale.ROOT, "%.2f", (double) requests / CYCLES);
		}

		String operations() {
			StringJoiner joiner = new StringJoiner(",");
			this.byOperation.forEach((operation, count) -> joiner.add(operation + ":" + perCycle(count)));
			return joiner.toString();
		}

	}

}
