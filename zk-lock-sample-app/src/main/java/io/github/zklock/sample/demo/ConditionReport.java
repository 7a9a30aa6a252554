package io.github.zklock.sample.demo;

import java.util.Locale;

/**
 * The outcome of one producer/consumer run ({@link ProducerConsumerLoad}), printed as the
 * {@code CONDITION} line of {@code ./demo.sh}, for example {@code CONDITION items=200 produced=200
 * consumed=200 duplicates=0 lost=0 capacity=5 max_depth=5 producer_waits=31 consumer_waits=402
 * wake_p50_ms=9 wake_p99_ms=41 items_per_second=25.3}.
 *
 * <p>{@code produced} counts the items the queue accepted (201), {@code consumed} the items
 * taken (200); {@code duplicates} the takes of an item taken before, {@code lost} the items
 * accepted and never taken. {@code max_depth} is the most items the queue held after an accepted
 * item (the queue's answer), at most {@code capacity} unless a producer added to a full queue.
 * {@code producer_waits} and {@code consumer_waits} count the waits on the queue's condition (the
 * {@code X-Condition-Waits} answers), {@code wake_p50_ms} and {@code wake_p99_ms} are percentiles
 * of the age of the items taken by a consumer that had waited on the condition: the time from the
 * item's insert to its take, which covers the producer's signal, the consumer's wake-up and its
 * new grant of the lock (whole milliseconds of the instances' clocks, one host's in the demo).
 *
 * @param items the items the run was to move
 * @param produced the items accepted by the queue
 * @param consumed the items taken, duplicates included
 * @param duplicates the takes of an item taken before
 * @param lost the items accepted and never taken
 * @param capacity the queue's capacity, as the queue answered
 * @param maxDepth the most items the queue held after an accepted item
 * @param producerWaits the producers' waits on the condition
 * @param consumerWaits the consumers' waits on the condition
 * @param wakeP50Millis the median age of the items taken after a wait, in ms
 * @param wakeP99Millis the 99th percentile of that age, in ms
 * @param itemsPerSecond items taken per second of the run
 */
public record ConditionReport(int items, long produced, long consumed, long duplicates, long lost, int capacity,
		int maxDepth, long producerWaits, long consumerWaits, double wakeP50Millis, double wakeP99Millis,
		double itemsPerSecond) {

	/**
	 * Return whether every item went through once: all produced, all consumed, none twice, none
	 * lost, the queue never above its capacity.
	 * @return whether the run kept the queue's books straight
	 */
	public boolean consistent() {
		return this.produced == this.items && this.consumed == this.items && this.duplicates == 0 && this.lost == 0
				&& this.maxDepth <= this.capacity;
	}

	/**
	 * Return the {@code CONDITION} line.
	 * @return the line, without a line separator
	 */
	public String toLine() {
		return String.format(Locale.ROOT,
				"CONDITION items=%d produced=%d consumed=%d duplicates=%d lost=%d capacity=%d max_depth=%d "
						+ "producer_waits=%d consumer_waits=%d wake_p50_ms=%.0f wake_p99_ms=%.0f items_per_second=%.1f",
				this.items, this.produced, this.consumed, this.duplicates, this.lost, this.capacity, this.maxDepth,
				this.producerWaits, this.consumerWaits, this.wakeP50Millis, this.wakeP99Millis, this.itemsPerSecond);
	}

}
