package io.github.zklock.benchmarks.run;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.springframework.boot.SpringBootVersion;
import org.springframework.core.SpringVersion;

import io.github.zklock.benchmarks.ZooKeeperServers;

/**
 * Runs every scenario and prints the report; {@code ./bench.sh} calls it. In order:
 * <ol>
 * <li>the interleaved runs ({@link InterleavedRuns}): in each fork (a fresh JVM with its own
 * in-process server) every benchmark is warmed up, then the benchmarks of a group take turns in
 * short batches, round after round; the ratios come from these;</li>
 * <li>in full mode, the same benchmark methods under JMH, each in forks of its own;</li>
 * <li>the ZooKeeper requests of one cycle per lock kind, counted at the client;</li>
 * <li>the memory and znode scenario (10,000 distinct paths);</li>
 * <li>the hot-key scenario ({@link HotKeyScenario}): three JVMs of eight threads on one key, zk-lock
 * with and without local hand-off, raw Curator and Redisson, then one thread uncontended;</li>
 * <li>the report: tables (also written to {@code summary.md} in the work directory), then the
 * {@code HOTKEY} lines, the {@code RATIO} lines, then the {@code REQUESTS} lines, last.</li>
 * </ol>
 * Options: {@code --quick} (1 fork: 60 rounds of 100 alternating cycles per single-threaded
 * benchmark, 24 rounds of one 200 ms batch per 8-thread benchmark; no JMH), default (3 forks of 100
 * and 40 rounds of 400 ms batches, then JMH with 2 forks per benchmark), {@code --forks N},
 * {@code --rounds N}, {@code --contended-rounds N}, {@code --jmh}, {@code --no-jmh},
 * {@code --jmh-forks N}, {@code --include REGEX} (benchmark names, found anywhere in the name),
 * {@code --connect-string HOST:PORT} (external server for the throughput scenarios),
 * {@code --fsync} (the in-process server syncs its log to disk on every write, as a production
 * server does), {@code --prof NAME} (a JMH profiler, e.g. {@code stack}),
 * {@code --skip interleaved,jmh,requests,memory,hotkey,redisson}, {@code --memory-paths N},
 * {@code --hotkey-rounds N}, {@code --hotkey-seconds N} (measured seconds per contender and round),
 * {@code --hotkey-contenders A,B} (only these hot-key contenders), {@code --hotkey-jfr} (a JFR
 * profile of each hot-key JVM),
 * {@code --redis-server PATH} (else the first {@code redis-server} on the {@code PATH}),
 * {@code --work-dir DIR}, {@code --scale} (instead of everything else: the scale scenario,
 * {@link ScaleScenario}, with {@code --scale-keys N}, {@code --scale-threads N} per JVM,
 * {@code --scale-api annotation|template|template-key}, {@code --scale-tenants N},
 * {@code --scale-floor-keys N}, {@code --scale-warm-up-keys N}, {@code --scale-cache-capacity N},
 * {@code --scale-reap-interval-ms N}, {@code --scale-reap-max-per-minute N},
 * {@code --scale-reap-wait-seconds N}, {@code --scale-server-heap SIZE}, {@code --scale-client-compiler}),
 * {@code --publish-results FILE} (where a complete run, one without
 * {@code --skip}, {@code --include}, {@code --connect-string} or {@code --prof}, also writes its
 * {@link ResultsFile}; every run writes {@code results.properties} in the work directory).
 */
public final class BenchMain {

	private BenchMain() {
	}

	/**
	 * Run the benchmarks.
	 * @param args the options
	 * @throws Exception if a scenario fails
	 */
	public static void main(String[] args) throws Exception {
		Settings settings = Settings.parse(args);
		Files.createDirectories(settings.workDir.resolve("tmp"));
		System.setProperty(ZooKeeperServers.WORK_DIR_PROPERTY, settings.workDir.toString());
		if (!settings.fsync) {
			// For the servers of this JVM (requests, memory), as for the forks'.
			System.setProperty("zookeeper.forceSync", "no");
		}
		if (settings.scale) {
			// A scenario of its own: nothing else runs, nothing is published.
			Instant started = Instant.now();
			List<String> lines = ScaleScenario.run(settings);
			System.out.println();
			System.out.println("==== zk-lock scale scenario, " + settings.describeScale() + " ====");
			lines.forEach(System.out::println);
			System.out.println("Wall time " + minutes(Duration.between(started, Instant.now())) + "; " + machine()
				.lines()
				.findFirst()
				.orElse(""));
			return;
		}
		Instant started = Instant.now();
		String loadBefore = loadAverage();

		Map<String, Samples> interleaved = new LinkedHashMap<>();
		if (!settings.skip.contains("interleaved")) {
			InterleavedRuns.run(settings, interleaved);
		}
		Map<String, Samples> jmh = new LinkedHashMap<>();
		if (settings.jmh && !settings.skip.contains("jmh")) {
			System.out.printf("%n==== JMH, %d fork(s) per benchmark (load average %s) ====%n", settings.jmhForks,
					loadAverage());
			for (RunResult run : new Runner(settings.jmhOptions().build()).run()) {
				Samples.addJmh(jmh, 1, run);
			}
		}
		List<String> requests = settings.skip.contains("requests") ? List.of() : RequestCounts.measure();
		List<String> memory = settings.skip.contains("memory") ? List.of()
				: MemoryScenario.run(settings.memoryPaths, settings.memoryLibraries(), settings.workDir);
		HotKeyScenario.@Nullable Result hotKey = settings.skip.contains("hotkey") ? null : HotKeyScenario.run(settings);

		Report report = new Report(interleaved, jmh);
		StringBuilder summary = new StringBuilder();
		summary.append("Run ").append(DateTimeFormatter.ISO_INSTANT.format(started.truncatedTo(
				java.time.temporal.ChronoUnit.SECONDS))).append(", ").append(settings.describe()).append('\n');
		summary.append(machine()).append('\n');
		summary.append("Load average (1, 5, 15 min): before ").append(loadBefore).append(", after ")
			.append(loadAverage()).append("; wall time ").append(minutes(Duration.between(started, Instant.now())))
			.append("\n\n");
		summary.append(report.markdown()).append('\n');
		if (!memory.isEmpty()) {
			summary.append("\nMemory and znodes (heap in use after System.gc(), summed over the heap pools' "
					+ "collection usage, in a JVM holding the client only):\n\n").append(Report.memoryMarkdown(memory)).append('\n');
			memory.forEach((line) -> summary.append("    ").append(line).append('\n'));
		}
		if (hotKey != null) {
			summary.append("\nHot key (").append(HotKeyScenario.JVMS).append(" JVMs × ").append(HotKeyScenario.THREADS)
				.append(" threads on one key, then 1 thread uncontended):\n\n")
				.append(hotKey.markdown())
				.append('\n');
			hotKey.lines().forEach((line) -> summary.append("    ").append(line).append('\n'));
		}
		Path summaryFile = settings.workDir.resolve("summary.md");
		Files.writeString(summaryFile, summary, StandardCharsets.UTF_8);
		ResultsFile results = results(settings, started, loadBefore, report, hotKey, requests, memory);
		Path resultsFile = settings.workDir.resolve("results.properties");
		results.write(resultsFile, "zk-lock benchmarks, one run (./bench.sh)");
		if (settings.publishResults != null && settings.complete()) {
			results.write(settings.publishResults, "The latest figures of ./bench.sh, written by its run: "
					+ "quoted by README.md, the guide and BENCHMARKS.md, drawn by Charts. Do not edit.");
		}

		System.out.println();
		System.out.println("==== zk-lock benchmarks (also in " + summaryFile + ") ====");
		System.out.print(summary);
		System.out.println();
		if (hotKey != null) {
			hotKey.lines().forEach(System.out::println);
		}
		report.ratioLines().forEach(System.out::println);
		if (hotKey != null) {
			hotKey.ratioLines().forEach(System.out::println);
		}
		requests.forEach(System.out::println);
		System.out.println();
		System.out.println("Results: " + resultsFile + ((settings.publishResults != null && settings.complete())
				? " and " + settings.publishResults : ""));
	}

	private static ResultsFile results(Settings settings, Instant started, String loadBefore, Report report,
			HotKeyScenario.@Nullable Result hotKey, List<String> requests, List<String> memory) {
		ResultsFile results = new ResultsFile();
		results.put("run.started", DateTimeFormatter.ISO_INSTANT.format(started.truncatedTo(
				java.time.temporal.ChronoUnit.SECONDS)));
		results.put("run.mode", settings.quick ? "quick" : "full");
		results.put("run.settings", settings.describe());
		results.put("run.machine", machine().lines().findFirst().orElse(""));
		results.put("run.versions", machine().lines().skip(1).findFirst().orElse(""));
		results.put("run.cores", Runtime.getRuntime().availableProcessors());
		results.put("run.load_before", loadBefore);
		results.put("run.load_after", loadAverage());
		results.put("run.fsync", settings.fsync);
		results.put("run.wall_seconds", Duration.between(started, Instant.now()).toSeconds());
		for (Report.Ratio ratio : report.ratios()) {
			String key = "ratio." + ratio.spec().name();
			results.put(key, String.format(Locale.ROOT, "%.4f", ratio.value()));
			if (!Double.isNaN(ratio.p25())) {
				results.put(key + ".p25", String.format(Locale.ROOT, "%.4f", ratio.p25()));
				results.put(key + ".p75", String.format(Locale.ROOT, "%.4f", ratio.p75()));
				results.put(key + ".rounds", ratio.pairs());
			}
		}
		if (hotKey != null) {
			for (HotKeyScenario.Result.Ratio ratio : hotKey.ratios()) {
				String key = "ratio." + ratio.name();
				results.put(key, String.format(Locale.ROOT, "%.4f", ratio.value()));
				results.put(key + ".min", String.format(Locale.ROOT, "%.4f", ratio.min()));
				results.put(key + ".max", String.format(Locale.ROOT, "%.4f", ratio.max()));
				results.put(key + ".rounds", ratio.rounds());
			}
			results.addLines(hotKey.lines());
		}
		results.addLines(requests);
		results.addLines(memory);
		return results;
	}

	private static String minutes(Duration duration) {
		return String.format(Locale.ROOT, "%d min %02d s", duration.toMinutes(), duration.toSecondsPart());
	}

	static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
			return fields[0] + " " + fields[1] + " " + fields[2];
		}
		catch (IOException | RuntimeException ex) {
			return String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
		}
	}

	private static String machine() {
		String cpu = "unknown CPU";
		try {
			cpu = Files.readAllLines(Path.of("/proc/cpuinfo"))
				.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse(cpu);
		}
		catch (IOException ex) {
			// not Linux: keep "unknown"
		}
		long memory = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getTotalMemorySize();
		return String.format(Locale.ROOT,
				"Machine: %s, %d cores, %d GiB RAM, %s %s; %s %s%n"
						+ "Versions: Spring Boot %s, Spring Framework %s, Curator %s, ZooKeeper %s, Spring Integration %s, "
						+ "lock4j %s, Redisson %s, JMH %s",
				cpu, Runtime.getRuntime().availableProcessors(), memory >> 30, System.getProperty("os.name"),
				System.getProperty("os.version"), System.getProperty("java.vm.name"),
				System.getProperty("java.runtime.version"), SpringBootVersion.getVersion(), SpringVersion.getVersion(),
				mavenVersion("org.apache.curator", "curator-framework"),
				org.apache.zookeeper.Version.getFullVersion().split("[ -]")[0],
				org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry.class.getPackage()
					.getImplementationVersion(),
				mavenVersion("com.baomidou", "lock4j-core"), mavenVersion("org.redisson", "redisson"),
				org.openjdk.jmh.util.Version.getPlainVersion());
	}

	static String mavenVersion(String groupId, String artifactId) {
		String resource = "/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
		try (InputStream in = BenchMain.class.getResourceAsStream(resource)) {
			if (in == null) {
				return "unknown";
			}
			Properties properties = new Properties();
			properties.load(in);
			return properties.getProperty("version", "unknown");
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	/** The parsed command line. */
	static final class Settings {

		boolean quick;

		int forks = -1;

		int rounds = -1;

		int contendedRounds = -1;

		boolean jmh;

		int jmhForks = 2;

		String include = ".";

		String connectString = "";

		boolean fsync;

		final List<String> profilers = new ArrayList<>();

		Set<String> skip = Set.of();

		int memoryPaths = 10_000;

		int hotKeyRounds = -1;

		int hotKeySeconds = -1;

		/** The hot-key contenders to run (contended, ping-pong and single-thread ones alike); empty: all. */
		Set<String> hotKeyContenders = Set.of();

		/** Whether each hot-key JVM records a JFR profile (hotkey-jvm-N.jfr in the work directory). */
		boolean hotKeyJfr;

		@Nullable String redisServer;

		@Nullable Path publishResults;

		Path workDir = Path.of("target", "bench");

		boolean scale;

		long scaleKeys = 1_000_000;

		int scaleThreads = 16;

		String scaleApi = "annotation";

		int scaleTenants = 100;

		long scaleFloorKeys = -1;

		/** Keys of each JVM's warm-up, per layout and for the floor's cycle. */
		int scaleWarmUpKeys = 1_000;

		/** The starter's default {@code zk.lock.cache-capacity}. */
		int scaleCacheCapacity = 10_000;

		int scaleReapIntervalMs = 30_000;

		int scaleReapMaxPerMinute = 6_000_000;

		int scaleReapWaitSeconds = 900;

		String scaleServerHeap = "3g";

		/**
		 * Whether the scale scenario's JVMs run with the client compiler alone: they start in about
		 * half the time and run slower, for tests of the scenario rather than measurements.
		 */
		boolean scaleClientCompiler;

		static Settings parse(String[] args) {
			Settings settings = new Settings();
			Boolean jmh = null;
			for (int i = 0; i < args.length; i++) {
				String arg = args[i];
				switch (arg) {
					case "--quick" -> settings.quick = true;
					case "--fsync" -> settings.fsync = true;
					case "--jmh" -> jmh = Boolean.TRUE;
					case "--no-jmh" -> jmh = Boolean.FALSE;
					case "--jmh-forks" -> settings.jmhForks = Integer.parseInt(value(args, ++i, arg));
					case "--forks" -> settings.forks = Integer.parseInt(value(args, ++i, arg));
					case "--rounds" -> settings.rounds = Integer.parseInt(value(args, ++i, arg));
					case "--contended-rounds" -> settings.contendedRounds = Integer.parseInt(value(args, ++i, arg));
					case "--include" -> settings.include = value(args, ++i, arg);
					case "--connect-string" -> settings.connectString = value(args, ++i, arg);
					case "--prof" -> settings.profilers.add(value(args, ++i, arg));
					case "--skip" -> settings.skip = Set.of(value(args, ++i, arg).split(","));
					case "--memory-paths" -> settings.memoryPaths = Integer.parseInt(value(args, ++i, arg));
					case "--hotkey-rounds" -> settings.hotKeyRounds = Integer.parseInt(value(args, ++i, arg));
					case "--hotkey-seconds" -> settings.hotKeySeconds = Integer.parseInt(value(args, ++i, arg));
					case "--hotkey-contenders" -> settings.hotKeyContenders = Set.of(value(args, ++i, arg).split(","));
					case "--hotkey-jfr" -> settings.hotKeyJfr = true;
					case "--redis-server" -> settings.redisServer = value(args, ++i, arg);
					case "--work-dir" -> settings.workDir = Path.of(value(args, ++i, arg));
					case "--publish-results" -> settings.publishResults = Path.of(value(args, ++i, arg));
					case "--scale" -> settings.scale = true;
					case "--scale-keys" -> settings.scaleKeys = Long.parseLong(value(args, ++i, arg));
					case "--scale-threads" -> settings.scaleThreads = Integer.parseInt(value(args, ++i, arg));
					case "--scale-api" -> settings.scaleApi = value(args, ++i, arg);
					case "--scale-tenants" -> settings.scaleTenants = Integer.parseInt(value(args, ++i, arg));
					case "--scale-floor-keys" -> settings.scaleFloorKeys = Long.parseLong(value(args, ++i, arg));
					case "--scale-warm-up-keys" -> settings.scaleWarmUpKeys = Integer.parseInt(value(args, ++i, arg));
					case "--scale-cache-capacity" -> settings.scaleCacheCapacity = Integer.parseInt(value(args, ++i, arg));
					case "--scale-reap-interval-ms" -> settings.scaleReapIntervalMs = Integer.parseInt(value(args, ++i, arg));
					case "--scale-reap-max-per-minute" ->
						settings.scaleReapMaxPerMinute = Integer.parseInt(value(args, ++i, arg));
					case "--scale-reap-wait-seconds" ->
						settings.scaleReapWaitSeconds = Integer.parseInt(value(args, ++i, arg));
					case "--scale-server-heap" -> settings.scaleServerHeap = value(args, ++i, arg);
					case "--scale-client-compiler" -> settings.scaleClientCompiler = true;
					default -> throw new IllegalArgumentException("Unknown option " + arg);
				}
			}
			if (settings.forks < 1) {
				settings.forks = settings.quick ? 1 : 3;
			}
			if (settings.rounds < 1) {
				settings.rounds = settings.quick ? 60 : 100;
			}
			settings.jmh = (jmh != null) ? jmh : !settings.quick;
			settings.workDir = settings.workDir.toAbsolutePath();
			return settings;
		}

		private static String value(String[] args, int index, String option) {
			if (index >= args.length) {
				throw new IllegalArgumentException(option + " needs a value");
			}
			return args[index];
		}

		/**
		 * Whether the run measured everything, on the in-process servers: only such a run replaces
		 * the published figures ({@code --publish-results}).
		 */
		boolean complete() {
			return this.skip.isEmpty() && this.include.equals(".") && this.connectString.isEmpty()
					&& this.profilers.isEmpty() && this.hotKeyContenders.isEmpty() && !this.hotKeyJfr;
		}

		/** Cycles of each single-threaded benchmark per round. */
		int cycles() {
			return 100;
		}

		/** Rounds of the eight-thread groups (one batch per member each). */
		int contendedRounds() {
			if (this.contendedRounds > 0) {
				return this.contendedRounds;
			}
			return this.quick ? 24 : 40;
		}

		long batchMillis() {
			return this.quick ? 200 : 400;
		}

		long warmupMillis() {
			return this.quick ? 1000 : 3000;
		}

		int jmhWarmupIterations() {
			return this.quick ? 2 : 3;
		}

		int jmhMeasurementIterations() {
			return this.quick ? 3 : 5;
		}

		int jmhIterationSeconds() {
			return this.quick ? 1 : 2;
		}

		/** Rounds of the hot-key scenario (each runs every contender once, three JVMs together). */
		int hotKeyRounds() {
			if (this.hotKeyRounds > 0) {
				return this.hotKeyRounds;
			}
			return this.quick ? 1 : 3;
		}

		/** Measured time of one hot-key run. */
		long hotKeyMeasureMillis() {
			if (this.hotKeySeconds > 0) {
				return this.hotKeySeconds * 1000L;
			}
			return this.quick ? 5_000 : 10_000;
		}

		/** Warm-up of each contender before the first round (code paths, connections). */
		long hotKeyWarmupMillis() {
			return this.quick ? 1_500 : 3_000;
		}

		/**
		 * Warm-up of each affinity contender before the first round: 3,000 keys, and the compilers
		 * of three JVMs sharing the cores with 24 busy threads, take longer to settle than one key
		 * (measured: the kept contender's grants per second still rose for about 20 s).
		 */
		long hotKeyAffinityWarmupMillis() {
			return this.quick ? 15_000 : 25_000;
		}

		/** Unmeasured start of every hot-key run (the queue fills, the threads settle). */
		long hotKeyRunWarmupMillis() {
			return this.quick ? 1_000 : 2_000;
		}

		/** Rounds of the uncontended single-thread batches (one batch per contender each). */
		int uncontendedRounds() {
			return this.quick ? 10 : 30;
		}

		long uncontendedBatchMillis() {
			return this.quick ? 300 : 500;
		}

		String describeHotKey() {
			String server = this.connectString.isEmpty()
					? "the runner's in-process TestingServer on 127.0.0.1, "
							+ (this.fsync ? "log fsync on" : "log fsync off (zookeeper.forceSync=no)")
					: "external " + this.connectString;
			return String.format(Locale.ROOT,
					"Hot key: %d JVMs x %d threads, one key, critical section: a flag check and a counter increment; "
							+ "%d ms of warm-up per contender (%d ms for the affinity ones), then %d round(s), contenders in random order, each run "
							+ "%d ms unmeasured + %d ms measured with the JVMs started together; uncontended: 1 thread, "
							+ "%d rounds of one %d ms batch per contender, alternating; ZooKeeper: %s",
					HotKeyScenario.JVMS, HotKeyScenario.THREADS, hotKeyWarmupMillis(), hotKeyAffinityWarmupMillis(), hotKeyRounds(),
					hotKeyRunWarmupMillis(), hotKeyMeasureMillis(), uncontendedRounds(), uncontendedBatchMillis(),
					server);
		}

		/** Keys of the floor per layout: as many as the layout's, at most 100,000 unless given. */
		long scaleFloorKeys() {
			return (this.scaleFloorKeys > 0) ? this.scaleFloorKeys : Math.min(this.scaleKeys, 100_000);
		}

		String describeScale() {
			return String.format(Locale.ROOT,
					"%,d keys per layout, %d JVMs x %d threads, api %s, deep layout over %d tenants, floor %,d keys "
							+ "per layout, zk.lock.cache-capacity %d, server: own JVM (%s heap), container reaper "
							+ "every %d ms, at most %d a minute, log fsync %s",
					this.scaleKeys, ScaleScenario.JVMS, this.scaleThreads, this.scaleApi, this.scaleTenants,
					scaleFloorKeys(), this.scaleCacheCapacity, this.scaleServerHeap, this.scaleReapIntervalMs,
					this.scaleReapMaxPerMinute, this.fsync ? "on" : "off");
		}

		List<String> memoryLibraries() {
			return this.quick ? List.of("zk-lock") : List.of("zk-lock", "spring-integration");
		}

		String describe() {
			String interleaved = String.format(Locale.ROOT,
					"interleaved: %d fork(s); after %d ms of warm-up per benchmark, single-threaded groups %d rounds of %d "
							+ "alternating cycles per benchmark, 8-thread groups %d rounds of one %d ms batch per benchmark",
					this.forks, warmupMillis(), this.rounds, cycles(), contendedRounds(), batchMillis());
			String jmhText = this.jmh ? String.format(Locale.ROOT,
					"; JMH: %d fork(s) per benchmark, warm-up %d x %d s, measurement %d x %d s", this.jmhForks,
					jmhWarmupIterations(), jmhIterationSeconds(), jmhMeasurementIterations(), jmhIterationSeconds())
					: "; JMH not run";
			String server = this.connectString.isEmpty()
					? "in-process TestingServer on 127.0.0.1 per fork, "
							+ (this.fsync ? "log fsync on" : "log fsync off (zookeeper.forceSync=no)")
					: "external " + this.connectString;
			String skipped = this.skip.isEmpty() ? "" : "; skipped: " + String.join(",", new TreeSet<>(this.skip));
			return (this.quick ? "quick" : "full") + " mode; " + interleaved + jmhText + "; server: " + server + skipped;
		}

		/** JVM options of every forked JVM that runs benchmarks. */
		List<String> forkJvmArgs() {
			List<String> jvmArgs = new ArrayList<>(List.of("-Xms512m", "-Xmx512m", "-XX:-UsePerfData",
					"-Djava.io.tmpdir=" + this.workDir.resolve("tmp"),
					"-D" + ZooKeeperServers.WORK_DIR_PROPERTY + "=" + this.workDir));
			if (!this.fsync) {
				jvmArgs.add("-Dzookeeper.forceSync=no");
			}
			if (!this.connectString.isEmpty()) {
				jvmArgs.add("-D" + ZooKeeperServers.CONNECT_STRING_PROPERTY + "=" + this.connectString);
			}
			return jvmArgs;
		}

		ChainedOptionsBuilder jmhOptions() {
			java.util.regex.Pattern selected = java.util.regex.Pattern.compile(this.include);
			String names = Catalogue.DESCRIPTIONS.stream()
				.map(Catalogue.Member::name)
				.filter((name) -> selected.matcher(name).find())
				.collect(java.util.stream.Collectors.joining("|"));
			ChainedOptionsBuilder options = new OptionsBuilder()
				.include("^io\\.github\\.zklock\\.benchmarks\\.[A-Za-z]+\\.(" + names + ")$")
				.forks(this.jmhForks)
				.warmupIterations(jmhWarmupIterations())
				.warmupTime(TimeValue.seconds(jmhIterationSeconds()))
				.measurementIterations(jmhMeasurementIterations())
				.measurementTime(TimeValue.seconds(jmhIterationSeconds()))
				.jvmArgs(forkJvmArgs().toArray(String[]::new))
				.shouldFailOnError(true)
				.timeout(TimeValue.minutes(2))
				.resultFormat(ResultFormatType.JSON)
				.result(this.workDir.resolve("jmh-result.json").toString());
			this.profilers.forEach(options::addProfiler);
			return options;
		}

	}

}
