package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The campaign's report: per fault kind how many were injected and how long the fenced counter's
 * key (the one key every instance takes) was unavailable after each, against the session timeout;
 * per workload the operations (the leader job's: the committed runs its checker examined) and the
 * checker's violations; and the closing {@code CAMPAIGN} line, which a script can read, its
 * operations the sum of the workloads'.
 *
 * <p>Unavailability of a fault: the longest stretch, from its injection until the next fault's, in
 * which no operation on the key was answered with success (the first stretch starts at the
 * injection).
 */
final class Report {

	private Report() {
	}

	/**
	 * The longest stretch without a success on the key after each fault.
	 * @param faults the faults, in order
	 * @param operations the history
	 * @param endNanos the campaign's end
	 * @return per fault, in order, the unavailability
	 */
	static List<Duration> unavailability(List<Nemesis.Fault> faults, List<History.Operation> operations,
			long endNanos) {
		long[] successes = operations.stream()
			.filter((operation) -> operation.workload() == Workload.FENCED_COUNTER
					&& operation.outcome() == History.Outcome.OK)
			.mapToLong(History.Operation::completedNanos)
			.sorted()
			.toArray();
		List<Duration> gaps = new ArrayList<>();
		for (int i = 0; i < faults.size(); i++) {
			long from = faults.get(i).startNanos();
			long to = (i + 1 < faults.size()) ? faults.get(i + 1).startNanos() : endNanos;
			long previous = from;
			long longest = 0;
			for (long success : successes) {
				if (success <= from) {
					continue;
				}
				if (success > to) {
					break;
				}
				longest = Math.max(longest, success - previous);
				previous = success;
			}
			longest = Math.max(longest, to - previous);
			gaps.add(Duration.ofNanos(longest));
		}
		return gaps;
	}

	/**
	 * The report's lines.
	 * @param settings seed, minutes, servers, applications, session timeout
	 * @param faults the faults
	 * @param unavailability per fault, as {@link #unavailability} gives it
	 * @param results per workload
	 * @param skippedKinds kinds this machine could not inject, with the reason
	 */
	static List<String> lines(Campaign.Settings settings, List<Nemesis.Fault> faults, List<Duration> unavailability,
			List<Checks.Result> results, Map<Nemesis.Kind, String> skippedKinds) {
		List<String> lines = new ArrayList<>();
		long sessionMs = settings.sessionTimeout().toMillis();
		Map<Nemesis.Kind, List<Long>> byKind = new EnumMap<>(Nemesis.Kind.class);
		for (int i = 0; i < faults.size(); i++) {
			byKind.computeIfAbsent(faults.get(i).kind(), (kind) -> new ArrayList<>()).add(unavailability.get(i).toMillis());
		}
		long unrecovered = faults.stream().filter((fault) -> fault.recoveredNanos() < 0).count();
		for (Map.Entry<Nemesis.Kind, List<Long>> entry : byKind.entrySet()) {
			List<Long> sorted = entry.getValue().stream().sorted().toList();
			lines.add(String.format(Locale.ROOT,
					"FAULTS kind=%s injected=%d unavailable_p50_ms=%d unavailable_p99_ms=%d unavailable_max_ms=%d "
							+ "p50_vs_session_timeout=%.2f p99_vs_session_timeout=%.2f",
					entry.getKey().label(), sorted.size(), percentile(sorted, 50), percentile(sorted, 99),
					sorted.get(sorted.size() - 1), percentile(sorted, 50) / (double) sessionMs,
					percentile(sorted, 99) / (double) sessionMs));
		}
		skippedKinds.forEach((kind, reason) -> lines.add("FAULTS kind=" + kind.label() + " injected=0 skipped=\"" + reason + "\""));
		long violations = 0;
		long unfencedViolations = 0;
		long operations = 0;
		for (Checks.Result result : results) {
			operations += result.operations();
			if (result.workload().fenced()) {
				violations += result.violations().size();
			}
			else {
				unfencedViolations += result.violations().size();
			}
			String reasons = result.reasons().isEmpty() ? "none"
					: result.reasons()
						.entrySet()
						.stream()
						.map((entry) -> entry.getKey() + ":" + entry.getValue())
						.collect(Collectors.joining(","));
			lines.add(String.format(Locale.ROOT,
					"WORKLOAD name=%s fenced=%s operations=%d ok=%d failed=%d unknown=%d violations=%d not_ok=%s",
					result.workload().label(), result.workload().fenced(), result.operations(), result.ok(),
					result.failed(), result.unknown(), result.violations().size(), reasons));
			result.violations().stream().limit(20).forEach((violation) -> lines.add("  VIOLATION " + result.workload().label() + ": " + violation));
			if (result.violations().size() > 20) {
				lines.add("  ... " + (result.violations().size() - 20) + " more");
			}
		}
		String kinds = byKind.keySet().stream().map(Nemesis.Kind::label).collect(Collectors.joining(","));
		lines.add(String.format(Locale.ROOT,
				"CAMPAIGN seed=%d minutes=%.1f servers=%d applications=%d session_timeout_ms=%d faults=%d kinds=%d "
						+ "unrecovered=%d operations=%d violations=%d unfenced_violations=%d kind_list=%s kept_locks=%s",
				settings.seed(), settings.minutes(), settings.servers(), settings.applications(), sessionMs, faults.size(),
				byKind.size(), unrecovered, operations, violations, unfencedViolations, kinds,
				settings.keep() ? "on" : "off"));
		return lines;
	}

	static long percentile(List<Long> sorted, int percentile) {
		if (sorted.isEmpty()) {
			return 0;
		}
		int index = (int) Math.ceil(percentile / 100.0 * sorted.size()) - 1;
		return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
	}

}
