package io.github.zklock.benchmarks.run;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import io.github.zklock.benchmarks.ThreadPaths;

/**
 * One fork of the interleaved runs, in a JVM of its own (started by {@link InterleavedRuns}): sets up
 * every benchmark's state on one in-process server, warms every benchmark up, then measures group by
 * group, so that the benchmarks compared by a ratio share the JVM, the server and the moment:
 * <ul>
 * <li>single-threaded groups alternate cycle by cycle: a round runs {@code cycles} lock cycles of each
 * member, one cycle of each member in a fresh random order at a time, and times each cycle; the
 * member's throughput in the round is its cycles divided by the time spent in them. Load that comes
 * and goes (the machine is shared) hits every member alike. The calling thread's CPU time and
 * allocated bytes are measured around each cycle too: what each library costs on the caller's
 * side, which the load of the machine hardly changes;</li>
 * <li>eight-thread groups cannot alternate per cycle: a round runs one batch of each member (all
 * threads lock for a fixed time), in a fresh random order. The CPU time of the whole process (the
 * server runs in it) is measured around each batch.</li>
 * </ul>
 * Prints one {@code SAMPLE} line per member and round.
 * <p>
 * Arguments: fork number, rounds, cycles per member and round, contended rounds, batch milliseconds,
 * warm-up milliseconds per member, and a regular expression selecting members by name.
 */
public final class InterleavedFork {

	private static final int MAX_THREADS = 8;

	private static final com.sun.management.OperatingSystemMXBean PROCESS =
			(com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

	private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	private final Fixtures fixtures;

	private final ExecutorService workers = Executors.newFixedThreadPool(MAX_THREADS, (task) -> {
		Thread thread = new Thread(task, "bench-worker");
		thread.setDaemon(true);
		return thread;
	});

	private final ThreadLocal<ThreadPaths> threadPaths;

	private InterleavedFork(Fixtures fixtures) {
		this.fixtures = fixtures;
		this.threadPaths = ThreadLocal.withInitial(() -> {
			ThreadPaths paths = new ThreadPaths();
			paths.setUp(this.fixtures.zooKeeper);
			return paths;
		});
	}

	/**
	 * Run the fork.
	 * @param args fork, rounds, cycles per round, contended rounds, batch ms, warm-up ms, member
	 * pattern
	 * @throws Exception if a benchmark fails
	 */
	public static void main(String[] args) throws Exception {
		int fork = Integer.parseInt(args[0]);
		int rounds = Integer.parseInt(args[1]);
		int cycles = Integer.parseInt(args[2]);
		int contendedRounds = Integer.parseInt(args[3]);
		long batchMillis = Long.parseLong(args[4]);
		long warmupMillis = Long.parseLong(args[5]);
		Pattern include = Pattern.compile(args[6]);
		Random random = new Random(fork);
		try (Fixtures fixtures = new Fixtures()) {
			InterleavedFork runner = new InterleavedFork(fixtures);
			Map<String, List<Catalogue.Member>> groups = new LinkedHashMap<>();
			for (Catalogue.Member member : Catalogue.members(fixtures)) {
				if (include.matcher(member.name()).find()) {
					groups.computeIfAbsent(member.group(), (key) -> new ArrayList<>()).add(member);
				}
			}
			// Warm every code path before the first measurement: the members share most of it.
			for (List<Catalogue.Member> members : groups.values()) {
				for (Catalogue.Member member : members) {
					runner.batch(member, warmupMillis);
				}
			}
			System.out.printf("PROGRESS fork %d: warmed up%n", fork);
			for (Map.Entry<String, List<Catalogue.Member>> group : groups.entrySet()) {
				List<Catalogue.Member> members = group.getValue();
				boolean alternate = members.get(0).threads() == 1;
				int groupRounds = alternate ? rounds : contendedRounds;
				for (int round = 1; round <= groupRounds; round++) {
					List<Batch> batches = alternate ? runner.alternate(members, cycles, random)
							: runner.batches(members, batchMillis, random);
					for (int i = 0; i < members.size(); i++) {
						System.out.println(batches.get(i).line(fork, round, members.get(i)));
					}
				}
				System.out.printf("PROGRESS fork %d: group '%s' done, %d rounds%n", fork, group.getKey(), groupRounds);
			}
			runner.workers.shutdownNow();
		}
	}

	/** One round of a single-threaded group: per member, its cycles and the time spent in them. */
	private List<Batch> alternate(List<Catalogue.Member> members, int cycles, Random random) throws Exception {
		ThreadPaths paths = this.threadPaths.get();
		long thread = Thread.currentThread().getId();
		long[] nanos = new long[members.size()];
		long[] cpuNanos = new long[members.size()];
		long[] allocated = new long[members.size()];
		List<Integer> order = new ArrayList<>();
		for (int i = 0; i < members.size(); i++) {
			order.add(i);
		}
		for (int cycle = 0; cycle < cycles; cycle++) {
			Collections.shuffle(order, random);
			for (int index : order) {
				long cpu = THREADS.getCurrentThreadCpuTime();
				long bytes = THREADS.getThreadAllocatedBytes(thread);
				long start = System.nanoTime();
				members.get(index).operation().run(paths);
				nanos[index] += System.nanoTime() - start;
				cpuNanos[index] += THREADS.getCurrentThreadCpuTime() - cpu;
				allocated[index] += THREADS.getThreadAllocatedBytes(thread) - bytes;
			}
		}
		List<Batch> batches = new ArrayList<>();
		for (int i = 0; i < members.size(); i++) {
			batches.add(new Batch(nanos[i], new long[] { cycles }, cpuNanos[i], allocated[i]));
		}
		return batches;
	}

	/** One round of a multi-threaded group: one batch per member, in random order. */
	private List<Batch> batches(List<Catalogue.Member> members, long millis, Random random) throws Exception {
		List<Integer> order = new ArrayList<>();
		for (int i = 0; i < members.size(); i++) {
			order.add(i);
		}
		Collections.shuffle(order, random);
		Batch[] batches = new Batch[members.size()];
		for (int index : order) {
			batches[index] = batch(members.get(index), millis);
		}
		return List.of(batches);
	}

	private Batch batch(Catalogue.Member member, long millis) throws Exception {
		return (member.threads() == 1) ? singleThreaded(member, millis) : multiThreaded(member, millis);
	}

	private Batch singleThreaded(Catalogue.Member member, long millis) throws Exception {
		ThreadPaths paths = this.threadPaths.get();
		long start = System.nanoTime();
		long deadline = start + TimeUnit.MILLISECONDS.toNanos(millis);
		long operations = 0;
		do {
			member.operation().run(paths);
			operations++;
		}
		while (System.nanoTime() - deadline < 0);
		return new Batch(System.nanoTime() - start, new long[] { operations }, -1, -1);
	}

	private Batch multiThreaded(Catalogue.Member member, long millis) throws Exception {
		int threads = member.threads();
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch go = new CountDownLatch(1);
		long[] startHolder = new long[1];
		List<Future<long[]>> results = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			results.add(this.workers.submit(() -> {
				ThreadPaths paths = this.threadPaths.get();
				ready.countDown();
				go.await();
				long deadline = startHolder[0] + TimeUnit.MILLISECONDS.toNanos(millis);
				long operations = 0;
				do {
					member.operation().run(paths);
					operations++;
				}
				while (System.nanoTime() - deadline < 0);
				return new long[] { operations, System.nanoTime() };
			}));
		}
		// Each worker waits for all the others, so the eight tasks run on the eight pool threads.
		if (!ready.await(60, TimeUnit.SECONDS)) {
			throw new IllegalStateException("Workers did not start");
		}
		long cpu = PROCESS.getProcessCpuTime();
		startHolder[0] = System.nanoTime();
		go.countDown();
		long[] counts = new long[threads];
		long end = 0;
		for (int t = 0; t < threads; t++) {
			long[] result = results.get(t).get(millis + 120_000, TimeUnit.MILLISECONDS);
			counts[t] = result[0];
			end = Math.max(end, result[1]);
		}
		// Process CPU: the server runs in this JVM, so this is client and server work per grant.
		return new Batch(end - startHolder[0], counts, PROCESS.getProcessCpuTime() - cpu, -1);
	}

	/**
	 * One batch: the time measured (until every thread finished its last cycle, or the sum of the
	 * timed cycles) and each thread's cycles.
	 */
	private record Batch(long nanos, long[] operationsPerThread, long cpuNanos, long allocatedBytes) {

		String line(int fork, int round, Catalogue.Member member) {
			long total = 0;
			StringJoiner perThread = new StringJoiner(",");
			for (long operations : this.operationsPerThread) {
				total += operations;
				perThread.add(Long.toString(operations));
			}
			return "SAMPLE fork=" + fork + " round=" + round + " member=" + member.name() + " threads="
					+ member.threads() + " ops=" + total + " nanos=" + this.nanos + " per_thread=" + perThread
					+ " cpu_nanos=" + this.cpuNanos + " allocated_bytes=" + this.allocatedBytes;
		}

	}

}
