package io.github.zklock.benchmarks.run;

import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * A histogram of wait times in microseconds, log-linear (exact below 64 µs, then 32 buckets per
 * power of two: within about 3 %), small enough to travel as one line of text from a child JVM
 * ({@link #encode()}, {@link #decode(String)}) and to be merged with the other JVMs'. Not
 * thread-safe: one per thread, merged at the end.
 */
final class WaitHistogram {

	private static final int EXACT = 64;

	private static final int SUB_BUCKETS = 32;

	private final TreeMap<Integer, Long> counts = new TreeMap<>();

	private long total;

	void record(long micros) {
		this.counts.merge(index(Math.max(0, micros)), 1L, Long::sum);
		this.total++;
	}

	void add(WaitHistogram other) {
		other.counts.forEach((index, count) -> this.counts.merge(index, count, Long::sum));
		this.total += other.total;
	}

	long total() {
		return this.total;
	}

	/**
	 * Return the value below which the given share of the recorded waits lies.
	 * @param percent 0 to 100
	 * @return the middle of that bucket, in milliseconds; NaN when empty
	 */
	double percentileMillis(double percent) {
		if (this.total == 0) {
			return Double.NaN;
		}
		long rank = Math.max(1, (long) Math.ceil(percent / 100 * this.total));
		long seen = 0;
		for (Map.Entry<Integer, Long> bucket : this.counts.entrySet()) {
			seen += bucket.getValue();
			if (seen >= rank) {
				return middle(bucket.getKey()) / 1000.0;
			}
		}
		return middle(this.counts.lastKey()) / 1000.0;
	}

	/** Buckets as {@code index:count} pairs separated by {@code ;}, or {@code -} when empty. */
	String encode() {
		if (this.counts.isEmpty()) {
			return "-";
		}
		StringJoiner joiner = new StringJoiner(";");
		this.counts.forEach((index, count) -> joiner.add(index + ":" + count));
		return joiner.toString();
	}

	static WaitHistogram decode(String encoded) {
		WaitHistogram histogram = new WaitHistogram();
		if (!encoded.equals("-")) {
			for (String bucket : encoded.split(";")) {
				int colon = bucket.indexOf(':');
				long count = Long.parseLong(bucket.substring(colon + 1));
				histogram.counts.merge(Integer.parseInt(bucket.substring(0, colon)), count, Long::sum);
				histogram.total += count;
			}
		}
		return histogram;
	}

	static int index(long micros) {
		if (micros < EXACT) {
			return (int) micros;
		}
		int exponent = 63 - Long.numberOfLeadingZeros(micros);
		int top = (int) (micros >>> (exponent - 5));
		return EXACT + (exponent - 6) * SUB_BUCKETS + (top - SUB_BUCKETS);
	}

	private static double middle(int index) {
		if (index < EXACT) {
			return index;
		}
		int exponent = (index - EXACT) / SUB_BUCKETS + 6;
		int top = (index - EXACT) % SUB_BUCKETS + SUB_BUCKETS;
		long lower = (long) top << (exponent - 5);
		long width = 1L << (exponent - 5);
		return lower + width / 2.0;
	}

}
