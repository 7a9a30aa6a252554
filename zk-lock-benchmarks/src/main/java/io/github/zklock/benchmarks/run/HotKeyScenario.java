package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;

import io.github.zklock.benchmarks.ZooKeeperServers;

/**
 * Scenario 5, host side: a hot key. {@value #JVMS} applications ({@link HotKeyWorker} JVMs, started
 * together) of {@value #THREADS} threads each lock and unlock one key for a fixed time, contender
 * after contender (zk-lock with and without local hand-off, raw Curator with one
 * {@code InterProcessMutex} per thread, Redisson's {@code RLock} against a local
 * {@code redis-server}), and asynchronously, {@value #ASYNC_CALLERS} callers per JVM each with one
 * request in flight (zk-lock's {@code async()} against Redisson's {@code RLockAsync}); in each round
 * the contenders run in a fresh random order, and a ratio is
 * the median of its per-round ratios. Then two applications of one thread each take one key in
 * strict turns, each asking once the other has released, kept locks off and on
 * ({@link #PING_PONG}, {@link PingPongTurn}). Then one application with one thread locks one key
 * uncontended, the contenders alternating in short batches, round after round.
 * <p>
 * ZooKeeper: the runner's in-process server (as the request and memory scenarios), or the external
 * one of {@code --connect-string}. Redis: a {@link RedisServer} the runner starts; without
 * {@code redis-server} only the Redisson lines are left out, with a message saying so.
 */
final class HotKeyScenario {

	static final int JVMS = 3;

	static final int THREADS = 8;

	/** Asynchronous callers per JVM of the asynchronous contenders, each with one request in flight. */
	static final int ASYNC_CALLERS = 500;

	private static final List<String> UNCONTENDED = List.of("zk_lock", "zk_lock_kept", "raw_mutex", "redisson");

	/**
	 * Two JVMs of one thread each, both asking for the key again as soon as they release it, so
	 * that it goes from one to the other: kept locks off, then on (each gives the znode up for the
	 * other's request, a kept lock's worst case).
	 */
	static final List<String> PING_PONG = List.of("pingpong_zk_lock", "pingpong_zk_lock_kept");

	private final BenchMain.Settings settings;

	private final List<Worker> workers = new ArrayList<>();

	/** Per contender, its runs (one per round) with three JVMs. */
	private final Map<String, List<Run>> contended = new LinkedHashMap<>();

	/** Per contender, its single-thread batches (one per round). */
	private final Map<String, List<Run>> uncontended = new LinkedHashMap<>();

	private String redisVersion = "";

	private String redisNote = "";

	private HotKeyScenario(BenchMain.Settings settings) {
		this.settings = settings;
	}

	/**
	 * Run the scenario.
	 * @param settings the runner's settings
	 * @return its results
	 * @throws Exception if a JVM fails or mutual exclusion was violated
	 */
	static Result run(BenchMain.Settings settings) throws Exception {
		return new HotKeyScenario(settings).execute();
	}

	private Result execute() throws Exception {
		System.out.printf("%n==== Hot key: %d JVMs x %d threads on one key (load average %s) ====%n", JVMS, THREADS,
				BenchMain.loadAverage());
		long started = System.nanoTime();
		RedisServer redis = startRedis();
		TestingServer server = null;
		try {
			String connectString;
			if (this.settings.connectString.isEmpty()) {
				server = ZooKeeperServers.startInProcess();
				connectString = server.getConnectString();
			}
			else {
				connectString = this.settings.connectString;
			}
			String basePath = "/" + ZooKeeperServers.runId() + "-hotkey";
			for (int jvm = 1; jvm <= JVMS; jvm++) {
				this.workers.add(Worker.start(this.settings, jvm, connectString, basePath,
						(redis != null) ? redis.address() : "-"));
			}
			for (Worker worker : this.workers) {
				worker.expect("READY", 120);
			}
			List<String> contenders = new ArrayList<>(HotKeyWorker.CONTENDERS);
			if (redis == null) {
				contenders.remove("redisson");
				contenders.remove("redisson_async");
			}
			contenders.removeIf(this::notSelected);
			measureContended(contenders);
			measurePingPong();
			List<String> single = new ArrayList<>(UNCONTENDED);
			if (redis == null) {
				single.remove("redisson");
			}
			single.removeIf(this::notSelected);
			measureUncontended(single);
			for (Worker worker : this.workers) {
				worker.quit();
			}
			System.out.printf("PROGRESS hot key: done in %d s (load average %s)%n",
					TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), BenchMain.loadAverage());
		}
		finally {
			for (Worker worker : this.workers) {
				worker.destroy();
			}
			if (server != null) {
				server.close();
			}
			if (redis != null) {
				redis.close();
			}
		}
		return new Result(this.settings.describeHotKey() + "; " + describeRedis(), this.contended, this.uncontended,
				this.redisNote);
	}

	private @Nullable RedisServer startRedis() {
		if (this.settings.skip.contains("redisson")) {
			this.redisNote = "Redisson left out (--skip redisson).";
			return null;
		}
		Path executable = RedisServer.find(this.settings.redisServer).orElse(null);
		if (executable == null) {
			this.redisNote = "redis-server not found (" + ((this.settings.redisServer != null)
					? this.settings.redisServer + " is not executable" : "not on the PATH")
					+ "): the Redisson lines are skipped. Install the Debian package redis-server, or give "
					+ "--redis-server PATH.";
			System.out.println(this.redisNote);
			return null;
		}
		try {
			RedisServer redis = RedisServer.start(executable, this.settings.workDir);
			this.redisVersion = redis.version();
			System.out.printf("redis-server %s (%s) on %s, no persistence%n", redis.version(), executable,
					redis.address());
			return redis;
		}
		catch (IOException ex) {
			this.redisNote = "redis-server could not be started (" + ex.getMessage()
					+ "): the Redisson lines are skipped.";
			System.out.println(this.redisNote);
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private String describeRedis() {
		if (this.redisVersion.isEmpty()) {
			return "Redisson not run";
		}
		return "Redis: redis-server " + this.redisVersion
				+ " on 127.0.0.1, started by the runner (--save '' --appendonly no), Redisson "
				+ BenchMain.mavenVersion("org.redisson", "redisson") + " (one client per JVM, default settings)";
	}

	private void measureContended(List<String> contenders) throws Exception {
		// Every contender's code path, ZooKeeper's queue and Redis's channel are warm before the first
		// measured run.
		for (String contender : contenders) {
			runAll(contender, threads(contender), contender.startsWith("affinity_")
					? this.settings.hotKeyAffinityWarmupMillis() : this.settings.hotKeyWarmupMillis(), 0);
		}
		System.out.printf("PROGRESS hot key: warmed up%n");
		Random random = new Random(13);
		for (int round = 1; round <= this.settings.hotKeyRounds(); round++) {
			List<String> order = new ArrayList<>(contenders);
			Collections.shuffle(order, random);
			for (String contender : order) {
				Run run = runAll(contender, threads(contender), this.settings.hotKeyRunWarmupMillis(),
						this.settings.hotKeyMeasureMillis());
				this.contended.computeIfAbsent(contender, (name) -> new ArrayList<>()).add(run);
				System.out.printf(Locale.ROOT,
						"PROGRESS hot key round %d: %s %.0f grants/s, JVM shares %s, wait p50 %.2f ms, p99 %.2f ms%s%n",
						round, contender, run.grantsPerSecond(), shares(List.of(run)), run.waits.percentileMillis(50),
						run.waits.percentileMillis(99), contender.equals("zk_lock") ? ", grants per znode by JVM "
								+ run.grantsPerZnodeByJvm() : "");
			}
		}
	}

	/** Whether {@code --hotkey-contenders} leaves this contender out. */
	private boolean notSelected(String contender) {
		return !this.settings.hotKeyContenders.isEmpty() && !this.settings.hotKeyContenders.contains(contender);
	}

	private void measurePingPong() throws Exception {
		List<String> pingPong = new ArrayList<>(PING_PONG);
		pingPong.removeIf(this::notSelected);
		if (pingPong.isEmpty()) {
			return;
		}
		List<Worker> two = this.workers.subList(0, 2);
		for (String contender : pingPong) {
			runOn(two, contender, 1, this.settings.hotKeyWarmupMillis(), 0);
		}
		Random random = new Random(19);
		for (int round = 1; round <= this.settings.hotKeyRounds(); round++) {
			List<String> order = new ArrayList<>(pingPong);
			Collections.shuffle(order, random);
			for (String contender : order) {
				Run run = runOn(two, contender, 1, this.settings.hotKeyRunWarmupMillis(),
						this.settings.hotKeyMeasureMillis());
				this.contended.computeIfAbsent(contender, (name) -> new ArrayList<>()).add(run);
				System.out.printf(Locale.ROOT, "PROGRESS hot key round %d: %s %.0f grants/s, wait p50 %.2f ms, p99 %.2f ms%n",
						round, contender, run.grantsPerSecond(), run.waits.percentileMillis(50),
						run.waits.percentileMillis(99));
			}
		}
	}

	private void measureUncontended(List<String> contenders) throws Exception {
		Worker worker = this.workers.get(0);
		for (String contender : contenders) {
			worker.send(command(contender, 1, this.settings.warmupMillis(), 0));
			worker.result();
		}
		Random random = new Random(17);
		for (int round = 1; round <= this.settings.uncontendedRounds(); round++) {
			List<String> order = new ArrayList<>(contenders);
			Collections.shuffle(order, random);
			for (String contender : order) {
				worker.send(command(contender, 1, 0, this.settings.uncontendedBatchMillis()));
				Run run = new Run(List.of(worker.result()));
				this.uncontended.computeIfAbsent(contender, (name) -> new ArrayList<>()).add(run);
			}
		}
		System.out.printf("PROGRESS hot key: uncontended done, %d rounds%n", this.settings.uncontendedRounds());
	}

	/** Threads per JVM, or for the asynchronous contenders callers with one request in flight each. */
	static int threads(String contender) {
		return HotKeyWorker.ASYNC_CONTENDERS.contains(contender) ? ASYNC_CALLERS : THREADS;
	}

	private Run runAll(String contender, int threads, long warmupMillis, long measureMillis) throws Exception {
		return runOn(this.workers, contender, threads, warmupMillis, measureMillis);
	}

	private static Run runOn(List<Worker> workers, String contender, int threads, long warmupMillis,
			long measureMillis) throws Exception {
		// The JVMs wait for this line: they start within a millisecond or so of each other.
		String command = command(contender, threads, warmupMillis, measureMillis);
		for (Worker worker : workers) {
			worker.send(command);
		}
		List<Map<String, String>> results = new ArrayList<>();
		for (Worker worker : workers) {
			results.add(worker.result());
		}
		return new Run(results);
	}

	private static String command(String contender, int threads, long warmupMillis, long measureMillis) {
		return "RUN " + contender + " " + threads + " " + warmupMillis + " " + measureMillis;
	}

	static String shares(List<Run> runs) {
		long[] perJvm = perJvm(runs);
		long total = 0;
		for (long grants : perJvm) {
			total += grants;
		}
		StringJoiner joiner = new StringJoiner(",");
		for (long grants : perJvm) {
			joiner.add(String.format(Locale.ROOT, "%.2f", (total > 0) ? (double) grants / total : Double.NaN));
		}
		return joiner.toString();
	}

	static long[] perJvm(List<Run> runs) {
		long[] perJvm = new long[runs.get(0).results.size()];
		for (Run run : runs) {
			for (int i = 0; i < perJvm.length; i++) {
				perJvm[i] += Long.parseLong(run.results.get(i).get("grants"));
			}
		}
		return perJvm;
	}

	/** One run of a contender: the RESULT fields of each JVM that took part. */
	static final class Run {

		final List<Map<String, String>> results;

		final WaitHistogram waits = new WaitHistogram();

		Run(List<Map<String, String>> results) {
			this.results = results;
			for (Map<String, String> result : results) {
				this.waits.add(WaitHistogram.decode(result.get("waits")));
				if (!result.get("violations").equals("0") || !result.get("lost_updates").equals("0")) {
					throw new IllegalStateException("MUTUAL EXCLUSION VIOLATED in the hot-key scenario: " + result);
				}
			}
		}

		long grants() {
			return this.results.stream().mapToLong((result) -> Long.parseLong(result.get("grants"))).sum();
		}

		/** Per JVM, grants divided by the grants made through ZooKeeper: a chain's mean length. */
		String grantsPerZnodeByJvm() {
			StringJoiner joiner = new StringJoiner(",");
			for (Map<String, String> result : this.results) {
				long grants = Long.parseLong(result.get("grants"));
				long throughZooKeeper = grants - Long.parseLong(result.get("local_handoffs"));
				joiner.add(String.format(Locale.ROOT, "%.1f", (double) grants / Math.max(1, throughZooKeeper)));
			}
			return joiner.toString();
		}

		long localHandoffs() {
			return this.results.stream().mapToLong((result) -> Long.parseLong(result.get("local_handoffs"))).sum();
		}

		double grantsPerSecond() {
			return grants() / (Long.parseLong(this.results.get(0).get("window_nanos")) / 1e9);
		}

		/** Fewest grants of one thread divided by the most, over all threads of all JVMs. */
		double threadFairness() {
			long min = Long.MAX_VALUE;
			long max = 0;
			for (Map<String, String> result : this.results) {
				for (String count : result.get("per_thread").split(",")) {
					long grants = Long.parseLong(count);
					min = Math.min(min, grants);
					max = Math.max(max, grants);
				}
			}
			return (max > 0) ? (double) min / max : Double.NaN;
		}

	}

	/** A child JVM and its output, line by line. */
	private static final class Worker {

		private final int jvm;

		private final Process process;

		private final PrintWriter input;

		private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

		private final long runTimeoutSeconds;

		private Worker(int jvm, Process process, long runTimeoutSeconds) {
			this.jvm = jvm;
			this.process = process;
			this.runTimeoutSeconds = runTimeoutSeconds;
			this.input = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
			Thread reader = new Thread(this::read, "hotkey-jvm-" + jvm);
			reader.setDaemon(true);
			reader.start();
		}

		static Worker start(BenchMain.Settings settings, int jvm, String connectString, String basePath,
				String redisAddress) throws IOException {
			List<String> command = new ArrayList<>();
			command.add(ProcessHandle.current().info().command().orElse("java"));
			command.addAll(settings.forkJvmArgs());
			if (settings.hotKeyJfr) {
				command.add("-XX:StartFlightRecording:settings=profile,filename="
						+ settings.workDir.resolve("hotkey-jvm-" + jvm + ".jfr"));
			}
			command.addAll(List.of("-cp", System.getProperty("java.class.path"), HotKeyWorker.class.getName(),
					Integer.toString(jvm), connectString, basePath, redisAddress));
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			long timeout = (settings.hotKeyAffinityWarmupMillis() + settings.hotKeyRunWarmupMillis()
					+ settings.hotKeyMeasureMillis()) / 1000 + 180;
			return new Worker(jvm, process, timeout);
		}

		private void read() {
			try (BufferedReader output = new BufferedReader(
					new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
				String line;
				while ((line = output.readLine()) != null) {
					if (line.equals("READY") || line.equals("DONE") || line.startsWith("RESULT ")) {
						this.lines.add(line);
					}
					else {
						System.out.println("[hotkey jvm " + this.jvm + "] " + line);
					}
				}
			}
			catch (IOException ex) {
				// the process is gone: expect() reports it
			}
		}

		void send(String command) {
			this.input.println(command);
		}

		String expect(String prefix, long timeoutSeconds) throws InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
			while (true) {
				String line = this.lines.poll(200, TimeUnit.MILLISECONDS);
				if (line != null) {
					if (!line.startsWith(prefix)) {
						throw new IllegalStateException("Hot-key JVM " + this.jvm + ": expected " + prefix + ", got "
								+ line);
					}
					return line;
				}
				if (!this.process.isAlive() && this.lines.isEmpty()) {
					throw new IllegalStateException("Hot-key JVM " + this.jvm + " exited with code "
							+ this.process.exitValue() + " (its output is above)");
				}
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Hot-key JVM " + this.jvm + ": no " + prefix + " within "
							+ timeoutSeconds + " s");
				}
			}
		}

		Map<String, String> result() throws InterruptedException {
			String line = expect("RESULT ", this.runTimeoutSeconds);
			expect("DONE", 10);
			return HotKeyWorker.fields(line.substring("RESULT ".length()));
		}

		void quit() throws InterruptedException {
			send("QUIT");
			this.input.close();
			if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Hot-key JVM " + this.jvm + " did not exit");
			}
		}

		void destroy() throws InterruptedException {
			if (this.process.isAlive()) {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}

	}

	/**
	 * What the scenario measured.
	 * @param method how it was run, for the report
	 * @param contended per contender, its three-JVM runs
	 * @param uncontended per contender, its single-thread batches
	 * @param note why Redisson is missing, or empty
	 */
	record Result(String method, Map<String, List<Run>> contended, Map<String, List<Run>> uncontended, String note) {

		/** A ratio of the scenario: ours ÷ baseline in grants per second, median of the rounds. */
		record Ratio(String name, double value, double min, double max, int rounds) {
		}

		List<Ratio> ratios() {
			List<Ratio> ratios = new ArrayList<>();
			addRatio(ratios, "hotkey_3jvm_vs_raw_mutex", this.contended, "zk_lock", "raw_mutex");
			addRatio(ratios, "hotkey_3jvm_vs_redisson", this.contended, "zk_lock", "redisson");
			addRatio(ratios, "hotkey_3jvm_vs_no_handoff", this.contended, "zk_lock", "zk_lock_no_handoff");
			addRatio(ratios, "uncontended_vs_redisson", this.uncontended, "zk_lock", "redisson");
			addRatio(ratios, "uncontended_kept_vs_redisson", this.uncontended, "zk_lock_kept", "redisson");
			addRatio(ratios, "affinity_kept_vs_raw_mutex", this.contended, "affinity_zk_lock_kept", "affinity_raw_mutex");
			addRatio(ratios, "pingpong_kept_vs_off", this.contended, "pingpong_zk_lock_kept", "pingpong_zk_lock");
			addRatio(ratios, "hotkey_async_3jvm_vs_redisson_async", this.contended, "zk_lock_async", "redisson_async");
			return ratios;
		}

		private static void addRatio(List<Ratio> ratios, String name, Map<String, List<Run>> runs, String ours,
				String baseline) {
			List<Run> oursRuns = runs.get(ours);
			List<Run> baselineRuns = runs.get(baseline);
			if (oursRuns == null || baselineRuns == null) {
				return;
			}
			List<Double> perRound = new ArrayList<>();
			for (int i = 0; i < Math.min(oursRuns.size(), baselineRuns.size()); i++) {
				perRound.add(oursRuns.get(i).grantsPerSecond() / baselineRuns.get(i).grantsPerSecond());
			}
			ratios.add(new Ratio(name, Stats.median(perRound), Stats.min(perRound), Stats.max(perRound),
					perRound.size()));
		}

		/** One {@code HOTKEY} line per contender, three JVMs first, then uncontended. */
		List<String> lines() {
			List<String> lines = new ArrayList<>();
			this.contended.forEach((contender, runs) -> lines.add(line(contender, runs, runs.get(0).results.size(),
					Integer.parseInt(runs.get(0).results.get(0).get("threads")))));
			this.uncontended.forEach((contender, runs) -> lines.add(line(contender, runs, 1, 1)));
			return lines;
		}

		private static String line(String contender, List<Run> runs, int jvms, int threads) {
			Aggregate all = new Aggregate(runs);
			StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "HOTKEY contender=%s jvms=%d threads=%d "
					+ "grants_per_s=%.0f", contender, jvms, threads, all.grantsPerSecond));
			if (jvms > 1) {
				line.append(String.format(Locale.ROOT, " jvm_shares=%s min_max_share=%.2f", shares(runs),
						all.minMaxShare));
			}
			line.append(String.format(Locale.ROOT, " wait_p50_ms=%.3f wait_p99_ms=%.3f", all.waits.percentileMillis(50),
					all.waits.percentileMillis(99)));
			if (jvms > 1) {
				line.append(String.format(Locale.ROOT, " thread_min_max=%.2f", all.threadFairness));
				if (contender.equals("zk_lock")) {
					line.append(String.format(Locale.ROOT, " local_handoff_share=%.3f grants_per_znode=%.1f",
							all.localHandoffShare, 1 / (1 - all.localHandoffShare)));
				}
			}
			if (contender.startsWith("affinity_")) {
				// ZooKeeper writes per grant, counted at the workers' clients: in the measuring window, and
				// over the whole run (the warm-up creates the keys' znodes, some again after another
				// contender's run let them be given up as idle).
				long windowWrites = 0;
				long windowGrants = 0;
				long writes = 0;
				long cycles = 0;
				long foreign = 0;
				Map<String, Long> ops = new java.util.TreeMap<>();
				for (Run run : runs) {
					for (Map<String, String> result : run.results) {
						windowWrites += Long.parseLong(result.get("zk_writes_window"));
						windowGrants += Long.parseLong(result.get("grants"));
						writes += Long.parseLong(result.get("zk_writes"));
						cycles += Long.parseLong(result.get("cycles"));
						foreign += Long.parseLong(result.getOrDefault("foreign_window", "0"));
						for (String op : result.getOrDefault("zk_window_ops", "").split(",")) {
							if (op.contains(":")) {
								ops.merge(op.substring(0, op.indexOf(':')), Long.parseLong(op.substring(op.indexOf(':') + 1)),
										Long::sum);
							}
						}
					}
				}
				// The measuring window's requests by operation, per foreign request (one in 100 grants).
				StringBuilder perForeign = new StringBuilder();
				long foreignRequests = Math.max(1, foreign);
				ops.forEach((op, count) -> perForeign.append(perForeign.isEmpty() ? "" : ",")
					.append(String.format(Locale.ROOT, "%s:%.2f", op, (double) count / foreignRequests)));
				line.append(String.format(Locale.ROOT,
						" writes_per_grant=%.3f writes_per_grant_with_warmup=%.3f foreign_per_grant=%.4f requests_per_foreign=%s",
						(double) windowWrites / Math.max(1, windowGrants), (double) writes / Math.max(1, cycles),
						(double) foreign / Math.max(1, windowGrants), perForeign));
			}
			if (jvms == 1) {
				// The worker process's CPU time per grant (median of the rounds): a kept grant's is local work.
				line.append(String.format(Locale.ROOT, " cpu_us_per_grant=%.2f", Stats.median(runs.stream()
					.map((run) -> run.results.get(0).getOrDefault("cpu_ns_per_cycle", "0"))
					.map((nanos) -> Long.parseLong(nanos) / 1000.0)
					.toList())));
			}
			line.append(" rounds=").append(runs.size());
			return line.toString();
		}

		List<String> ratioLines() {
			return ratios().stream()
				.map((ratio) -> String.format(Locale.ROOT, "RATIO %s=%.2f", ratio.name(), ratio.value()))
				.toList();
		}

		String markdown() {
			StringBuilder out = new StringBuilder();
			out.append(this.method).append("\n\n");
			if (!this.note.isEmpty()) {
				out.append(this.note).append("\n\n");
			}
			out.append("| contender | JVMs × threads | grants/s (median of rounds) | per-JVM share | min/max share "
					+ "| threads fewest/most | wait p50 ms | wait p90 ms | wait p99 ms | wait p99.9 ms "
					+ "| local hand-offs | rounds |\n");
			out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
			this.contended.forEach((contender, runs) -> row(out, contender, runs,
					runs.get(0).results.size() + " × " + runs.get(0).results.get(0).get("threads"), true));
			this.uncontended.forEach((contender, runs) -> row(out, contender, runs, "1 × 1", false));
			out.append("\n| ratio (grants/s, ours ÷ baseline) | value | per-round min–max | rounds |\n");
			out.append("|---|---:|---:|---:|\n");
			for (Ratio ratio : ratios()) {
				out.append(String.format(Locale.ROOT, "| `%s` | %.2f | %.2f–%.2f | %d |%n", ratio.name(),
						ratio.value(), ratio.min(), ratio.max(), ratio.rounds()));
			}
			return out.toString();
		}

		private static void row(StringBuilder out, String contender, List<Run> runs, String shape, boolean contended) {
			Aggregate all = new Aggregate(runs);
			out.append(String.format(Locale.ROOT,
					"| `%s` | %s | %.0f | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %d |%n", contender, shape,
					all.grantsPerSecond, contended ? shares(runs) : "–",
					contended ? String.format(Locale.ROOT, "%.2f", all.minMaxShare) : "–",
					contended ? String.format(Locale.ROOT, "%.2f", all.threadFairness) : "–",
					all.waits.percentileMillis(50), all.waits.percentileMillis(90), all.waits.percentileMillis(99),
					all.waits.percentileMillis(99.9),
					contender.startsWith("zk_lock") ? String.format(Locale.ROOT, "%.1f %%", 100 * all.localHandoffShare)
							: "–",
					runs.size()));
		}

	}

	/** A contender's runs taken together: median throughput, all waits, all grants. */
	private static final class Aggregate {

		final double grantsPerSecond;

		final WaitHistogram waits = new WaitHistogram();

		final double minMaxShare;

		final double threadFairness;

		final double localHandoffShare;

		Aggregate(List<Run> runs) {
			this.grantsPerSecond = Stats.median(runs.stream().map(Run::grantsPerSecond).toList());
			long grants = 0;
			long local = 0;
			for (Run run : runs) {
				this.waits.add(run.waits);
				grants += run.grants();
				local += run.localHandoffs();
			}
			long[] perJvm = perJvm(runs);
			long min = Long.MAX_VALUE;
			long max = 0;
			for (long count : perJvm) {
				min = Math.min(min, count);
				max = Math.max(max, count);
			}
			this.minMaxShare = (max > 0) ? (double) min / max : Double.NaN;
			this.threadFairness = Stats.median(runs.stream().map(Run::threadFairness).toList());
			this.localHandoffShare = (grants > 0) ? (double) local / grants : Double.NaN;
		}

	}

}
