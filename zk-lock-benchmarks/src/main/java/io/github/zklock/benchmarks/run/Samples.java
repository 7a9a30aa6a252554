package io.github.zklock.benchmarks.run;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;

/**
 * The measured samples of one benchmark: one per interleaved batch or per JMH measurement
 * iteration, each with its throughput and each thread's grant count. A sample's key (fork and round,
 * or JMH round and iteration) pairs it with the sample of another benchmark measured next to it.
 */
final class Samples {

	/**
	 * One batch or iteration.
	 * @param key pairs samples measured next to each other
	 * @param opsPerSecond lock cycles per second, all threads
	 * @param grantsPerThread lock cycles of each thread
	 * @param cpuMicrosPerOp CPU time of the calling thread per cycle, NaN if not measured
	 * @param bytesPerOp bytes allocated by the calling thread per cycle, NaN if not measured
	 */
	record Sample(String key, double opsPerSecond, double[] grantsPerThread, double cpuMicrosPerOp,
			double bytesPerOp) {

		double fairness() {
			double min = Double.MAX_VALUE;
			double max = 0;
			for (double grants : this.grantsPerThread) {
				min = Math.min(min, grants);
				max = Math.max(max, grants);
			}
			return (max > 0) ? min / max : 0;
		}

	}

	private final String name;

	private final int threads;

	private final Map<String, Sample> byKey = new LinkedHashMap<>();

	Samples(String name, int threads) {
		this.name = name;
		this.threads = threads;
	}

	/**
	 * Add the measurement iterations of a JMH run; keys are {@code jmh<round>/<fork>/<iteration>}.
	 */
	static void addJmh(Map<String, Samples> all, int round, RunResult run) {
		String benchmark = run.getParams().getBenchmark();
		String name = benchmark.substring(benchmark.lastIndexOf('.') + 1);
		double seconds = run.getParams().getMeasurement().getTime().convertTo(TimeUnit.MILLISECONDS) / 1000.0;
		Samples samples = all.computeIfAbsent(name, (key) -> new Samples(name, run.getParams().getThreads()));
		int fork = 0;
		for (BenchmarkResult forkResult : run.getBenchmarkResults()) {
			fork++;
			int iteration = 0;
			for (IterationResult result : forkResult.getIterationResults()) {
				iteration++;
				double[] grants = result.getRawPrimaryResults()
					.stream()
					.mapToDouble((perThread) -> perThread.getScore() * seconds)
					.toArray();
				samples.add(new Sample("jmh" + round + "/" + fork + "/" + iteration,
						result.getPrimaryResult().getScore(), grants, Double.NaN, Double.NaN));
			}
		}
	}

	void add(Sample sample) {
		this.byKey.put(sample.key(), sample);
	}

	String name() {
		return this.name;
	}

	int threads() {
		return this.threads;
	}

	Map<String, Sample> byKey() {
		return this.byKey;
	}

	List<Double> cpuMicros() {
		return this.byKey.values().stream().map(Sample::cpuMicrosPerOp).filter((value) -> !value.isNaN()).toList();
	}

	List<Double> bytes() {
		return this.byKey.values().stream().map(Sample::bytesPerOp).filter((value) -> !value.isNaN()).toList();
	}

	List<Double> throughputs() {
		return this.byKey.values().stream().map(Sample::opsPerSecond).toList();
	}

	/** Median over samples of (fewest grants of one thread / most grants of one thread). */
	double fairness() {
		return Stats.median(this.byKey.values().stream().map(Sample::fairness).toList());
	}

	/** Median over samples of the fewest and the most grants one thread got. */
	double[] grantRange() {
		List<Double> fewest = new ArrayList<>();
		List<Double> most = new ArrayList<>();
		for (Sample sample : this.byKey.values()) {
			double min = Double.MAX_VALUE;
			double max = 0;
			for (double grants : sample.grantsPerThread()) {
				min = Math.min(min, grants);
				max = Math.max(max, grants);
			}
			fewest.add(min);
			most.add(max);
		}
		return new double[] { Stats.median(fewest), Stats.median(most) };
	}

}
