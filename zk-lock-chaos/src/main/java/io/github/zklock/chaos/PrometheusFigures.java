package io.github.zklock.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The campaign's figures from a Prometheus server that scraped its instances
 * ({@code /actuator/prometheus}, as {@code ./chaos.sh} sets it up): the file of scrape targets the
 * server watches, and per fault kind, over the time each fault of the kind lasted (from its start
 * until the system came back, and {@link #AFTER} more; at least {@link #SHORTEST_WINDOW}), the lock
 * wait's 99th percentile of the grants and the grants lost per minute, each from a PromQL query
 * against the run's data.
 */
final class PrometheusFigures {

	/** The shortest window a fault's figures are taken over: a few scrapes of 2 s. */
	static final Duration SHORTEST_WINDOW = Duration.ofSeconds(6);

	/** How long after a fault's recovery its window goes on: two scrapes of 2 s. */
	static final Duration AFTER = Duration.ofSeconds(4);

	/** The scrape job of the instances (chaos.sh's configuration). */
	static final String JOB = "zk-lock-sample-app";

	private PrometheusFigures() {
	}

	/**
	 * Write the scrape targets (Prometheus's file service discovery): the instances' addresses,
	 * each labelled with its name. Written whole, then moved in place.
	 * @param file the file the server watches
	 * @param applications the instances
	 * @throws IOException if it cannot be written
	 */
	static void writeTargets(Path file, Applications applications) throws IOException {
		StringJoiner entries = new StringJoiner(", ", "[", "]\n");
		for (int a = 0; a < applications.size(); a++) {
			String address = applications.baseUrl(a).substring("http://".length());
			entries.add("{\"targets\": [\"" + address + "\"], \"labels\": {\"instance_name\": \""
					+ applications.name(a) + "\"}}");
		}
		Path next = file.resolveSibling(file.getFileName() + ".new");
		Files.writeString(next, entries.toString());
		Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
	}

	/**
	 * The report's lines: one {@code PROMETHEUS} line (targets up, samples scraped over the run) and
	 * one {@code PROMETHEUS_FAULT} line per fault kind.
	 * @param api the server
	 * @param faults the faults, with their times on {@link System#nanoTime()}
	 * @param origin the campaign's origin on {@link System#nanoTime()}
	 * @param originWall the same instant on the wall clock
	 * @param end the end of the load on {@link System#nanoTime()}
	 * @return the lines
	 * @throws IOException if the server cannot be asked
	 */
	static List<String> lines(PrometheusApi api, List<Nemesis.Fault> faults, long origin, Instant originWall, long end)
			throws IOException {
		List<String> lines = new ArrayList<>();
		Instant endWall = wall(end, origin, originWall);
		int[] targets = api.targets(JOB);
		long runSeconds = Math.max(1, Duration.between(originWall, endWall).toSeconds());
		double scraped = api.value("sum(sum_over_time(scrape_samples_scraped{job=\"" + JOB + "\"}[" + runSeconds + "s]))",
				endWall);
		lines.add(String.format(Locale.ROOT, "PROMETHEUS targets_up=%d/%d samples_scraped=%.0f", targets[0], targets[1],
				Double.isNaN(scraped) ? 0 : scraped));
		Map<String, List<Nemesis.Fault>> byKind = new LinkedHashMap<>();
		for (Nemesis.Fault fault : faults) {
			byKind.computeIfAbsent(fault.kind().label(), (kind) -> new ArrayList<>()).add(fault);
		}
		for (Map.Entry<String, List<Nemesis.Fault>> kind : byKind.entrySet()) {
			double worstP99 = Double.NaN;
			double lost = 0;
			double seconds = 0;
			for (Nemesis.Fault fault : kind.getValue()) {
				// Until the system came back (a paused holder learns of its loss once resumed), and two
				// scrapes more.
				long over = Math.max(fault.healNanos(), fault.recoveredNanos());
				if (over <= fault.startNanos()) {
					over = end;
				}
				long windowSeconds = Math.max(SHORTEST_WINDOW.toSeconds(),
						(long) Math.ceil((over - fault.startNanos()) / 1e9) + AFTER.toSeconds());
				Instant at = wall(fault.startNanos(), origin, originWall).plusSeconds(windowSeconds);
				String window = "[" + windowSeconds + "s]";
				double p99 = api.value("histogram_quantile(0.99, sum by (le) (increase(zk_lock_acquire_seconds_bucket{job=\""
						+ JOB + "\", outcome=\"acquired\"}" + window + ")))", at);
				if (Double.isFinite(p99) && !(p99 <= worstP99)) {
					worstP99 = p99;
				}
				double lostHere = api.value("sum(increase(zk_lock_lost_total{job=\"" + JOB + "\"}" + window + "))", at);
				if (Double.isFinite(lostHere)) {
					lost += lostHere;
				}
				seconds += windowSeconds;
			}
			lines.add(String.format(Locale.ROOT,
					"PROMETHEUS_FAULT kind=%s faults=%d seconds=%.0f wait_p99_ms=%s lost=%.1f lost_per_min=%.2f",
					kind.getKey(), kind.getValue().size(), seconds,
					Double.isNaN(worstP99) ? "none" : String.format(Locale.ROOT, "%.1f", worstP99 * 1000), lost,
					lost / Math.max(1, seconds) * 60));
		}
		return lines;
	}

	private static Instant wall(long nanos, long origin, Instant originWall) {
		return originWall.plusNanos(nanos - origin);
	}

}
