package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Host side of the interleaved runs: starts {@link InterleavedFork} in one fresh JVM per fork, one
 * after the other, and collects its batches as {@link Samples}, keyed {@code <fork>/<round>} so that
 * the members of a group pair up round by round.
 */
final class InterleavedRuns {

	private InterleavedRuns() {
	}

	static void run(BenchMain.Settings settings, Map<String, Samples> samples) throws IOException, InterruptedException {
		for (int fork = 1; fork <= settings.forks; fork++) {
			List<String> command = new ArrayList<>();
			command.add(ProcessHandle.current().info().command().orElse("java"));
			command.addAll(settings.forkJvmArgs());
			command.addAll(List.of("-cp", System.getProperty("java.class.path"), InterleavedFork.class.getName(),
					Integer.toString(fork), Integer.toString(settings.rounds), Integer.toString(settings.cycles()),
					Integer.toString(settings.contendedRounds()), Long.toString(settings.batchMillis()),
					Long.toString(settings.warmupMillis()), settings.include));
			System.out.printf("%n==== Interleaved fork %d of %d (load average %s) ====%n", fork, settings.forks,
					BenchMain.loadAverage());
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			try (BufferedReader output = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				String line;
				while ((line = output.readLine()) != null) {
					if (line.startsWith("SAMPLE ")) {
						add(samples, line);
					}
					else {
						System.out.println(line);
					}
				}
			}
			int exit = process.waitFor();
			if (exit != 0) {
				throw new IllegalStateException("Interleaved fork " + fork + " failed with exit code " + exit);
			}
		}
	}

	private static void add(Map<String, Samples> all, String line) {
		Map<String, String> fields = new HashMap<>();
		for (String field : line.substring("SAMPLE ".length()).split(" ")) {
			int equals = field.indexOf('=');
			fields.put(field.substring(0, equals), field.substring(equals + 1));
		}
		String member = fields.get("member");
		int threads = Integer.parseInt(fields.get("threads"));
		double seconds = Long.parseLong(fields.get("nanos")) / 1e9;
		double[] perThread = Arrays.stream(fields.get("per_thread").split(",")).mapToDouble(Double::parseDouble).toArray();
		long operations = Long.parseLong(fields.get("ops"));
		long cpuNanos = Long.parseLong(fields.get("cpu_nanos"));
		long allocated = Long.parseLong(fields.get("allocated_bytes"));
		all.computeIfAbsent(member, (name) -> new Samples(name, threads))
			.add(new Samples.Sample(fields.get("fork") + "/" + fields.get("round"), operations / seconds, perThread,
					(cpuNanos < 0) ? Double.NaN : cpuNanos / 1000.0 / operations,
					(allocated < 0) ? Double.NaN : (double) allocated / operations));
	}

}
