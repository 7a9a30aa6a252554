package io.github.zklock.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checkers and the report's arithmetic on histories made by hand: each violation kind found,
 * and nothing found in a clean history.
 */
class ChecksTests {

	private static final long MS = 1_000_000;

	@Test
	void cleanCounterHasNoViolation() {
		List<History.Operation> operations = List.of(ok("a", 1), ok("b", 2), failed("c"), unknown("d"));
		List<Checks.Increment> increments = List.of(new Checks.Increment("a", 1, 5), new Checks.Increment("b", 2, 5),
				new Checks.Increment("d", 3, 7));

		assertThat(Checks.counter(operations, increments, 3)).isEmpty();
	}

	@Test
	void lostUpdateIsTwoIncrementsWritingOneValue() {
		List<Checks.Increment> increments = List.of(new Checks.Increment("a", 1, 5), new Checks.Increment("b", 1, 6));

		assertThat(Checks.counter(List.of(ok("a", 1), ok("b", 1)), increments, 1))
			.anySatisfy((violation) -> assertThat(violation).startsWith("lost update: value 1 written by [a, b]"))
			.anySatisfy((violation) -> assertThat(violation).isEqualTo("final value 1 but 2 increments committed"));
	}

	@Test
	void olderTokenWritingAfterANewerOneIsFound() {
		List<Checks.Increment> increments = List.of(new Checks.Increment("a", 1, 9), new Checks.Increment("b", 2, 7));

		assertThat(Checks.counter(List.of(), increments, 2)).singleElement()
			.satisfies((violation) -> assertThat(violation).startsWith("token went back: b (token 7) wrote value 2"));
	}

	@Test
	void acknowledgedWriteMissingAndFailedWriteCommittedAreFound() {
		List<History.Operation> operations = List.of(ok("a", 1), failed("b"));
		List<Checks.Increment> increments = List.of(new Checks.Increment("b", 1, 5));

		assertThat(Checks.counter(operations, increments, 1)).containsExactlyInAnyOrder(
				"acknowledged but not committed: a", "answered 409 but committed: b");
	}

	@Test
	void transfersKeepTheSumAndNoBalanceGoesNegative() {
		assertThat(Checks.transfers(List.of(ok("t1", -1)), Set.of("t1"), List.of(10L, 20L), 30)).isEmpty();
		assertThat(Checks.transfers(List.of(), Set.of(), List.of(-5L, 20L), 30))
			.containsExactlyInAnyOrder("sum of balances 15, expected 30", "negative balance -5");
	}

	@Test
	void stockSaleFindsLostUpdatesAndOversells() {
		assertThat(Checks.stock(3, 10, 7, 3)).isEmpty();
		assertThat(Checks.stock(3, 10, 8, 3)).containsExactly("lost update: 8 left + 3 sold != 10");
		assertThat(Checks.stock(12, 10, 0, 12)).contains("oversold: 12 sold of 10");
	}

	@Test
	void leaderJobTickCommittedTwiceIsFound() {
		assertThat(Checks.leaderJob(Map.of("report@1000", 1, "report@2000", 2)).violations())
			.containsExactly("tick report@2000 committed 2 times");
	}

	@Test
	void leaderJobsWorkloadLineCountsTheCommittedRunsItsCheckerExamined() {
		// No client calls the job: what its checker examines are the committed runs per tick.
		Checks.Result result = Checks.leaderJob(
				Map.of("leader-report@1000", 1, "leader-report@2000", 2, "stock-report@1000", 1));

		List<String> lines = Report.lines(new Campaign.Settings(4242, 3, 3, 3, Duration.ofSeconds(3), Path.of("app.jar"),
				Path.of("java"), "jdbc:postgresql://127.0.0.1:5432/", "zklock", "zklock", Path.of("target/chaos"), true),
				List.of(), List.of(), List.of(result), Map.of());

		assertThat(lines).containsSubsequence(
				"WORKLOAD name=leader-job fenced=true operations=4 ok=4 failed=0 unknown=0 violations=1 not_ok=none",
				"  VIOLATION leader-job: tick leader-report@2000 committed 2 times");
		assertThat(lines.get(lines.size() - 1)).contains(" operations=4 violations=1 ").endsWith(" kept_locks=on");
	}

	@Test
	void unavailabilityIsTheLongestStretchWithoutASuccessAfterEachFault() {
		// Faults at 1 s and 10 s; successes every 100 ms but for a hole from 1.2 s to 5.2 s.
		List<History.Operation> operations = new ArrayList<>();
		for (long t = 0; t <= 20_000; t += 100) {
			if (t < 1200 || t > 5200) {
				operations.add(new History.Operation("op" + t, Workload.FENCED_COUNTER, 0, 0, t * MS - 10 * MS, t * MS,
						History.Outcome.OK, 200, 1, "", ""));
			}
		}
		// Other workloads do not count.
		operations.add(new History.Operation("x", Workload.TRANSFER, 0, 0, 3000 * MS, 3000 * MS, History.Outcome.OK, 200,
				1, "", ""));
		List<Nemesis.Fault> faults = List.of(new Nemesis.Fault(Nemesis.Kind.PAUSE, "app-1", 1000 * MS, 6000 * MS, 7000 * MS),
				new Nemesis.Fault(Nemesis.Kind.KILL_LEADER, "server-1", 10_000 * MS, 13_000 * MS, 14_000 * MS));

		List<Duration> gaps = Report.unavailability(faults, operations, 20_000 * MS);

		assertThat(gaps).containsExactly(Duration.ofMillis(4200), Duration.ofMillis(100));
	}

	@Test
	void percentileOfSortedValues() {
		assertThat(Report.percentile(List.of(1L, 2L, 3L, 4L), 50)).isEqualTo(2);
		assertThat(Report.percentile(List.of(1L, 2L, 3L, 4L), 99)).isEqualTo(4);
		assertThat(Report.percentile(List.of(), 99)).isZero();
	}

	@Test
	void statusesThatMeanRolledBackFailTheOperation() {
		assertThat(Clients.outcome(200)).isEqualTo(History.Outcome.OK);
		for (int status : new int[] { 409, 410, 423, 503 }) {
			assertThat(Clients.outcome(status)).isEqualTo(History.Outcome.FAIL);
		}
		assertThat(Clients.outcome(500)).isEqualTo(History.Outcome.UNKNOWN);
	}

	private static History.Operation ok(String id, long token) {
		return new History.Operation(id, Workload.FENCED_COUNTER, 0, 0, 0, 1, History.Outcome.OK, 200, token, "", "");
	}

	private static History.Operation failed(String id) {
		return new History.Operation(id, Workload.FENCED_COUNTER, 0, 0, 0, 1, History.Outcome.FAIL, 409, -1, "stale-token", "");
	}

	private static History.Operation unknown(String id) {
		return new History.Operation(id, Workload.FENCED_COUNTER, 0, 0, 0, 1, History.Outcome.UNKNOWN, 0, -1, "timeout", "");
	}

}
