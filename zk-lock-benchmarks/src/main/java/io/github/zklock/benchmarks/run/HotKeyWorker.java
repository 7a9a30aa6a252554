package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import io.github.zklock.AsyncLockTemplate;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;
import io.github.zklock.benchmarks.ZooKeeperServers;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.KeptLocks;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.CountingZooKeeper;

/**
 * One application of the hot-key scenario, in a JVM of its own (started by {@link HotKeyScenario},
 * three at a time). It connects once (one Curator client and, when a Redis address is given, one
 * Redisson client, each with default settings), prints {@code READY}, then runs the commands the
 * runner writes to its standard input, so that the three JVMs start each run together:
 * <ul>
 * <li>{@code RUN <contender> <threads> <warm-up ms> <measured ms>}: the threads lock and unlock
 * the contender's one key in a loop, with a tiny critical section, for the warm-up and then the
 * measured time; prints one {@code RESULT} line (grants in the measured window, per thread, the
 * wait histogram) and {@code DONE};</li>
 * <li>{@code QUIT} (or the end of the input): close and exit.</li>
 * </ul>
 * Contenders: {@code zk_lock} ({@link LockTemplate} on a {@link CuratorLockRegistry} with
 * {@link LocalHandoff#DEFAULT}, through a {@link HandoffRecordingRegistry} that tells which grants
 * were handed over locally), {@code zk_lock_no_handoff} ({@link LocalHandoff#DISABLED}),
 * {@code zk_lock_kept} (kept locks on, {@link KeptLocks#ENABLED}: measured uncontended only),
 * {@code raw_mutex} (one Curator {@link InterProcessMutex} per thread) and {@code redisson}
 * (Redisson's {@link RLock}, {@code lock()} and {@code unlock()}); and, asynchronously, with
 * {@code <threads>} callers that each keep one request in flight and start the next from the
 * completion of the last, {@code zk_lock_async} ({@code LockTemplate.async().execute}, local
 * hand-off on) and {@code redisson_async} ({@code RLockAsync.lockAsync(owner)} and
 * {@code unlockAsync(owner)}, an owner id per caller). Two JVMs of one thread each take strict
 * turns on one key with {@code pingpong_zk_lock} and {@code pingpong_zk_lock_kept} (kept locks off
 * and on; {@link PingPongTurn}); the affinity contenders lock keys of their own JVM's
 * ({@code affinity_zk_lock_kept}, {@code affinity_raw_mutex}).
 * <p>
 * The wait of a grant is the time from the call that asks for the lock to the start of the
 * critical section. The critical section checks mutual exclusion within the JVM: it sets an
 * in-section flag that no other thread of the JVM may hold, and increments a counter guarded by
 * the lock only; a flag found set or a counter that does not add up to the grants is reported as
 * a violation (the runner fails). Exclusion across JVMs is the safety tests' job.
 * <p>
 * Arguments: JVM number, ZooKeeper connect string, base path (znode), Redis address
 * ({@code host:port}, or {@code -} for none).
 */
public final class HotKeyWorker {

	static final List<String> CONTENDERS = List.of("zk_lock", "zk_lock_no_handoff", "raw_mutex", "redisson",
			"zk_lock_async", "redisson_async", "affinity_zk_lock_kept", "affinity_raw_mutex");

	/** The contenders whose {@code threads} are asynchronous callers, each with one request in flight. */
	static final List<String> ASYNC_CONTENDERS = List.of("zk_lock_async", "redisson_async");

	private static final Duration WAIT_TIME = Duration.ofMinutes(2);

	/** Keys of its own per JVM in the affinity scenario. */
	static final int AFFINITY_KEYS = 1_000;

	/** One request in this many of the affinity scenario is on a key of another JVM. */
	static final int AFFINITY_FOREIGN_ONE_IN = 100;

	private static final CompletableFuture<Object> DONE = CompletableFuture.completedFuture(null);

	private static final CompletableFuture<String> DONE_WRITES = CompletableFuture.completedFuture("-1");

	private final int jvm;

	private final CuratorFramework client;

	private final String basePath;

	private final @Nullable RedissonClient redisson;

	private final CuratorLockRegistry handoffRegistry;

	private final HandoffRecordingRegistry handoffGrants;

	private final LockTemplate handoff;

	private final CuratorLockRegistry noHandoffRegistry;

	private final HandoffRecordingRegistry noHandoffGrants;

	private final LockTemplate noHandoff;

	private final CuratorLockRegistry keptRegistry;

	private final HandoffRecordingRegistry keptGrants;

	private final LockTemplate kept;

	/** The client of the affinity contenders, counting its ZooKeeper requests. */
	private final CuratorFramework affinityClient;

	private final CountingZooKeeper.Counts affinityRequests = new CountingZooKeeper.Counts();

	/** Requests of the affinity scenario on a key of another JVM. */
	private final java.util.concurrent.atomic.LongAdder affinityForeign = new java.util.concurrent.atomic.LongAdder();

	private final CuratorLockRegistry affinityRegistry;

	private final LockTemplate affinity;

	/** Per owner JVM and key of the affinity scenario: whether a thread of this JVM is in its section. */
	private final AtomicBoolean[][] affinityInSection = new AtomicBoolean[HotKeyScenario.JVMS + 1][AFFINITY_KEYS];

	/** Per owner JVM and key: a counter guarded by the key's lock only. */
	private final long[][] affinityGuarded = new long[HotKeyScenario.JVMS + 1][AFFINITY_KEYS];

	/** Whether the contender running locks many keys: the critical section checks per key, not the hot key's flag. */
	private volatile boolean perKey;

	private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "hotkey-worker");
		thread.setDaemon(true);
		return thread;
	});

	private final AtomicBoolean inSection = new AtomicBoolean();

	private final AtomicLong violations = new AtomicLong();

	/** Guarded by the lock under test, nothing else. */
	private long guarded;

	/** Whose turn it is in the ping-pong scenario (JVMs 1 and 2), once it ran. */
	private @Nullable PingPongTurn pingPongTurn;

	private HotKeyWorker(int jvm, CuratorFramework client, String connectString, String basePath,
			@Nullable RedissonClient redisson) throws InterruptedException {
		this.jvm = jvm;
		this.client = client;
		this.basePath = basePath;
		this.redisson = redisson;
		this.handoffRegistry = new CuratorLockRegistry(client, basePath + "/zk-lock", 10_000);
		this.handoffRegistry.setLocalHandoff(LocalHandoff.DEFAULT);
		this.handoffGrants = new HandoffRecordingRegistry(this.handoffRegistry);
		this.handoff = new LockTemplate(this.handoffGrants, LockRequest.WAIT_FOREVER);
		this.noHandoffRegistry = new CuratorLockRegistry(client, basePath + "/zk-lock-no-handoff", 10_000);
		this.noHandoffRegistry.setLocalHandoff(LocalHandoff.DISABLED);
		this.noHandoffGrants = new HandoffRecordingRegistry(this.noHandoffRegistry);
		this.noHandoff = new LockTemplate(this.noHandoffGrants, LockRequest.WAIT_FOREVER);
		this.keptRegistry = new CuratorLockRegistry(client, basePath + "/zk-lock-kept", 10_000);
		this.keptRegistry.setKeptLocks(KeptLocks.ENABLED);
		this.keptGrants = new HandoffRecordingRegistry(this.keptRegistry);
		this.kept = new LockTemplate(this.keptGrants, LockRequest.WAIT_FOREVER);
		this.affinityClient = ZooKeeperServers.startClient(CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.zookeeperFactory(CountingZooKeeper.factory(this.affinityRequests)));
		this.affinityRegistry = new CuratorLockRegistry(this.affinityClient, basePath + "/affinity-zk-lock", 10_000);
		this.affinityRegistry.setKeptLocks(new KeptLocks(true, KeptLocks.DEFAULT_MAX_IDLE,
				HotKeyScenario.JVMS * AFFINITY_KEYS, KeptLocks.DEFAULT_GIVE_UP_WAIT));
		this.affinity = new LockTemplate(this.affinityRegistry, LockRequest.WAIT_FOREVER);
		for (AtomicBoolean[] keys : this.affinityInSection) {
			for (int k = 0; k < keys.length; k++) {
				keys[k] = new AtomicBoolean();
			}
		}
	}

	/**
	 * Connect, then run the commands read from standard input.
	 * @param args JVM number, connect string, base path, Redis address or {@code -}
	 * @throws Exception if a contender fails
	 */
	public static void main(String[] args) throws Exception {
		int jvm = Integer.parseInt(args[0]);
		String redisAddress = args[3];
		CuratorFramework client = ZooKeeperServers.startClient(args[1]);
		RedissonClient redisson = null;
		if (!redisAddress.equals("-")) {
			Config config = new Config();
			config.useSingleServer().setAddress("redis://" + redisAddress);
			redisson = Redisson.create(config);
		}
		HotKeyWorker worker = new HotKeyWorker(jvm, client, args[1], args[2], redisson);
		try {
			System.out.println("READY");
			BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String command;
			while ((command = commands.readLine()) != null && !command.equals("QUIT")) {
				String[] fields = command.split(" ");
				if (!fields[0].equals("RUN")) {
					throw new IllegalArgumentException("Unknown command " + command);
				}
				System.out.println(worker.run(fields[1], Integer.parseInt(fields[2]), Long.parseLong(fields[3]),
						Long.parseLong(fields[4])));
				System.out.println("DONE");
			}
		}
		finally {
			worker.close();
		}
	}

	private String run(String contender, int threadCount, long warmupMillis, long measureMillis) throws Exception {
		long start = System.nanoTime();
		long windowStart = start + TimeUnit.MILLISECONDS.toNanos(warmupMillis);
		long windowEnd = windowStart + TimeUnit.MILLISECONDS.toNanos(measureMillis);
		this.perKey = contender.startsWith("affinity_");
		long guardedBefore = this.perKey ? affinityGuardedSum() : this.guarded;
		long writesBefore = this.affinityRequests.writes();
		// The writes of the measuring window alone, read at its start and end: the warm-up creates the
		// keys' znodes (and, after another contender's run, creates again those given up as idle).
		CompletableFuture<String> windowWrites = this.perKey
				? CompletableFuture.supplyAsync(() -> writesBetween(windowStart, windowEnd)) : DONE_WRITES;
		long cpuBefore = processCpuNanos();
		List<Future<ThreadResult>> futures = new ArrayList<>();
		if (ASYNC_CONTENDERS.contains(contender)) {
			AsyncCycle cycle = asyncCycle(contender);
			for (int caller = 0; caller < threadCount; caller++) {
				CompletableFuture<ThreadResult> done = new CompletableFuture<>();
				next(cycle, caller, new ThreadResult(), done, windowStart, windowEnd);
				futures.add(done);
			}
		}
		else {
			PingPongTurn turn = contender.startsWith("pingpong_") ? pingPongTurn() : null;
			for (int t = 0; t < threadCount; t++) {
				Cycle cycle = cycle(contender);
				futures.add(this.threads.submit(() -> loop(cycle, turn, windowStart, windowEnd)));
			}
		}
		long[] grants = new long[threadCount];
		long cycles = 0;
		long localHandoffs = 0;
		WaitHistogram waits = new WaitHistogram();
		for (int t = 0; t < threadCount; t++) {
			ThreadResult result = futures.get(t).get(warmupMillis + measureMillis + 120_000, TimeUnit.MILLISECONDS);
			grants[t] = result.grants;
			cycles += result.cycles;
			localHandoffs += result.localHandoffs;
			waits.add(result.waits);
		}
		// The process's CPU time (every thread: the callers, Curator's, the collector's) per cycle of the run.
		long cpuNanosPerCycle = (cycles > 0) ? (processCpuNanos() - cpuBefore) / cycles : 0;
		long lost = cycles - ((this.perKey ? affinityGuardedSum() : this.guarded) - guardedBefore);
		long affinityWrites = this.affinityRequests.writes() - writesBefore;
		String[] affinityWindow = windowWrites.get(10, TimeUnit.SECONDS).split(" ", 2);
		StringJoiner perThread = new StringJoiner(",");
		long total = 0;
		for (long count : grants) {
			perThread.add(Long.toString(count));
			total += count;
		}
		return "RESULT contender=" + contender + " jvm=" + this.jvm + " threads=" + threadCount + " grants=" + total
				+ " window_nanos=" + (windowEnd - windowStart) + " per_thread=" + perThread + " local_handoffs="
				+ localHandoffs + " cycles=" + cycles + " cpu_ns_per_cycle=" + cpuNanosPerCycle + " zk_writes="
				+ (this.perKey ? affinityWrites : -1) + " zk_writes_window=" + affinityWindow[0]
				+ ((affinityWindow.length > 1) ? " " + affinityWindow[1] : "")
				+ " violations=" + this.violations.get() + " lost_updates=" + lost
				+ String.format(Locale.ROOT, " wait_p50_ms=%.3f wait_p99_ms=%.3f", waits.percentileMillis(50),
						waits.percentileMillis(99))
				+ " waits=" + waits.encode();
	}

	/**
	 * The affinity client's writes between two instants of {@link System#nanoTime()}, waited for,
	 * then the requests of that time by operation ({@code zk_window_ops=create:N,delete:N,...}) and
	 * the requests on keys of another JVM begun in it ({@code foreign_window=N}).
	 */
	private String writesBetween(long from, long to) {
		sleepUntil(from);
		long before = this.affinityRequests.writes();
		Map<String, Long> opsBefore = this.affinityRequests.snapshot();
		long foreignBefore = this.affinityForeign.sum();
		sleepUntil(to);
		long writes = this.affinityRequests.writes() - before;
		StringJoiner ops = new StringJoiner(",");
		this.affinityRequests.snapshot()
			.forEach((operation, count) -> ops.add(operation + ":" + (count - opsBefore.getOrDefault(operation, 0L))));
		return writes + " zk_window_ops=" + ops + " foreign_window=" + (this.affinityForeign.sum() - foreignBefore);
	}

	private static void sleepUntil(long nanoTime) {
		long left;
		while ((left = nanoTime - System.nanoTime()) > 0) {
			java.util.concurrent.locks.LockSupport.parkNanos(left);
		}
	}

	private static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
			.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	/**
	 * The critical section: notes when it was entered, checks that no other thread of this JVM is
	 * in it, and counts under the lock.
	 */
	private Runnable criticalSection(long[] granted) {
		return () -> {
			granted[0] = System.nanoTime();
			if (this.perKey) {
				// The affinity cycle checks its key's section itself.
				return;
			}
			if (!this.inSection.compareAndSet(false, true)) {
				this.violations.incrementAndGet();
			}
			this.guarded++;
			this.inSection.set(false);
		};
	}

	/**
	 * One thread's cycles until the window ends.
	 * @param turn in the ping-pong scenario, whose turn it is: each cycle waits for this JVM's turn
	 * before it asks, and gives the turn to the other JVM after its release; otherwise {@code null}
	 */
	private ThreadResult loop(Cycle cycle, @Nullable PingPongTurn turn, long windowStart, long windowEnd)
			throws Exception {
		ThreadResult result = new ThreadResult();
		long[] granted = new long[1];
		boolean[] local = new boolean[1];
		Runnable criticalSection = criticalSection(granted);
		long asked;
		while ((turn == null || turn.await(windowEnd)) && (asked = System.nanoTime()) - windowEnd < 0) {
			local[0] = false;
			cycle.run(criticalSection, local);
			if (turn != null) {
				turn.pass();
			}
			result.record(asked, granted[0], local[0], windowStart, windowEnd);
		}
		return result;
	}

	/** The turn of the ping-pong scenario's two JVMs, in a file named after the run's base path. */
	private PingPongTurn pingPongTurn() throws IOException {
		PingPongTurn turn = this.pingPongTurn;
		if (turn == null) {
			turn = new PingPongTurn(pingPongTurnFile(), this.jvm);
			this.pingPongTurn = turn;
		}
		return turn;
	}

	private Path pingPongTurnFile() {
		return Path.of(System.getProperty("java.io.tmpdir"),
				"zk-lock" + this.basePath.replace('/', '-') + "-pingpong");
	}

	/**
	 * One asynchronous caller's next cycle: ask for the lock, run the critical section once granted,
	 * release, then go on from the completion (no thread waits between).
	 */
	private void next(AsyncCycle cycle, int caller, ThreadResult result, CompletableFuture<ThreadResult> done,
			long windowStart, long windowEnd) {
		long asked = System.nanoTime();
		if (asked - windowEnd >= 0) {
			done.complete(result);
			return;
		}
		long[] granted = new long[1];
		boolean[] local = new boolean[1];
		Runnable criticalSection = criticalSection(granted);
		CompletableFuture<?> stage;
		try {
			stage = cycle.run(caller, criticalSection, local);
		}
		catch (RuntimeException ex) {
			done.completeExceptionally(ex);
			return;
		}
		BiConsumer<Object, Throwable> then = (value, ex) -> {
			if (ex != null) {
				done.completeExceptionally(ex);
				return;
			}
			result.record(asked, granted[0], local[0], windowStart, windowEnd);
			next(cycle, caller, result, done, windowStart, windowEnd);
		};
		if (stage.isDone()) {
			// Completed at once: go on elsewhere rather than deeper in this stack.
			stage.whenCompleteAsync(then, this.threads);
		}
		else {
			stage.whenComplete(then);
		}
	}

	private AsyncCycle asyncCycle(String contender) {
		return switch (contender) {
			case "zk_lock_async" -> {
				AsyncLockTemplate async = this.handoff.async();
				LockRequest request = LockRequest.of("/hot-async").withWaitTime(WAIT_TIME);
				yield (caller, criticalSection, local) -> {
					CompletableFuture<LockResult<Object>> executed = async.execute(request, (handle) -> {
						criticalSection.run();
						return DONE;
					});
					// Started on this thread by execute; granted before the work ran and was released.
					return executed.thenCombine(this.handoffGrants.takeSubmitted(), (result, grant) -> {
						local[0] = grant.map(RegistryGrant::isLocalHandoff).orElse(false);
						return result;
					});
				};
			}
			case "redisson_async" -> {
				if (this.redisson == null) {
					throw new IllegalStateException("No Redis server given");
				}
				RLock lock = this.redisson.getLock(this.basePath.substring(1) + ":redisson-async:hot");
				yield (caller, criticalSection, local) -> {
					// Redisson's asynchronous locks name their owner: one id per caller, unique per JVM.
					long owner = this.jvm * 1_000_000L + caller;
					return lock.lockAsync(owner).toCompletableFuture().thenCompose((locked) -> {
						criticalSection.run();
						return lock.unlockAsync(owner).toCompletableFuture();
					});
				};
			}
			default -> throw new IllegalArgumentException("Unknown contender " + contender);
		};
	}

	private Cycle cycle(String contender) {
		return switch (contender) {
			case "zk_lock" -> templateCycle(this.handoff, this.handoffGrants);
			case "zk_lock_no_handoff" -> templateCycle(this.noHandoff, this.noHandoffGrants);
			case "zk_lock_kept" -> templateCycle(this.kept, this.keptGrants);
			// Two JVMs of one thread each on the key, kept locks off and on, taking turns (PingPongTurn).
			case "pingpong_zk_lock", "pingpong_zk_lock_kept" -> cycle(contender.substring("pingpong_".length()));
			case "affinity_zk_lock_kept" -> affinityCycle((key, section) -> this.affinity.execute(key,
					LockMode.EXCLUSIVE, WAIT_TIME, (handle) -> {
						section.run();
						return null;
					}));
			case "affinity_raw_mutex" -> affinityCycle((key, section) -> {
				InterProcessMutex mutex = new InterProcessMutex(this.affinityClient,
						this.basePath + "/affinity-raw" + key);
				mutex.acquire();
				try {
					section.run();
				}
				finally {
					mutex.release();
				}
			});
			case "raw_mutex" -> {
				InterProcessMutex mutex = new InterProcessMutex(this.client, this.basePath + "/raw/hot");
				yield (criticalSection, local) -> {
					mutex.acquire();
					try {
						criticalSection.run();
					}
					finally {
						mutex.release();
					}
				};
			}
			case "redisson" -> {
				if (this.redisson == null) {
					throw new IllegalStateException("No Redis server given");
				}
				RLock lock = this.redisson.getLock(this.basePath.substring(1) + ":redisson:hot");
				yield (criticalSection, local) -> {
					lock.lock();
					try {
						criticalSection.run();
					}
					finally {
						lock.unlock();
					}
				};
			}
			default -> throw new IllegalArgumentException("Unknown contender " + contender);
		};
	}

	/**
	 * A cycle of the affinity scenario: a key of this JVM's own (one of {@value #AFFINITY_KEYS},
	 * uniformly), or one request in {@value #AFFINITY_FOREIGN_ONE_IN} a key of another JVM's; under
	 * the lock, the key's section is checked and its counter counted.
	 */
	private Cycle affinityCycle(KeyedLock locked) {
		return (criticalSection, local) -> {
			java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
			int owner = this.jvm;
			if (random.nextInt(AFFINITY_FOREIGN_ONE_IN) == 0) {
				owner = 1 + (this.jvm - 1 + 1 + random.nextInt(HotKeyScenario.JVMS - 1)) % HotKeyScenario.JVMS;
				this.affinityForeign.increment();
			}
			int k = random.nextInt(AFFINITY_KEYS);
			AtomicBoolean inSection = this.affinityInSection[owner][k];
			int ownerOfKey = owner;
			locked.run("/" + owner + "/" + k, () -> {
				criticalSection.run();
				if (!inSection.compareAndSet(false, true)) {
					this.violations.incrementAndGet();
				}
				this.affinityGuarded[ownerOfKey][k]++;
				inSection.set(false);
			});
		};
	}

	private long affinityGuardedSum() {
		long sum = 0;
		for (long[] keys : this.affinityGuarded) {
			for (long count : keys) {
				sum += count;
			}
		}
		return sum;
	}

	/** Takes the lock of a key, runs the section, releases. */
	@FunctionalInterface
	private interface KeyedLock {

		void run(String key, Runnable section) throws Exception;

	}

	private static Cycle templateCycle(LockTemplate template, HandoffRecordingRegistry grants) {
		return (criticalSection, local) -> template.execute("/hot", LockMode.EXCLUSIVE, WAIT_TIME, (handle) -> {
			// Granted on this thread, just before.
			local[0] = grants.lastWasLocalHandoff();
			criticalSection.run();
			return null;
		});
	}

	private void close() {
		this.threads.shutdownNow();
		this.handoffRegistry.close();
		this.noHandoffRegistry.close();
		this.keptRegistry.close();
		this.affinityRegistry.close();
		this.affinityClient.close();
		try {
			Files.deleteIfExists(pingPongTurnFile());
		}
		catch (IOException ex) {
			System.err.println("Could not delete " + pingPongTurnFile() + ": " + ex);
		}
		if (this.redisson != null) {
			this.redisson.shutdown();
		}
		this.client.close();
	}

	/** The {@code name=value} fields of a {@code RESULT} line. */
	static Map<String, String> fields(String line) {
		Map<String, String> fields = new LinkedHashMap<>();
		for (String field : line.split(" ")) {
			int equals = field.indexOf('=');
			if (equals > 0) {
				fields.put(field.substring(0, equals), field.substring(equals + 1));
			}
		}
		return fields;
	}

	/** One lock cycle around the critical section; sets {@code local[0]} for a local hand-off. */
	@FunctionalInterface
	private interface Cycle {

		void run(Runnable criticalSection, boolean[] local) throws Exception;

	}

	/** One asynchronous lock, critical section and release; the stage completes after the release. */
	private interface AsyncCycle {

		CompletableFuture<?> run(int caller, Runnable criticalSection, boolean[] local);

	}

	/** What one thread counted. */
	private static final class ThreadResult {

		long cycles;

		long grants;

		long localHandoffs;

		final WaitHistogram waits = new WaitHistogram();

		/** One cycle, asked at {@code asked} and granted at {@code granted}: counted if granted in the window. */
		void record(long asked, long granted, boolean local, long windowStart, long windowEnd) {
			this.cycles++;
			if (granted - windowStart >= 0 && granted - windowEnd < 0) {
				this.grants++;
				this.waits.record((granted - asked) / 1000);
				if (local) {
					this.localHandoffs++;
				}
			}
		}

	}

}
