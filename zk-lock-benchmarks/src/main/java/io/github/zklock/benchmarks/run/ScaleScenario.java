package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.zklock.benchmarks.ZooKeeperServers;

/**
 * Scenario 6, host side ({@code ./bench.sh --scale}): a million keys. One ZooKeeper server in a JVM
 * of its own ({@link ScaleServer}) and {@value #JVMS} applications ({@link ScaleWorker} JVMs, each a
 * Spring Boot context with the starter, Boot's meter registry and observations). The keys
 * [0, N) are split in {@value #JVMS} ranges, one per JVM; within a JVM, its threads take the next key
 * until none is left, so that every key is locked and released once, EXCLUSIVE: first the flat
 * layout {@code /orders/<n>}, then the deep one {@code /tenant/<n mod tenants>/order/<n>}.
 * <p>
 * Before the layouts each JVM warms up on keys of both layouts outside [0, N) and on the floor's
 * cycle (below a parent of its own), {@code --scale-warm-up-keys} each (1,000 unless told), then
 * calibrates: the
 * heap that one cached key costs in that application ({@code zk.lock.cache-capacity} keys, or at
 * most {@value #MAX_CALIBRATION_KEYS}, also outside [0, N)); then the runner waits for the reaper
 * to remove the lock znodes these left: until the znode count is back at the count before the
 * warm-up and the floor's warm-up parent. For each layout, in order:
 * <ol>
 * <li>the floor: the same JVMs and threads, each with a plain ZooKeeper client, create an ephemeral
 * znode at a distinct path below an existing parent and delete it, per key;</li>
 * <li>raw Curator, the same JVMs and threads on their applications' Curator clients: a new
 * {@code InterProcessMutex} per never-seen key of the layout, at the depth of the starter's keys
 * (at most {@value #RAW_CURATOR_KEYS} keys); then the reaper removes the containers it left;</li>
 * <li>the server's {@code mntr} ({@code zk_znode_count}, {@code zk_approximate_data_size});</li>
 * <li>each JVM's heap after full collections; the run; the server's {@code mntr}; each JVM's heap
 * again, and its meters;</li>
 * <li>the server's {@code mntr} until its container reaper has removed the empty lock znodes: until
 * the count is back at the start, or has not moved for a reaper interval and 10 s, or the bounded
 * wait has passed.</li>
 * </ol>
 * Prints {@code SCALE_SERVER}, then per layout {@code SCALE_FLOOR}, {@code SCALE_RAW_CURATOR}, {@code SCALE},
 * {@code SCALE_HEAP} and {@code SCALE_METERS} per JVM and {@code SCALE_ZNODES} three times.
 */
final class ScaleScenario {

	static final int JVMS = 3;

	/** Keys of the raw Curator reference per layout, at most. */
	static final int RAW_CURATOR_KEYS = 50_000;

	static final int MAX_CALIBRATION_KEYS = 20_000;

	static final List<String> LAYOUTS = List.of("flat", "deep");

	private final BenchMain.Settings settings;

	private final List<String> lines = new ArrayList<>();

	private final List<Child> workers = new ArrayList<>();

	private String connectString = "";

	private ScaleScenario(BenchMain.Settings settings) {
		this.settings = settings;
	}

	/**
	 * Run the scenario.
	 * @param settings the runner's settings ({@code --scale-*})
	 * @return its {@code SCALE...} lines, also printed as they come
	 * @throws Exception if a JVM or the server fails
	 */
	static List<String> run(BenchMain.Settings settings) throws Exception {
		return new ScaleScenario(settings).execute();
	}

	private List<String> execute() throws Exception {
		long keys = this.settings.scaleKeys;
		int threads = this.settings.scaleThreads;
		System.out.printf(Locale.ROOT, "%n==== Scale: %,d keys, %d JVMs x %d threads, api %s%s (load average %s) ====%n",
				keys, JVMS, threads, this.settings.scaleApi,
				this.settings.scaleClientCompiler ? ", client compiler alone (not a measurement)" : "",
				BenchMain.loadAverage());
		long started = System.nanoTime();
		Files.createDirectories(this.settings.workDir.resolve("tmp"));
		Child server = startServer();
		try {
			String listening = server.expect("LISTENING ", 120);
			this.connectString = listening.split(" ")[1];
			emit(String.format(Locale.ROOT,
					"SCALE_SERVER process=own_jvm server=TestingServer zookeeper=%s heap=%s fsync=%s "
							+ "container_check_interval_ms=%d container_max_per_minute=%d mntr=4lw "
							+ "purge=3_newest_snapshots_every_minute",
					org.apache.zookeeper.Version.getFullVersion().split("[ -]")[0], this.settings.scaleServerHeap,
					this.settings.fsync ? "on" : "off", this.settings.scaleReapIntervalMs,
					this.settings.scaleReapMaxPerMinute));
			for (int jvm = 1; jvm <= JVMS; jvm++) {
				this.workers.add(startWorker(jvm));
			}
			for (Child worker : this.workers) {
				worker.expect("READY", 180);
			}
			System.out.printf("PROGRESS scale: server and applications ready in %d s%n",
					TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
			long beforeWarmUp = Long.parseLong(ScaleServer.mntr(this.connectString).get("zk_znode_count"));
			long outside = keys;
			int warmUpKeys = this.settings.scaleWarmUpKeys;
			// Warm-up and calibration use keys above N: the measured runs never meet them.
			eachJvm("RUN flat %d %d " + threads, outside, warmUpKeys);
			eachJvm("RUN deep %d %d " + threads, outside, warmUpKeys);
			eachJvm("FLOOR warm-up %d %d " + threads, 0, warmUpKeys);
			outside += (long) JVMS * warmUpKeys;
			int calibrationKeys = Math.min(this.settings.scaleCacheCapacity, MAX_CALIBRATION_KEYS);
			List<Map<String, String>> calibration = eachJvm("CALIBRATE %d %d " + threads, outside, calibrationKeys);
			System.out.printf("PROGRESS scale: warmed up and calibrated in %d s%n",
					TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
			// The first layout starts once the reaper has removed what the warm-up left: every lock
			// znode and container, not the floor's parent, a persistent znode.
			long reapStarted = System.nanoTime();
			Map<String, String> settled = settle("warm-up", beforeWarmUp + 1);
			System.out.printf("PROGRESS scale: %s znodes after the warm-up's were reaped (%d before it; waited %d s)%n",
					settled.get("zk_znode_count"), beforeWarmUp,
					TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - reapStarted));
			for (String layout : LAYOUTS) {
				layout(layout, calibration);
			}
			for (Child worker : this.workers) {
				worker.quit();
			}
			server.quit();
			System.out.printf("PROGRESS scale: done in %d s (load average %s)%n",
					TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), BenchMain.loadAverage());
		}
		finally {
			for (Child worker : this.workers) {
				worker.destroy();
			}
			server.destroy();
		}
		return this.lines;
	}

	private void layout(String layout, List<Map<String, String>> calibration) throws Exception {
		long keys = this.settings.scaleKeys;
		int threads = this.settings.scaleThreads;
		long floorKeys = this.settings.scaleFloorKeys();
		long floorStarted = System.nanoTime();
		List<Map<String, String>> floor = all("FLOOR " + layout + " %d %d " + threads, 0, floorKeys);
		double floorSeconds = (System.nanoTime() - floorStarted) / 1e9;
		double floorRate = cycles(floor) / floorSeconds;
		emit(String.format(Locale.ROOT, "SCALE_FLOOR layout=%s keys=%d jvms=%d threads=%d cycles_per_s=%.0f "
				+ "seconds=%.1f per_jvm_cycles_per_s=%s what=plain_zookeeper_create_ephemeral+delete", layout,
				cycles(floor), JVMS, threads, floorRate, floorSeconds, perJvmRates(floor)));

		// Raw Curator on never-seen keys of the same layout and depth, once the reaper removed the
		// containers it leaves.
		Map<String, String> beforeRaw = ScaleServer.mntr(this.connectString);
		long rawKeys = Math.min(floorKeys, RAW_CURATOR_KEYS);
		long rawStarted = System.nanoTime();
		List<Map<String, String>> raw = all("RAW " + layout + " %d %d " + threads, 0, rawKeys);
		double rawSeconds = (System.nanoTime() - rawStarted) / 1e9;
		double rawRate = cycles(raw) / rawSeconds;
		emit(String.format(Locale.ROOT, "SCALE_RAW_CURATOR layout=%s keys=%d jvms=%d threads=%d cycles_per_s=%.0f "
				+ "seconds=%.1f per_jvm_cycles_per_s=%s what=InterProcessMutex_per_key", layout, cycles(raw), JVMS,
				threads, rawRate, rawSeconds, perJvmRates(raw)));
		settle(layout + " raw Curator", Long.parseLong(beforeRaw.get("zk_znode_count")));

		// After the floor, whose ephemeral znodes are gone again and whose parent stays.
		Map<String, String> start = ScaleServer.mntr(this.connectString);
		long startCount = Long.parseLong(start.get("zk_znode_count"));
		znodes(layout, "start", start, startCount, -1);
		List<Map<String, String>> before = all("HEAP");
		long runStarted = System.nanoTime();
		List<Map<String, String>> run = all("RUN " + layout + " %d %d " + threads, 0, keys);
		double runSeconds = (System.nanoTime() - runStarted) / 1e9;
		Map<String, String> afterRun = ScaleServer.mntr(this.connectString);
		double rate = cycles(run) / runSeconds;
		emit(String.format(Locale.ROOT, "SCALE layout=%s api=%s keys=%d jvms=%d threads=%d cycles_per_s=%.0f "
				+ "floor_per_s=%.0f ratio=%.3f raw_curator_per_s=%.0f vs_raw_curator=%.2f seconds=%.1f "
				+ "per_jvm_cycles_per_s=%s", layout, this.settings.scaleApi, cycles(run), JVMS, threads, rate,
				floorRate, rate / floorRate, rawRate, rate / rawRate, runSeconds, perJvmRates(run)));
		List<Map<String, String>> after = all("HEAP");
		List<Map<String, String>> meters = all("METERS");
		for (int i = 0; i < JVMS; i++) {
			long baseline = Long.parseLong(calibration.get(i).get("baseline_bytes"));
			long perPath = Long.parseLong(calibration.get(i).get("per_path_bytes"));
			long beforeBytes = Long.parseLong(before.get(i).get("heap_bytes"));
			long afterBytes = Long.parseLong(after.get(i).get("heap_bytes"));
			emit(String.format(Locale.ROOT, "SCALE_HEAP layout=%s jvm=%d retained_bytes=%d bound_bytes=%d "
					+ "growth_bytes=%d baseline_bytes=%d before_bytes=%d after_bytes=%d cache_capacity=%d "
					+ "per_path_bytes=%d cached=%d", layout, i + 1, afterBytes - baseline,
					this.settings.scaleCacheCapacity * perPath, afterBytes - beforeBytes, baseline, beforeBytes,
					afterBytes, this.settings.scaleCacheCapacity, perPath, Long.parseLong(after.get(i).get("cached"))));
		}
		for (int i = 0; i < JVMS; i++) {
			Map<String, String> m = meters.get(i);
			emit(String.format(Locale.ROOT, "SCALE_METERS layout=%s jvm=%d meters=%s per_key_meters=%s "
					+ "zk_lock_meters=%s zk_lock_tag_values=%s observation_tag_values=%s "
					+ "per_key_observation_tag_values=%s", layout, i + 1, m.get("meters"), m.get("per_key_meters"),
					m.get("zk_lock_meters"), m.get("zk_lock_tag_values"), m.get("observation_tag_values"),
					m.get("per_key_observation_tag_values")));
		}
		System.out.println("zk.lock meter tags of JVM 1 (values naming an order left out): "
				+ meters.get(0).get("zk_lock_tags"));
		znodes(layout, "after_run", afterRun, startCount, -1);
		reaped(layout, startCount);
	}

	/** Poll {@code mntr} until the reaper is done (see the class comment); print the last figures. */
	private void reaped(String layout, long startCount) throws Exception {
		long started = System.nanoTime();
		Map<String, String> figures = settle(layout, startCount);
		znodes(layout, "after_reaper", figures, startCount, (System.nanoTime() - started) / 1e9);
	}

	/**
	 * Poll {@code mntr} every second until the znode count is down to {@code startCount}, or has not
	 * moved for a reaper interval and 10 s, or the bounded wait has passed.
	 * @return the last figures
	 */
	private Map<String, String> settle(String layout, long startCount) throws Exception {
		long started = System.nanoTime();
		long limit = TimeUnit.SECONDS.toNanos(this.settings.scaleReapWaitSeconds);
		long quiet = TimeUnit.MILLISECONDS.toNanos(this.settings.scaleReapIntervalMs) + TimeUnit.SECONDS.toNanos(10);
		Map<String, String> figures = ScaleServer.mntr(this.connectString);
		long count = Long.parseLong(figures.get("zk_znode_count"));
		long changed = System.nanoTime();
		long lastReport = changed;
		while (count > startCount && System.nanoTime() - changed < quiet && System.nanoTime() - started < limit) {
			Thread.sleep(1_000);
			figures = ScaleServer.mntr(this.connectString);
			long now = Long.parseLong(figures.get("zk_znode_count"));
			if (now != count) {
				count = now;
				changed = System.nanoTime();
			}
			if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(30)) {
				lastReport = System.nanoTime();
				System.out.printf(Locale.ROOT, "PROGRESS scale %s: %d znodes, waited %.0f s for the reaper%n", layout, count,
						(System.nanoTime() - started) / 1e9);
			}
		}
		return figures;
	}

	private void znodes(String layout, String when, Map<String, String> figures, long startCount, double waited) {
		long count = Long.parseLong(figures.get("zk_znode_count"));
		emit(String.format(Locale.ROOT, "SCALE_ZNODES layout=%s when=%s znode_count=%d data_size=%s "
				+ "percent_of_start=%.1f%s", layout, when, count, figures.get("zk_approximate_data_size"),
				100.0 * count / startCount, (waited >= 0) ? String.format(Locale.ROOT, " waited_s=%.0f", waited) : ""));
	}

	/**
	 * Send a command to every JVM at once and collect their results in JVM order. A command with
	 * {@code %d %d} gets each JVM's range of {@code count} keys from {@code base}.
	 */
	private List<Map<String, String>> all(String command, long base, long count) throws InterruptedException {
		long share = count / JVMS;
		for (int i = 0; i < JVMS; i++) {
			long from = base + i * share;
			long to = (i == JVMS - 1) ? base + count : from + share;
			this.workers.get(i).send(String.format(Locale.ROOT, command, from, to));
		}
		return results();
	}

	/** As {@link #all(String, long, long)}, every JVM with {@code perJvm} keys. */
	private List<Map<String, String>> eachJvm(String command, long base, int perJvm) throws InterruptedException {
		return all(command, base, (long) perJvm * JVMS);
	}

	private List<Map<String, String>> all(String command) throws InterruptedException {
		for (Child worker : this.workers) {
			worker.send(command);
		}
		return results();
	}

	private List<Map<String, String>> results() throws InterruptedException {
		List<Map<String, String>> results = new ArrayList<>();
		for (Child worker : this.workers) {
			results.add(HotKeyWorker.fields(worker.expect("RESULT ", TimeUnit.HOURS.toSeconds(6))));
		}
		return results;
	}

	private static long cycles(List<Map<String, String>> results) {
		return results.stream().mapToLong((result) -> Long.parseLong(result.get("cycles"))).sum();
	}

	private static String perJvmRates(List<Map<String, String>> results) {
		StringJoiner joiner = new StringJoiner(",");
		for (Map<String, String> result : results) {
			joiner.add(String.format(Locale.ROOT, "%.0f",
					Long.parseLong(result.get("cycles")) / (Long.parseLong(result.get("nanos")) / 1e9)));
		}
		return joiner.toString();
	}

	private void emit(String line) {
		System.out.println(line);
		this.lines.add(line);
	}

	private Child startServer() throws IOException {
		List<String> command = new ArrayList<>(List.of(java(), "-Xms" + this.settings.scaleServerHeap,
				"-Xmx" + this.settings.scaleServerHeap, "-XX:-UsePerfData",
				"-Djava.io.tmpdir=" + this.settings.workDir.resolve("tmp"),
				"-D" + ZooKeeperServers.WORK_DIR_PROPERTY + "=" + this.settings.workDir,
				"-D" + MemoryScenario.CHECK_INTERVAL + "=" + this.settings.scaleReapIntervalMs,
				"-D" + MemoryScenario.MAX_PER_MINUTE + "=" + this.settings.scaleReapMaxPerMinute,
				"-Dzookeeper.4lw.commands.whitelist=mntr"));
		if (!this.settings.fsync) {
			command.add("-Dzookeeper.forceSync=no");
		}
		command.addAll(compilerArgs());
		command.addAll(List.of("-cp", System.getProperty("java.class.path"), ScaleServer.class.getName()));
		return new Child("server", command);
	}

	private Child startWorker(int jvm) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(java());
		command.addAll(this.settings.forkJvmArgs());
		command.addAll(compilerArgs());
		command.addAll(List.of("-cp", System.getProperty("java.class.path"), ScaleWorker.class.getName(),
				Integer.toString(jvm), this.connectString, Integer.toString(this.settings.scaleCacheCapacity),
				this.settings.scaleApi, Integer.toString(this.settings.scaleTenants)));
		return new Child("jvm " + jvm, command);
	}

	/** {@code --scale-client-compiler}: C1 alone, which halves a worker's start (15 s to 8 s here). */
	private List<String> compilerArgs() {
		return this.settings.scaleClientCompiler ? List.of("-XX:TieredStopAtLevel=1") : List.of();
	}

	private static String java() {
		return ProcessHandle.current().info().command().orElse("java");
	}

	/** A child JVM and its output, line by line: protocol lines queued, the rest printed. */
	private static final class Child {

		private final String name;

		private final Process process;

		private final PrintWriter input;

		private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

		Child(String name, List<String> command) throws IOException {
			this.name = name;
			this.process = new ProcessBuilder(command).redirectErrorStream(true).start();
			this.input = new PrintWriter(this.process.getOutputStream(), true, StandardCharsets.UTF_8);
			Thread reader = new Thread(this::read, "scale-" + name.replace(' ', '-'));
			reader.setDaemon(true);
			reader.start();
		}

		private void read() {
			try (BufferedReader output = new BufferedReader(
					new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
				String line;
				while ((line = output.readLine()) != null) {
					if (line.equals("READY") || line.startsWith("RESULT ") || line.startsWith("LISTENING ")) {
						this.lines.add(line);
					}
					else if (!line.startsWith("Removing file: ")) {
						// (PurgeTxnLog prints every snapshot and log it removes.)
						System.out.println("[scale " + this.name + "] " + line);
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

		/** The next protocol line, which must start with {@code prefix}. */
		String expect(String prefix, long timeoutSeconds) throws InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
			while (true) {
				String line = this.lines.poll(200, TimeUnit.MILLISECONDS);
				if (line != null) {
					if (!line.startsWith(prefix)) {
						throw new IllegalStateException("Scale " + this.name + ": expected " + prefix + ", got " + line);
					}
					return line;
				}
				if (!this.process.isAlive() && this.lines.isEmpty()) {
					throw new IllegalStateException("Scale " + this.name + " exited with code "
							+ this.process.exitValue() + " (its output is above)");
				}
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Scale " + this.name + ": no " + prefix + " within "
							+ timeoutSeconds + " s");
				}
			}
		}

		void quit() throws InterruptedException {
			send("QUIT");
			this.input.close();
			if (!this.process.waitFor(60, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Scale " + this.name + " did not exit");
			}
		}

		void destroy() throws InterruptedException {
			if (this.process.isAlive()) {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}

	}

}
