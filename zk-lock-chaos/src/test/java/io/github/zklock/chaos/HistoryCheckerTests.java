package io.github.zklock.chaos;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.zklock.chaos.GrantRecord.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The history checker accepts clean histories, overlaps of told holders and equal tokens of one
 * worker's chain of local hand-offs, and rejects untold overlaps, late notice, tokens shared by two
 * workers or granted twice through ZooKeeper, lower tokens after higher ones (also within one
 * worker), and lost updates. Synthetic histories, no ZooKeeper.
 */
class HistoryCheckerTests {

	@Test
	void acceptsSequentialGrantsThatAllWrote() {
		List<GrantRecord> history = chain(5);
		HistoryChecker.Result result = HistoryChecker.check(history, 50, 5);
		assertThat(result.violations()).isEmpty();
		assertThat(result.applied()).isEqualTo(5);
		assertThat(HistoryChecker.faultFreeDeviations(history)).isEmpty();
	}

	@Test
	void parsesWhatItWrites() {
		GrantRecord record = new GrantRecord("w1", 3, 77, 1000, 1002, 1001, 70, 6, 71, Outcome.UNKNOWN, 0, true);
		assertThat(GrantRecord.parse(record.toLine())).isEqualTo(record);
		GrantRecord other = new GrantRecord("w2", 4, 78, 1003, 1004, 0, 77, 7, 80, Outcome.WROTE, 81, false);
		assertThat(GrantRecord.parse(other.toLine())).isEqualTo(other);
	}

	@Test
	void rejectsAnOverlapWhoseEarlierHolderWasNotTold() {
		List<GrantRecord> history = chain(3);
		// Grant 2 (token 20) ends after grant 3 (token 30) started; nobody told it.
		history.set(1, grant("a", 20, 200, 305, 0, 10, 1, Outcome.WROTE));
		HistoryChecker.Result result = HistoryChecker.check(history, 30, 3);
		assertThat(result.violations()).singleElement().asString().startsWith("untold overlap");
	}

	@Test
	void acceptsAnOverlapWhoseEarlierHolderWasToldFirst() {
		List<GrantRecord> history = chain(3);
		// Grant 2 lost its lock (told at 290), kept running until 305; grant 3 started at 300.
		history.set(1, grant("a", 20, 200, 305, 290, 10, 1, Outcome.WROTE));
		HistoryChecker.Result result = HistoryChecker.check(history, 30, 3);
		assertThat(result.violations()).isEmpty();
		assertThat(result.toldOverlaps()).isEqualTo(1);
		assertThat(HistoryChecker.faultFreeDeviations(history)).hasSize(1);
	}

	@Test
	void rejectsAnOverlapToldOnlyAfterTheNextGrant() {
		List<GrantRecord> history = chain(3);
		history.set(1, grant("a", 20, 200, 305, 302, 10, 1, Outcome.WROTE));
		HistoryChecker.Result result = HistoryChecker.check(history, 30, 3);
		assertThat(result.violations()).singleElement().asString().startsWith("overlap told too late");
	}

	@Test
	void rejectsALowerTokenGrantedAfterAHigherOne() {
		List<GrantRecord> history = new ArrayList<>();
		history.add(grant("a", 10, 500, 510, 0, 20, 1, Outcome.FENCED));
		history.add(grant("b", 20, 100, 110, 0, 0, 0, Outcome.WROTE));
		HistoryChecker.Result result = HistoryChecker.check(history, 20, 1);
		assertThat(result.violations()).anySatisfy(
				(violation) -> assertThat(violation).startsWith("untold overlap").contains("was granted after higher token"));
	}

	@Test
	void rejectsAReusedToken() {
		List<GrantRecord> history = chain(2);
		history.add(grant("c", 20, 300, 310, 0, 20, 2, Outcome.FENCED));
		HistoryChecker.Result result = HistoryChecker.check(history, 20, 2);
		assertThat(result.violations()).anySatisfy((violation) -> assertThat(violation).contains("granted twice"));
	}

	@Test
	void rejectsALostUpdate() {
		// Two grants read 0 and both "wrote" 1; only one write can be in the counter.
		List<GrantRecord> history = new ArrayList<>();
		history.add(grant("a", 10, 100, 110, 0, 0, 0, Outcome.WROTE));
		history.add(grant("b", 20, 200, 210, 0, 0, 0, Outcome.WROTE));
		HistoryChecker.Result result = HistoryChecker.check(history, 20, 1);
		assertThat(result.violations()).singleElement().asString().startsWith("lost update");
	}

	@Test
	void rejectsACounterThatDisagreesWithTheWrites() {
		HistoryChecker.Result result = HistoryChecker.check(chain(3), 30, 4);
		// A write is known by its token and value: nobody wrote 30/4, and the write of 30/3 vanished.
		assertThat(result.violations()).anySatisfy((violation) -> assertThat(violation).startsWith("counter ends at 30/4"))
			.anySatisfy((violation) -> assertThat(violation).contains("30/4 (token/value) that no grant tried to write"))
			.anySatisfy((violation) -> assertThat(violation).startsWith("lost update"));
	}

	@Test
	void resolvesAnUnknownWriteFromTheNextRead() {
		List<GrantRecord> history = new ArrayList<>();
		history.add(grant("a", 10, 100, 110, 105, 0, 0, Outcome.UNKNOWN));
		history.add(grant("b", 20, 200, 210, 0, 10, 1, Outcome.WROTE));
		HistoryChecker.Result result = HistoryChecker.check(history, 20, 2);
		assertThat(result.violations()).isEmpty();
		assertThat(result.applied()).isEqualTo(2);
	}

	@Test
	void rejectsAnUntoldGrantThatReadALaterWrite() {
		List<GrantRecord> history = chain(2);
		history.add(grant("c", 15, 400, 410, 0, 20, 2, Outcome.FENCED));
		HistoryChecker.Result result = HistoryChecker.check(history, 20, 2);
		assertThat(result.violations()).anySatisfy(
				(violation) -> assertThat(violation).startsWith("untold overlap").contains("read the write of a later grant"));
	}

	@Test
	void acceptsEqualTokensWithinOneWorkersChainOfLocalHandoffs() {
		List<GrantRecord> history = new ArrayList<>();
		// w0's znode (token 10) serves three grants, then w1's (20), then w0's next znode (30).
		history.add(record("w0", 0, 10, 100, 110, 0, 0, 0, Outcome.WROTE, false));
		history.add(record("w0", 1, 10, 110, 120, 0, 10, 1, Outcome.WROTE, true));
		history.add(record("w0", 2, 10, 121, 130, 0, 10, 2, Outcome.WROTE, true));
		history.add(record("w1", 0, 20, 140, 150, 0, 10, 3, Outcome.WROTE, false));
		history.add(record("w0", 3, 30, 160, 170, 0, 20, 4, Outcome.WROTE, false));
		HistoryChecker.Result result = HistoryChecker.check(history, 30, 5);
		assertThat(result.violations()).isEmpty();
		assertThat(result.applied()).isEqualTo(5);
		assertThat(result.localHandoffs()).isEqualTo(2);
		assertThat(HistoryChecker.faultFreeDeviations(history)).isEmpty();
	}

	@Test
	void rejectsAnEqualTokenGrantedToTwoWorkers() {
		List<GrantRecord> history = new ArrayList<>();
		history.add(record("w0", 0, 10, 100, 110, 0, 0, 0, Outcome.WROTE, false));
		history.add(record("w1", 0, 10, 120, 130, 0, 10, 1, Outcome.WROTE, true));
		HistoryChecker.Result result = HistoryChecker.check(history, 10, 2);
		assertThat(result.violations()).singleElement().asString().startsWith("token 10 granted twice, to two workers");
	}

	@Test
	void rejectsAnEqualTokenGrantedTwiceThroughZooKeeperWithinOneWorker() {
		List<GrantRecord> history = new ArrayList<>();
		history.add(record("w0", 0, 10, 100, 110, 0, 0, 0, Outcome.WROTE, false));
		history.add(record("w0", 1, 10, 120, 130, 0, 10, 1, Outcome.WROTE, false));
		HistoryChecker.Result result = HistoryChecker.check(history, 10, 2);
		assertThat(result.violations()).singleElement().asString().startsWith("token 10 granted twice through ZooKeeper");
	}

	@Test
	void rejectsALowerTokenGrantedAfterAHigherOneWithinOneWorker() {
		List<GrantRecord> history = new ArrayList<>();
		history.add(record("w0", 0, 20, 100, 110, 0, 0, 0, Outcome.WROTE, false));
		history.add(record("w0", 1, 10, 200, 210, 0, 20, 1, Outcome.FENCED, false));
		HistoryChecker.Result result = HistoryChecker.check(history, 20, 1);
		assertThat(result.violations())
			.anySatisfy((violation) -> assertThat(violation).startsWith("untold overlap")
				.contains("was granted after higher token"))
			.anySatisfy((violation) -> assertThat(violation).contains("read the write of a later grant"));
	}

	@Test
	void rejectsAnUntoldGrantThatReadTheWriteOfALaterGrantOfItsChain() {
		List<GrantRecord> history = new ArrayList<>();
		history.add(record("w0", 0, 10, 100, 110, 0, 0, 0, Outcome.WROTE, false));
		// Grant 1 read what grant 2 wrote: the chain's numbering contradicts the counter.
		history.add(record("w0", 1, 10, 110, 120, 0, 10, 2, Outcome.WROTE, true));
		history.add(record("w0", 2, 10, 120, 130, 0, 10, 1, Outcome.WROTE, true));
		HistoryChecker.Result result = HistoryChecker.check(history, 10, 3);
		assertThat(result.violations()).singleElement()
			.asString()
			.startsWith("untold overlap: w0#1")
			.contains("read the write of a later grant");
	}

	@Test
	void rejectsALostUpdateWithinOneWorkersChain() {
		// Two grants of one chain read 10/1 and both "wrote" 10/2; only one write can be in the counter.
		List<GrantRecord> history = new ArrayList<>();
		history.add(record("w0", 0, 10, 100, 110, 0, 0, 0, Outcome.WROTE, false));
		history.add(record("w0", 1, 10, 110, 120, 0, 10, 1, Outcome.WROTE, true));
		history.add(record("w0", 2, 10, 120, 130, 0, 10, 1, Outcome.WROTE, true));
		HistoryChecker.Result result = HistoryChecker.check(history, 10, 2);
		assertThat(result.violations()).singleElement().asString().startsWith("lost update").contains("both wrote 10/2");
	}

	/** Grants with tokens 10, 20, ..., one after another, each incrementing the counter. */
	private static List<GrantRecord> chain(int length) {
		List<GrantRecord> history = new ArrayList<>();
		for (int k = 0; k < length; k++) {
			long token = 10L * (k + 1);
			history.add(grant("w" + (k % 3), token, 100L * (k + 1), 100L * (k + 1) + 50, 0, 10L * k, k, Outcome.WROTE));
		}
		return history;
	}

	/** A grant made through ZooKeeper, numbered by its token within its worker. */
	private static GrantRecord grant(String client, long token, long start, long end, long told, long readToken,
			long readValue, Outcome outcome) {
		return record(client, token, token, start, end, told, readToken, readValue, outcome, false);
	}

	/**
	 * A grant; a write's zxid grows with its token and the value it wrote, as on the server when
	 * the writes follow grant order.
	 */
	private static GrantRecord record(String client, long seq, long token, long start, long end, long told,
			long readToken, long readValue, Outcome outcome, boolean handoff) {
		long writeZxid = (outcome == Outcome.WROTE) ? token * 100 + readValue + 1 : 0;
		return new GrantRecord(client, seq, token, start, end, told, readToken, readValue, readToken + 1, outcome,
				writeZxid, handoff);
	}

}
