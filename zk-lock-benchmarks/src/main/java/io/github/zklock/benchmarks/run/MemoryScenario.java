package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;

import io.github.zklock.benchmarks.ZooKeeperServers;

/**
 * Scenario 4, host side: for each library, starts an in-process server whose container reaper
 * first runs {@value #REAP_AFTER_MS} ms after the start and then without the default rate limit of
 * 10,000 a minute, and runs {@link KeyCacheFootprint} against it in a child JVM, so that the heap
 * it measures holds the client only, not the server's data tree. The run of N lock cycles is
 * normally over before the reaper's first pass, so the child sees the empty container parents the
 * run leaves, then sees them go (on a slow or busy machine the first pass may come during the run,
 * and fewer are left when it ends). Then {@link KeptKeysFootprint} in a child JVM, on a server of
 * its own: N + N/10 keys kept by one application with at most N kept. Then {@link AsyncQueueFootprint}, in a child JVM too, on a
 * server of its own, twice: what {@value #ASYNC_QUEUE_GRANTS} asynchronous grants waiting for one key cost,
 * EXCLUSIVE requests and permits.
 */
final class MemoryScenario {

	static final String CHECK_INTERVAL = "znode.container.checkIntervalMs";

	static final String MAX_PER_MINUTE = "znode.container.maxPerMinute";

	static final int REAP_AFTER_MS = 30_000;

	/** Asynchronous grants queued on one key by {@link AsyncQueueFootprint}. */
	static final int ASYNC_QUEUE_GRANTS = 2_000;

	private MemoryScenario() {
	}

	/**
	 * Run the scenario.
	 * @param paths how many distinct paths to lock
	 * @param libraries {@code zk-lock}, {@code spring-integration}
	 * @param workDir the work directory (temporary files of the child)
	 * @return the child's {@code MEMORY} and {@code ZNODES} lines
	 * @throws Exception if the server or a child fails
	 */
	static List<String> run(int paths, List<String> libraries, Path workDir) throws Exception {
		List<String> lines = new ArrayList<>();
		for (String library : libraries) {
			System.out.printf("%n==== Memory and znodes: %,d paths, %s ====%n", paths, library);
			// Read by the server's container manager when it starts.
			System.setProperty(CHECK_INTERVAL, Integer.toString(REAP_AFTER_MS));
			System.setProperty(MAX_PER_MINUTE, "6000000");
			try (TestingServer server = ZooKeeperServers.startInProcess()) {
				lines.addAll(runChild(workDir, library, KeyCacheFootprint.class, server.getConnectString(), library,
						Integer.toString(paths), "/memory-" + library));
			}
			finally {
				System.clearProperty(CHECK_INTERVAL);
				System.clearProperty(MAX_PER_MINUTE);
			}
		}
		int keptKeys = paths + paths / 10;
		System.out.printf("%n==== Kept locks: %,d keys, at most %,d kept ====%n", keptKeys, paths);
		try (TestingServer server = ZooKeeperServers.startInProcess()) {
			lines.addAll(runChild(workDir, "kept-keys", KeptKeysFootprint.class, server.getConnectString(),
					Integer.toString(keptKeys), Integer.toString(paths), "/kept"));
		}
		System.out.printf("%n==== Queued asynchronous grants: %,d on one key ====%n", ASYNC_QUEUE_GRANTS);
		for (String kind : List.of("exclusive", "permit")) {
			try (TestingServer server = ZooKeeperServers.startInProcess()) {
				lines.addAll(runChild(workDir, "async-queue-" + kind, AsyncQueueFootprint.class,
						server.getConnectString(), Integer.toString(ASYNC_QUEUE_GRANTS), "/queued", kind));
			}
		}
		return lines;
	}

	private static List<String> runChild(Path workDir, String name, Class<?> main, String... args)
			throws IOException, InterruptedException {
		String java = ProcessHandle.current().info().command().orElse("java");
		List<String> command = new ArrayList<>(List.of(java, "-Xms256m", "-Xmx256m", "-XX:+UseSerialGC",
				"-XX:-UsePerfData", "-Djava.io.tmpdir=" + workDir.resolve("tmp").toAbsolutePath(), "-cp",
				System.getProperty("java.class.path"), main.getName()));
		command.addAll(List.of(args));
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		List<String> results = new ArrayList<>();
		try (BufferedReader output = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = output.readLine()) != null) {
				System.out.println("[memory " + name + "] " + line);
				if (line.startsWith("MEMORY ") || line.startsWith("ZNODES ") || line.startsWith("ASYNC_QUEUE ")
						|| line.startsWith("KEPT_KEYS ")) {
					results.add(line);
				}
			}
		}
		finally {
			if (!process.waitFor(5, TimeUnit.MINUTES)) {
				process.destroyForcibly();
			}
		}
		if (process.exitValue() != 0) {
			throw new IllegalStateException("Memory scenario " + name + " failed, exit code " + process.exitValue());
		}
		return results;
	}

}
