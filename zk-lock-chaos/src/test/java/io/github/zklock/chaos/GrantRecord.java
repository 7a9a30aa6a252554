package io.github.zklock.chaos;

/**
 * What one grant of the history run did, as logged by {@link LockWorker}, one line per grant.
 * A worker JVM may take the lock on several threads: its grants are numbered in the order they
 * were made, across its threads. Times are {@code System.currentTimeMillis()} of the worker JVM:
 * all workers run on one machine and read the same system clock, so times of different JVMs
 * compare at millisecond precision.
 *
 * @param client the worker (JVM) that was granted the lock
 * @param seq the grant's number within that worker, from 0, in the order of its grants (taken
 * under the lock, so that its threads' grants are numbered in the order they held it)
 * @param token the fencing token (czxid of the grant's lock znode), or -1 if it could not be read;
 * grants handed over locally share the token of the znode they ride on
 * @param startMs when {@code tryAcquire} had returned the grant
 * @param endMs when the grant's work was over, just before {@code release()} was called
 * @param toldMs when the holder was told that its lock was in doubt or lost (the first
 * {@code LockStateEvent} of the grant that was not HELD, or the first {@code isHeld()} that
 * answered false, whichever came first), or 0 if it was not told before {@code endMs}
 * @param readToken the token stored in the protected counter when the grant read it, -1 if it did
 * not read
 * @param readValue the counter value it read, -1 if it did not read
 * @param readMzxid the zxid of the counter version it read, -1 if it did not read
 * @param outcome what became of its write
 * @param writeMzxid the zxid of its write when the outcome is {@link Outcome#WROTE}, otherwise 0
 * @param handoff whether the grant was handed over locally by another thread of the same worker
 * ({@code RegistryGrant.isLocalHandoff()}), riding the znode of the grant before it
 */
record GrantRecord(String client, long seq, long token, long startMs, long endMs, long toldMs, long readToken,
		long readValue, long readMzxid, Outcome outcome, long writeMzxid, boolean handoff) {

	/** What became of the grant's conditional write of {@code token,value+1}. */
	enum Outcome {

		/** Written: the stored token was lower and the counter version unchanged since the read. */
		WROTE,

		/**
		 * Not written: the counter already carried a higher token (a store rejects only lower
		 * tokens than the highest it has seen: grants of one local chain share a token).
		 */
		FENCED,

		/** Not written: the counter changed between the read and the write. */
		CONFLICT,

		/** Sent, but no answer (connection lost): written or not, the history tells. */
		UNKNOWN,

		/** Not attempted: the lock was no longer held, or the counter could not be read. */
		SKIPPED,

		/** No token: the lock was lost before its token could be read. */
		NO_TOKEN;

		/** Whether a write was sent that may have reached the counter. */
		boolean attempted() {
			return this == WROTE || this == CONFLICT || this == UNKNOWN;
		}

	}

	boolean told() {
		return this.toldMs > 0;
	}

	String toLine() {
		return String.join(",", this.client, Long.toString(this.seq), Long.toString(this.token),
				Long.toString(this.startMs), Long.toString(this.endMs), Long.toString(this.toldMs),
				Long.toString(this.readToken), Long.toString(this.readValue), Long.toString(this.readMzxid),
				this.outcome.name(), Long.toString(this.writeMzxid), Boolean.toString(this.handoff));
	}

	static GrantRecord parse(String line) {
		String[] f = line.split(",");
		if (f.length != 12) {
			throw new IllegalArgumentException("Not a grant record: " + line);
		}
		return new GrantRecord(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
				Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]),
				Long.parseLong(f[8]), Outcome.valueOf(f[9]), Long.parseLong(f[10]), Boolean.parseBoolean(f[11]));
	}

	@Override
	public String toString() {
		return this.client + "#" + this.seq + "(token " + this.token + (this.handoff ? " local" : "") + ", "
				+ this.startMs + ".." + this.endMs + (told() ? ", told " + this.toldMs : "") + ", read " + this.readToken
				+ "/" + this.readValue + ", " + this.outcome + ")";
	}

}
