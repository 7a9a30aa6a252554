package io.github.zklock.benchmarks.run;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns the samples into the tables of {@code BENCHMARKS.md} (Markdown) and the {@code RATIO} lines.
 * A ratio is ours ÷ baseline in operations per second, so 1.00 means "as fast". It is taken from the
 * interleaved runs: for each round the ratio of the two batches of that round (measured seconds
 * apart, same JVM, same server), then the median over all rounds of all forks; the spread is the
 * 25th to 75th percentile of those per-round ratios. The JMH column, when JMH ran, is the ratio of
 * the two benchmarks' medians, each measured in forks of its own, minutes apart.
 */
final class Report {

	/** A ratio to report: ours ÷ baseline, named. */
	record RatioSpec(String name, String ours, String baseline) {
	}

	/** A computed ratio. */
	record Ratio(RatioSpec spec, double value, double p25, double p75, int pairs, double jmh) {
	}

	static final List<RatioSpec> RATIOS = List.of(
			new RatioSpec("annotated_vs_raw_mutex", "annotatedMutex", "rawMutex"),
			new RatioSpec("template_vs_raw_mutex", "templateMutex", "rawMutex"),
			new RatioSpec("cold_key_vs_raw_mutex", "templateColdKey", "rawMutexColdKey"),
			new RatioSpec("annotated_fast_path_vs_raw_mutex", "annotatedMutexFastPath", "rawMutex"),
			new RatioSpec("annotated_read_vs_raw_read", "annotatedRead", "rawRead"),
			new RatioSpec("template_read_vs_raw_read", "templateRead", "rawRead"),
			new RatioSpec("annotated_write_vs_raw_write", "annotatedWrite", "rawWrite"),
			new RatioSpec("template_write_vs_raw_write", "templateWrite", "rawWrite"),
			new RatioSpec("annotated_nonreentrant_vs_raw_semaphore_mutex", "annotatedNonReentrant", "rawSemaphoreMutex"),
			new RatioSpec("template_nonreentrant_vs_raw_semaphore_mutex", "templateNonReentrant", "rawSemaphoreMutex"),
			new RatioSpec("annotated_multi_vs_raw_multi_lock", "annotatedMulti", "rawMultiLock"),
			new RatioSpec("template_multi_vs_raw_multi_lock", "templateMulti", "rawMultiLock"),
			new RatioSpec("annotated_permit_vs_raw_semaphore", "annotatedPermit", "rawSemaphore"),
			new RatioSpec("template_permit_vs_raw_semaphore", "templatePermit", "rawSemaphore"),
			new RatioSpec("template_vs_spring_integration", "templateMutex", "springIntegration"),
			new RatioSpec("annotated_vs_spring_integration", "annotatedMutex", "springIntegration"),
			new RatioSpec("template_vs_lock4j", "templateMutex", "lock4j"),
			new RatioSpec("contended8_vs_raw_mutex", "templateOnePath", "rawMutexOnePath"),
			new RatioSpec("contended8_vs_spring_integration", "templateOnePath", "springIntegrationOnePath"),
			new RatioSpec("contended8_vs_lock4j", "templateOnePath", "lock4jOnePath"),
			new RatioSpec("raw_per_thread_vs_shared_mutex_contended8", "rawMutexPerThreadOnePath", "rawMutexOnePath"),
			new RatioSpec("distinct8_vs_raw_mutex", "templateDistinctPaths", "rawMutexDistinctPaths"),
			new RatioSpec("raw_mutex_vs_zookeeper_floor", "rawMutex", "zooKeeperFloor"),
			new RatioSpec("template_async_vs_template_sync", "templateAsync", "templateMutex"),
			new RatioSpec("template_async_read_vs_template_sync_read", "templateAsyncRead", "templateRead"),
			new RatioSpec("annotated_async_vs_annotated_sync", "annotatedAsync", "annotatedMutex"),
			new RatioSpec("template_async_permit_vs_template_sync_permit", "templateAsyncPermit", "templatePermit"),
			new RatioSpec("template_async_multi_vs_template_sync_multi", "templateAsyncMulti", "templateMulti"));

	private final Map<String, Samples> interleaved;

	private final Map<String, Samples> jmh;

	Report(Map<String, Samples> interleaved, Map<String, Samples> jmh) {
		this.interleaved = interleaved;
		this.jmh = jmh;
	}

	List<Ratio> ratios() {
		List<Ratio> ratios = new ArrayList<>();
		for (RatioSpec spec : RATIOS) {
			Samples ours = this.interleaved.get(spec.ours());
			Samples baseline = this.interleaved.get(spec.baseline());
			double jmhRatio = jmhRatio(spec);
			if (ours != null && baseline != null) {
				List<Double> perRound = new ArrayList<>();
				ours.byKey().forEach((key, sample) -> {
					Samples.Sample other = baseline.byKey().get(key);
					if (other != null) {
						perRound.add(sample.opsPerSecond() / other.opsPerSecond());
					}
				});
				ratios.add(new Ratio(spec, Stats.median(perRound), Stats.percentile(perRound, 25),
						Stats.percentile(perRound, 75), perRound.size(), jmhRatio));
			}
			else if (!Double.isNaN(jmhRatio)) {
				ratios.add(new Ratio(spec, jmhRatio, Double.NaN, Double.NaN, 0, jmhRatio));
			}
		}
		return ratios;
	}

	private double jmhRatio(RatioSpec spec) {
		Samples ours = this.jmh.get(spec.ours());
		Samples baseline = this.jmh.get(spec.baseline());
		if (ours == null || baseline == null) {
			return Double.NaN;
		}
		return Stats.median(ours.throughputs()) / Stats.median(baseline.throughputs());
	}

	String markdown() {
		StringBuilder out = new StringBuilder();
		if (!this.interleaved.isEmpty()) {
			out.append("Interleaved runs (ratios are taken from these):\n\n");
			throughputTable(out, this.interleaved, "rounds");
			callerCostTable(out);
		}
		out.append("\n| ratio (ours ÷ baseline, ops/s) | value | p25–p75 | rounds | JMH, separate forks |\n");
		out.append("|---|---:|---:|---:|---:|\n");
		for (Ratio ratio : ratios()) {
			out.append(String.format(Locale.ROOT, "| `%s` | %.3f | %s | %d | %s |%n", ratio.spec().name(),
					ratio.value(),
					Double.isNaN(ratio.p25()) ? "–" : String.format(Locale.ROOT, "%.3f–%.3f", ratio.p25(), ratio.p75()),
					ratio.pairs(), Double.isNaN(ratio.jmh()) ? "–" : String.format(Locale.ROOT, "%.3f", ratio.jmh())));
		}
		out.append("\n| 8 threads | source | total ops/s median | grants per thread per batch or iteration, fewest – most "
				+ "| fairness (fewest ÷ most) | process CPU µs per grant (client + in-process server) |\n");
		out.append("|---|---|---:|---:|---:|---:|\n");
		fairnessRows(out, this.interleaved, "interleaved");
		fairnessRows(out, this.jmh, "JMH");
		if (!this.jmh.isEmpty()) {
			out.append("\nJMH (each benchmark in forks of its own; iterations of all forks):\n\n");
			throughputTable(out, this.jmh, "iterations");
		}
		return out.toString();
	}

	private static void throughputTable(StringBuilder out, Map<String, Samples> samples, String unit) {
		out.append("| group | benchmark | what | threads | ops/s median | p25–p75 | min–max | " + unit + " |\n");
		out.append("|---|---|---|---:|---:|---:|---:|---:|\n");
		for (Catalogue.Member member : Catalogue.DESCRIPTIONS) {
			Samples s = samples.get(member.name());
			if (s == null) {
				continue;
			}
			List<Double> values = s.throughputs();
			out.append(String.format(Locale.ROOT, "| %s | `%s` | %s | %d | %.0f | %.0f–%.0f | %.0f–%.0f | %d |%n",
					member.group(), member.name(), member.description(), s.threads(), Stats.median(values),
					Stats.percentile(values, 25), Stats.percentile(values, 75), Stats.min(values), Stats.max(values),
					values.size()));
		}
	}

	/** CPU time and allocation of the calling thread per cycle, medians over rounds. */
	private void callerCostTable(StringBuilder out) {
		out.append("\n| benchmark | caller CPU µs per cycle (median, p25–p75) | caller allocation bytes per cycle | "
				+ "CPU added to the raw baseline, per round (median, p25 to p75) |\n");
		out.append("|---|---:|---:|---:|\n");
		for (Catalogue.Member member : Catalogue.DESCRIPTIONS) {
			Samples s = this.interleaved.get(member.name());
			if (s == null || s.threads() > 1 || s.cpuMicros().isEmpty()) {
				continue;
			}
			String added = "–";
			// The raw Curator recipe of the member's group.
			Catalogue.Member raw = Catalogue.DESCRIPTIONS.stream()
				.filter((other) -> other.group().equals(member.group()) && other.name().startsWith("raw"))
				.findFirst()
				.orElse(null);
			Samples baseline = (raw != null && !raw.name().equals(member.name())
					&& !member.name().equals("zooKeeperFloor")) ? this.interleaved.get(raw.name()) : null;
			if (member.name().contains("Async")) {
				// The caller only waits: the grant's thread acquires and releases, off this measurement.
				added = "– (the cycle runs on the grant's thread)";
			}
			else if (baseline != null) {
				// Paired by round: the machine's state changes from round to round, both members alike.
				List<Double> differences = new ArrayList<>();
				s.byKey().forEach((key, sample) -> {
					Samples.Sample other = baseline.byKey().get(key);
					if (other != null && !Double.isNaN(sample.cpuMicrosPerOp()) && !Double.isNaN(other.cpuMicrosPerOp())) {
						differences.add(sample.cpuMicrosPerOp() - other.cpuMicrosPerOp());
					}
				});
				if (!differences.isEmpty()) {
					added = String.format(Locale.ROOT, "%+.1f µs (%+.1f to %+.1f) vs `%s`", Stats.median(differences),
							Stats.percentile(differences, 25), Stats.percentile(differences, 75), baseline.name());
				}
			}
			out.append(String.format(Locale.ROOT, "| `%s` | %.1f (%.1f–%.1f) | %.0f | %s |%n", member.name(),
					Stats.median(s.cpuMicros()), Stats.percentile(s.cpuMicros(), 25), Stats.percentile(s.cpuMicros(), 75),
					Stats.median(s.bytes()), added));
		}
	}

	private static void fairnessRows(StringBuilder out, Map<String, Samples> samples, String source) {
		for (Catalogue.Member member : Catalogue.DESCRIPTIONS) {
			Samples s = samples.get(member.name());
			if (s == null || s.threads() < 2) {
				continue;
			}
			double[] range = s.grantRange();
			out.append(String.format(Locale.ROOT, "| `%s` | %s | %.0f | %.0f – %.0f | %.2f | %s |%n", member.name(),
					source, Stats.median(s.throughputs()), range[0], range[1], s.fairness(),
					s.cpuMicros().isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", Stats.median(s.cpuMicros()))));
		}
	}

	/**
	 * Tables of the memory scenario's {@code MEMORY} and {@code ZNODES} lines.
	 * @param lines the lines, in the child's order (MEMORY then ZNODES per library)
	 * @return Markdown
	 */
	static String memoryMarkdown(List<String> lines) {
		if (lines.isEmpty()) {
			return "";
		}
		StringBuilder out = new StringBuilder();
		out.append("| library | paths locked once | recipes cached | used heap growth over the run | heap freed when "
				+ "the registry is dropped | znodes below the root right after the run | after the reaper | seconds "
				+ "until reaped |\n");
		out.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
		Map<String, String> memory = null;
		for (String line : lines) {
			Map<String, String> fields = fields(line);
			if (line.startsWith("MEMORY ")) {
				memory = fields;
				continue;
			}
			if (memory == null) {
				continue;
			}
			long paths = Long.parseLong(memory.get("paths"));
			long retained = Long.parseLong(memory.get("retained_bytes"));
			long freed = Long.parseLong(memory.get("freed_on_drop_bytes"));
			out.append(String.format(Locale.ROOT,
					"| %s | %,d | %,d | %,d B (%,d B per path) | %,d B (%,d B per path) | %s | %s | %s |%n",
					memory.get("library"), paths, Long.parseLong(memory.get("cached")), retained, retained / paths, freed,
					freed / paths, fields.get("after_run"), fields.get("after_reaping"), fields.get("reap_seconds")));
			memory = null;
		}
		return out.toString();
	}

	private static Map<String, String> fields(String line) {
		Map<String, String> fields = new java.util.HashMap<>();
		for (String field : line.split(" ")) {
			int equals = field.indexOf('=');
			if (equals > 0) {
				fields.put(field.substring(0, equals), field.substring(equals + 1));
			}
		}
		return fields;
	}

	List<String> ratioLines() {
		return ratios().stream()
			.map((ratio) -> String.format(Locale.ROOT, "RATIO %s=%.2f", ratio.spec().name(), ratio.value()))
			.toList();
	}

}
