package io.github.zklock.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.zklock.chaos.GrantRecord.Outcome;

/**
 * Checks a merged grant history of one lock path and the final state of the counter it protects.
 *
 * <p>Grants are put in <em>grant order</em>: by token, and grants sharing a token (a chain of local
 * hand-offs on one znode of one worker, see DESIGN.md semantics 8) by the worker's grant number.
 * Two independent kinds of evidence:
 * <ol>
 * <li><b>Time.</b> For every pair i &lt; j (in grant order), grant i must have ended before grant j
 * started ({@code end_i <= start_j}, both from the one system clock of the machine, millisecond
 * precision). If it did not, i and j overlapped (or their order contradicts their tokens), which is
 * allowed only if i's holder had been told of the loss by the time j started
 * ({@code 0 < told_i <= start_j}). The logged interval lies inside the real one (start after the
 * grant returned, end before release was called), so a logged overlap is a real one.</li>
 * <li><b>The counter.</b> It holds {@code token,value} and is written only by a compare-and-set that
 * also requires the stored token not to be higher than the writer's (a store rejects only lower
 * tokens). A write is known by its token and the value it wrote; it took effect iff that pair was
 * later read from the counter (or is the final content). The writes that took effect, in grant
 * order, must form one chain: the k-th read value k and the previous writer's token, the final
 * value is their number, and every write confirmed as WROTE is in the chain (no lost update). A
 * grant that read the write of a grant after it (a higher token, or a later grant of its own
 * chain) overlapped that grant, and a grant whose compare-and-set failed overlapped another writer:
 * both must have been told.</li>
 * </ol>
 * Tokens are checked as well: a token is shared only by grants of one worker, and only the first
 * grant on a znode was made through ZooKeeper (the others were handed over locally); across
 * workers tokens are unique, so they strictly increase at every change of worker.
 */
final class HistoryChecker {

	/** Grant order: by token, then, within one worker's chain on one znode, by grant number. */
	static final Comparator<GrantRecord> GRANT_ORDER = Comparator.comparingLong(GrantRecord::token)
		.thenComparing(GrantRecord::client)
		.thenComparingLong(GrantRecord::seq);

	private HistoryChecker() {
	}

	/**
	 * The outcome of a check.
	 *
	 * @param grants all grants
	 * @param applied writes that took effect (the counter chain's length)
	 * @param told grants whose holders were told of a loss
	 * @param toldOverlaps overlapping pairs whose earlier holder had been told in time
	 * @param notWritten grants with another outcome than {@link Outcome#WROTE}
	 * @param noToken grants that were no longer held when their token was read
	 * @param localHandoffs grants handed over locally (riding the znode of the grant before them)
	 * @param violations what broke the rules, empty if nothing did
	 */
	record Result(int grants, int applied, int told, int toldOverlaps, int notWritten, int noToken, int localHandoffs,
			List<String> violations) {

		String summary() {
			return "grants=" + this.grants + " applied_writes=" + this.applied + " told=" + this.told + " told_overlaps="
					+ this.toldOverlaps + " not_written=" + this.notWritten + " no_token=" + this.noToken
					+ " local_handoffs=" + this.localHandoffs + " violations=" + this.violations.size();
		}

	}

	/** A write to the counter, known by the token and the value it wrote. */
	private record Write(long token, long value) {

		@Override
		public String toString() {
			return this.token + "/" + this.value;
		}

	}

	/**
	 * Check a history.
	 * @param records the grants of all clients, in any order
	 * @param finalToken the token stored in the counter at the end (0 if never written)
	 * @param finalValue the counter value at the end
	 * @return the result, with its violations
	 */
	static Result check(Collection<GrantRecord> records, long finalToken, long finalValue) {
		List<String> violations = new ArrayList<>();
		List<GrantRecord> inOrder = records.stream().filter((record) -> record.token() > 0).sorted(GRANT_ORDER).toList();
		checkTokens(inOrder, violations);
		int toldOverlaps = checkIntervals(inOrder, violations);
		Map<Write, GrantRecord> writers = writers(inOrder, violations);
		int applied = checkCounterChain(inOrder, writers, finalToken, finalValue, violations);
		checkOverlapEvidenceIsTold(inOrder, writers, violations);
		int told = (int) records.stream().filter(GrantRecord::told).count();
		int notWritten = (int) records.stream().filter((record) -> record.outcome() != Outcome.WROTE).count();
		int noToken = (int) records.stream().filter((record) -> record.outcome() == Outcome.NO_TOKEN).count();
		int localHandoffs = (int) records.stream().filter(GrantRecord::handoff).count();
		return new Result(records.size(), applied, told, toldOverlaps, notWritten, noToken, localHandoffs,
				List.copyOf(violations));
	}

	/**
	 * A token is the czxid of one lock znode, which serves one worker: grants sharing it must be
	 * of one worker, and only the first of them may have been made through ZooKeeper.
	 */
	private static void checkTokens(List<GrantRecord> inOrder, List<String> violations) {
		for (int i = 1; i < inOrder.size(); i++) {
			GrantRecord previous = inOrder.get(i - 1);
			GrantRecord record = inOrder.get(i);
			if (record.token() != previous.token()) {
				continue;
			}
			if (!record.client().equals(previous.client())) {
				violations.add(
						"token " + record.token() + " granted twice, to two workers: " + previous + " and " + record);
			}
			else if (!record.handoff()) {
				violations.add("token " + record.token() + " granted twice through ZooKeeper: " + previous + " and "
						+ record);
			}
		}
	}

	/** Pairs i &lt; j in grant order whose logged intervals are not ordered like the grants. */
	private static int checkIntervals(List<GrantRecord> inOrder, List<String> violations) {
		int toldOverlaps = 0;
		for (int j = 1; j < inOrder.size(); j++) {
			GrantRecord later = inOrder.get(j);
			for (int i = 0; i < j; i++) {
				GrantRecord earlier = inOrder.get(i);
				if (earlier.endMs() <= later.startMs()) {
					continue;
				}
				String what;
				if (earlier.startMs() >= later.endMs()) {
					String whom = (later.token() > earlier.token()) ? "higher token " : "the later grant ";
					what = "was granted after " + whom + later;
				}
				else {
					what = "still held when " + later + " was granted";
				}
				if (!earlier.told()) {
					violations.add("untold overlap: " + earlier + " " + what);
				}
				else if (earlier.toldMs() > later.startMs()) {
					violations.add("overlap told too late: " + earlier + " " + what);
				}
				else {
					toldOverlaps++;
				}
			}
		}
		return toldOverlaps;
	}

	/**
	 * The grants that sent a write, by the write they sent. Two grants of one chain may have sent
	 * the same write (both read the same value, so at most one can have succeeded): the one known
	 * to have written is kept; if both say they wrote, one write was lost.
	 */
	private static Map<Write, GrantRecord> writers(List<GrantRecord> inOrder, List<String> violations) {
		Map<Write, GrantRecord> writers = new HashMap<>();
		for (GrantRecord record : inOrder) {
			if (record.outcome().attempted()) {
				Write write = new Write(record.token(), record.readValue() + 1);
				GrantRecord other = writers.get(write);
				if (other != null && other.outcome() == Outcome.WROTE && record.outcome() == Outcome.WROTE) {
					violations.add("lost update: " + other + " and " + record + " both wrote " + write);
				}
				if (other == null || (record.outcome() == Outcome.WROTE && other.outcome() != Outcome.WROTE)) {
					writers.put(write, record);
				}
			}
		}
		return writers;
	}

	/** The writes that took effect form one chain without a lost update. */
	private static int checkCounterChain(List<GrantRecord> inOrder, Map<Write, GrantRecord> writers, long finalToken,
			long finalValue, List<String> violations) {
		Set<Write> seenInCounter = new HashSet<>();
		for (GrantRecord record : inOrder) {
			if (record.readToken() > 0) {
				seenInCounter.add(new Write(record.readToken(), record.readValue()));
			}
		}
		if (finalToken > 0) {
			seenInCounter.add(new Write(finalToken, finalValue));
		}
		for (GrantRecord record : inOrder) {
			if (record.outcome() == Outcome.WROTE
					&& !seenInCounter.contains(new Write(record.token(), record.readValue() + 1))) {
				violations.add("lost update: the write of " + record + " was overwritten without being read");
			}
		}
		List<GrantRecord> chain = new ArrayList<>();
		for (Write write : seenInCounter) {
			GrantRecord writer = writers.get(write);
			if (writer == null) {
				violations.add("the counter carried " + write + " (token/value) that no grant tried to write");
			}
			else {
				chain.add(writer);
			}
		}
		chain.sort(Comparator.comparingLong(GrantRecord::token).thenComparingLong(GrantRecord::readValue));
		long previousToken = 0;
		long previousWriteZxid = 0;
		for (int k = 0; k < chain.size(); k++) {
			GrantRecord write = chain.get(k);
			if (write.readToken() != previousToken || write.readValue() != k) {
				violations.add("broken counter chain at write " + k + ": " + write + " read " + write.readToken() + "/"
						+ write.readValue() + ", expected " + previousToken + "/" + k);
			}
			if (write.outcome() == Outcome.WROTE) {
				if (write.writeMzxid() <= previousWriteZxid) {
					violations.add("write zxid order differs from grant order at " + write);
				}
				previousWriteZxid = write.writeMzxid();
			}
			previousToken = write.token();
		}
		if (finalValue != chain.size() || finalToken != previousToken) {
			violations.add("counter ends at " + finalToken + "/" + finalValue + " but " + chain.size()
					+ " writes took effect, the last with token " + previousToken);
		}
		return chain.size();
	}

	/** Evidence of an overlap from the counter: the grant must have been told. */
	private static void checkOverlapEvidenceIsTold(List<GrantRecord> inOrder, Map<Write, GrantRecord> writers,
			List<String> violations) {
		Map<GrantRecord, Integer> positions = new HashMap<>();
		for (int i = 0; i < inOrder.size(); i++) {
			positions.put(inOrder.get(i), i);
		}
		for (int i = 0; i < inOrder.size(); i++) {
			GrantRecord record = inOrder.get(i);
			if (record.told()) {
				continue;
			}
			GrantRecord writer = (record.readToken() > 0)
					? writers.get(new Write(record.readToken(), record.readValue())) : null;
			if (record.readToken() > record.token() || (writer != null && positions.get(writer) > i)) {
				violations.add("untold overlap: " + record + " read the write of a later grant");
			}
			else if (record.outcome() == Outcome.CONFLICT) {
				violations.add("untold overlap: " + record + " saw the counter change between its read and write");
			}
		}
	}

	/**
	 * Violations of a run without injected faults: every grant must have written, none was told.
	 * @param records the grants
	 * @return what deviates, empty if nothing does
	 */
	static List<String> faultFreeDeviations(Collection<GrantRecord> records) {
		return records.stream()
			.filter((record) -> record.outcome() != Outcome.WROTE || record.told())
			.map((record) -> "without faults every grant writes and none is told: " + record)
			.toList();
	}

}
