package io.github.zklock.sample.demo;

import java.util.Arrays;
import java.util.Locale;

/**
 * The outcome of one load run, printed as the {@code RESULT} line of {@code ./demo.sh}.
 *
 * <p>{@code sold} and {@code remaining} come from the database, not from the HTTP answers:
 * {@code sold} is the quantity of the orders the run recorded and {@code remaining} the stock row
 * afterwards. From them:
 * <ul>
 * <li>{@code oversold}: how much more was sold than there was, {@code max(0, sold - initial)};
 * with one item per purchase, the orders beyond the initial stock;</li>
 * <li>{@code lost_updates}: the sales whose stock decrement was overwritten by a concurrent
 * purchase, {@code sold - (initial - remaining)}, the magnitude of
 * {@code initial - remaining - sold}; 0 when every write counted.</li>
 * </ul>
 *
 * @param mode {@code locked}, {@code locked-no-handoff} or {@code unlocked}
 * @param requests the purchase requests sent
 * @param initial the stock set before the run
 * @param sold the quantity of the orders the run recorded
 * @param remaining the stock left after the run
 * @param lockWaitP50Millis the median of the lock waits reported by the instances, in ms
 * @param lockWaitP99Millis the 99th percentile of the lock waits, in ms
 * @param throughput purchase requests answered per second of the run
 */
public record LoadReport(String mode, int requests, long initial, long sold, long remaining, double lockWaitP50Millis,
		double lockWaitP99Millis, double throughput) {

	/**
	 * Return how much more was sold than there was in stock.
	 * @return {@code max(0, sold - initial)}
	 */
	public long oversold() {
		return Math.max(0, this.sold - this.initial);
	}

	/**
	 * Return how many sales did not reduce the stock because a concurrent write overwrote theirs.
	 * @return {@code sold - (initial - remaining)}
	 */
	public long lostUpdates() {
		return this.sold - (this.initial - this.remaining);
	}

	/**
	 * Return whether the run kept the books straight: nothing oversold, no update lost.
	 * @return whether {@link #oversold()} and {@link #lostUpdates()} are both zero
	 */
	public boolean consistent() {
		return oversold() == 0 && lostUpdates() == 0;
	}

	/**
	 * Return the {@code RESULT} line, for example {@code RESULT mode=locked requests=1500 sold=500
	 * remaining=0 oversold=0 lost_updates=0 lock_wait_p50_ms=12.3 lock_wait_p99_ms=40.1
	 * throughput_rps=150.2}.
	 * @return the line, without a line separator
	 */
	public String toResultLine() {
		return String.format(Locale.ROOT,
				"RESULT mode=%s requests=%d sold=%d remaining=%d oversold=%d lost_updates=%d "
						+ "lock_wait_p50_ms=%.1f lock_wait_p99_ms=%.1f throughput_rps=%.1f",
				this.mode, this.requests, this.sold, this.remaining, oversold(), lostUpdates(), this.lockWaitP50Millis,
				this.lockWaitP99Millis, this.throughput);
	}

	/**
	 * Return a percentile of samples by the nearest-rank method: the smallest sample that at least
	 * {@code percentile} percent of the samples are less than or equal to.
	 * @param samples the samples, in any order (not changed)
	 * @param percentile the percentile, above 0 and at most 100
	 * @return the percentile, or 0 when there are no samples
	 */
	public static double percentile(double[] samples, double percentile) {
		if (percentile <= 0 || percentile > 100) {
			throw new IllegalArgumentException("percentile must be above 0 and at most 100, was " + percentile);
		}
		if (samples.length == 0) {
			return 0;
		}
		double[] sorted = samples.clone();
		Arrays.sort(sorted);
		int rank = (int) Math.ceil(percentile / 100 * sorted.length);
		return sorted[Math.max(rank, 1) - 1];
	}

}
