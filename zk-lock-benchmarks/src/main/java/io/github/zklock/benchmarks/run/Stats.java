package io.github.zklock.benchmarks.run;

import java.util.List;

/** Order statistics of small samples (linear interpolation between ranks). */
final class Stats {

	private Stats() {
	}

	static double median(List<Double> values) {
		return percentile(values, 50);
	}

	static double percentile(List<Double> values, double percent) {
		if (values.isEmpty()) {
			return Double.NaN;
		}
		double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
		double rank = percent / 100 * (sorted.length - 1);
		int lower = (int) Math.floor(rank);
		int upper = (int) Math.ceil(rank);
		return sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - lower);
	}

	static double min(List<Double> values) {
		return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
	}

	static double max(List<Double> values) {
		return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
	}

}
