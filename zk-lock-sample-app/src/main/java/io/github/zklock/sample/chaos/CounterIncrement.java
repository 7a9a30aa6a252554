package io.github.zklock.sample.chaos;

/**
 * A committed increment of a counter, as recorded in {@code chaos_counter_op} and answered by the
 * counter endpoints.
 *
 * @param op the caller's operation id
 * @param counter the counter's name
 * @param value the value this increment wrote
 * @param token the fencing token of the lock grant it ran under
 * @param instance the application instance that made it
 * @param via {@code fenced}, {@code unfenced} or {@code async} (see {@link Via#column()})
 * @param lostAfterCommit whether the asynchronous template reported the grant lost after the
 * transaction had committed (asynchronous increments only, with {@code zk.lock.interrupt-on-lost}
 * or a ceiling; the increment counts all the same)
 */
public record CounterIncrement(String op, String counter, long value, long token, String instance, String via,
		boolean lostAfterCommit) {

	/**
	 * Return this increment marked as reported lost after its commit.
	 * @return a copy with {@code lostAfterCommit} set
	 */
	CounterIncrement withLostAfterCommit() {
		return new CounterIncrement(this.op, this.counter, this.value, this.token, this.instance, this.via, true);
	}

}
