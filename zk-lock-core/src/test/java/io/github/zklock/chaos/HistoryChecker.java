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
 * <p>Two independent kinds of evidence:
 * <ol>
 * <li><b>Time.</b> Grants are put in token order. For every pair i &lt; j (by token), grant i must
 * have ended before grant j started ({@code end_i <= start_j}, both from the one system clock of
 * the machine, millisecond precision). If it did not, i and j overlapped (or their order contradicts
 * their tokens), which is allowed only if i's holder had been told of the loss by the time j
 * started ({@code 0 < told_i <= start_j}). The logged interval lies inside the real one (start
 * after the grant returned, end before release was called), so a logged overlap is a real one.</li>
 * <li><b>The counter.</b> It holds {@code token,value} and is written only by a compare-and-set that
 * also requires the stored token to be lower than the writer's. A write took effect iff its token
 * was later read from the counter (or is the final content). The writes that took effect, in token
 * order, must form one chain: the k-th read value k and the previous writer's token, the final
 * value is their number, and every write confirmed as WROTE is in the chain (no lost update).
 * A grant that read a higher token than its own overlapped a later grant, and a grant whose
 * compare-and-set failed overlapped another writer: both must have been told.</li>
 * </ol>
 * Token uniqueness (no token granted twice) is checked as well.
 */
final class HistoryChecker {

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
	 * @param violations what broke the rules, empty if nothing did
	 */
	record Result(int grants, int applied, int told, int toldOverlaps, int notWritten, int noToken,
			List<String> violations) {

		String summary() {
			return "grants=" + this.grants + " applied_writes=" + this.applied + " told=" + this.told + " told_overlaps="
					+ this.toldOverlaps + " not_written=" + this.notWritten + " no_token=" + this.noToken + " violations="
					+ this.violations.size();
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
		List<GrantRecord> byToken = records.stream()
			.filter((record) -> record.token() > 0)
			.sorted(Comparator.comparingLong(GrantRecord::token))
			.toList();
		checkTokensUnique(byToken, violations);
		int toldOverlaps = checkIntervals(byToken, violations);
		int applied = checkCounterChain(byToken, finalToken, finalValue, violations);
		checkOverlapEvidenceIsTold(byToken, violations);
		int told = (int) records.stream().filter(GrantRecord::told).count();
		int notWritten = (int) records.stream().filter((record) -> record.outcome() != Outcome.WROTE).count();
		int noToken = (int) records.stream().filter((record) -> record.outcome() == Outcome.NO_TOKEN).count();
		return new Result(records.size(), applied, told, toldOverlaps, notWritten, noToken, List.copyOf(violations));
	}

	private static void checkTokensUnique(List<GrantRecord> byToken, List<String> violations) {
		for (int i = 1; i < byToken.size(); i++) {
			if (byToken.get(i).token() == byToken.get(i - 1).token()) {
				violations.add("token " + byToken.get(i).token() + " granted twice: " + byToken.get(i - 1) + " and "
						+ byToken.get(i));
			}
		}
	}

	/** Pairs i &lt; j by token whose logged intervals are not ordered like their tokens. */
	private static int checkIntervals(List<GrantRecord> byToken, List<String> violations) {
		int toldOverlaps = 0;
		for (int j = 1; j < byToken.size(); j++) {
			GrantRecord later = byToken.get(j);
			for (int i = 0; i < j; i++) {
				GrantRecord earlier = byToken.get(i);
				if (earlier.endMs() <= later.startMs()) {
					continue;
				}
				String what = (earlier.startMs() >= later.endMs()) ? "was granted after higher token " + later
						: "still held when " + later + " was granted";
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

	/** The writes that took effect form one chain without a lost update. */
	private static int checkCounterChain(List<GrantRecord> byToken, long finalToken, long finalValue,
			List<String> violations) {
		Set<Long> seenInCounter = new HashSet<>();
		for (GrantRecord record : byToken) {
			if (record.readToken() > 0) {
				seenInCounter.add(record.readToken());
			}
		}
		if (finalToken > 0) {
			seenInCounter.add(finalToken);
		}
		Map<Long, GrantRecord> writers = new HashMap<>();
		for (GrantRecord record : byToken) {
			if (record.outcome().attempted()) {
				writers.put(record.token(), record);
			}
			if (record.outcome() == Outcome.WROTE && !seenInCounter.contains(record.token())) {
				violations.add("lost update: the write of " + record + " was overwritten without being read");
			}
		}
		List<GrantRecord> chain = new ArrayList<>();
		for (long token : seenInCounter) {
			GrantRecord writer = writers.get(token);
			if (writer == null) {
				violations.add("the counter carried token " + token + " that no grant tried to write");
			}
			else {
				chain.add(writer);
			}
		}
		chain.sort(Comparator.comparingLong(GrantRecord::token));
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
					violations.add("write zxid order differs from token order at " + write);
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
	private static void checkOverlapEvidenceIsTold(List<GrantRecord> byToken, List<String> violations) {
		for (GrantRecord record : byToken) {
			if (record.told()) {
				continue;
			}
			if (record.readToken() > record.token()) {
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
