package io.github.zklock.sample.demo;

import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link LoadGenerator}'s modes (names on the command line and in the {@code RESULT}
 * line, which endpoint they call) and for the audit of a locked run's books in
 * {@link LoadGenerator.Outcome}: fencing tokens never lower than the one before, equal ones
 * accepted; and which answers count as failures in each mode. The runs themselves are in {@code MultiInstanceTests}.
 */
class LoadGeneratorTests {

	@Test
	void modesAreNamedOnTheCommandLineAsInTheResultLine() {
		assertThat(LoadGenerator.Mode.values()).extracting(LoadGenerator.Mode::label)
			.containsExactly("locked", "locked-reactive", "locked-no-handoff", "locked-chaos", "locked-sticky",
					"locked-sticky-kept", "unlocked");
		assertThat(LoadGenerator.Options.from(Map.of("mode", "locked-no-handoff", "urls", "http://127.0.0.1:1"))
			.mode()).isEqualTo(LoadGenerator.Mode.LOCKED_NO_HANDOFF);
	}

	@Test
	void bothLockedModesCallTheLockedPurchase() {
		assertThat(LoadGenerator.Mode.LOCKED.locked()).isTrue();
		assertThat(LoadGenerator.Mode.LOCKED_REACTIVE.locked()).isTrue();
		assertThat(LoadGenerator.Mode.LOCKED_NO_HANDOFF.locked()).isTrue();
		assertThat(LoadGenerator.Mode.LOCKED_CHAOS.locked()).isTrue();
		assertThat(LoadGenerator.Mode.LOCKED_STICKY.locked()).isTrue();
		assertThat(LoadGenerator.Mode.LOCKED_STICKY_KEPT.locked()).isTrue();
		assertThat(LoadGenerator.Mode.UNLOCKED.locked()).isFalse();
	}

	@Test
	void onlyTheStickyModesSendEveryRequestToOneInstance() {
		assertThat(LoadGenerator.Mode.values()).filteredOn(LoadGenerator.Mode::sticky)
			.containsExactly(LoadGenerator.Mode.LOCKED_STICKY, LoadGenerator.Mode.LOCKED_STICKY_KEPT);
	}

	@Test
	void reactiveModeCallsOnlyTheReactivePurchaseAndTheChaosModeEveryOtherTime() {
		for (int request = 0; request < 4; request++) {
			assertThat(LoadGenerator.Mode.LOCKED_REACTIVE.reactive(request)).isTrue();
			assertThat(LoadGenerator.Mode.LOCKED_CHAOS.reactive(request)).isEqualTo(request % 2 == 1);
			assertThat(LoadGenerator.Mode.LOCKED.reactive(request)).isFalse();
			assertThat(LoadGenerator.Mode.UNLOCKED.reactive(request)).isFalse();
		}
	}

	@Test
	void unknownModeNamesTheModes() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LoadGenerator.Options.from(Map.of("mode", "no-handoff", "urls", "http://127.0.0.1:1")))
			.withMessage("--mode must be locked, locked-reactive, locked-no-handoff, locked-chaos, locked-sticky, "
					+ "locked-sticky-kept or unlocked, was 'no-handoff'");
	}

	@Test
	void booksWithEqualTokensAreStraight() {
		assertThat(outcome(0, true, 3).lockedBooksStraight()).isTrue();
	}

	@Test
	void booksWithALowerTokenAreNotStraight() {
		assertThat(outcome(0, false, 0).lockedBooksStraight()).isFalse();
	}

	@Test
	void booksWithAnOrderWithoutTokenAreNotStraight() {
		assertThat(outcome(1, true, 0).lockedBooksStraight()).isFalse();
	}

	@Test
	void lostLocksAndAnUnavailableLockServiceAreExpectedOnlyUnderChaos() {
		Map<String, Long> answers = Map.of("200", 5L, "409", 2L, "423", 1L, LoadGenerator.STALE_TOKEN, 3L,
				LoadGenerator.LOCK_LOST, 4L, "503", 6L, "500", 7L);
		LoadGenerator.Outcome chaos = outcome("locked-chaos", answers);
		assertThat(chaos.unexpectedAnswers()).as("only the 500s").isEqualTo(7);
		assertThat(chaos.count(LoadGenerator.STALE_TOKEN)).isEqualTo(3);
		assertThat(chaos.count(LoadGenerator.LOCK_LOST)).isEqualTo(4);
		assertThat(chaos.count("404")).isZero();
		assertThat(outcome("locked", answers).unexpectedAnswers()).as("3 + 4 + 6 + 7").isEqualTo(20);
	}

	@Test
	void refusalsOfTheReactivePurchaseAreCountedApart() {
		Map<String, Long> answers = Map.of("200", 5L, LoadGenerator.STALE_TOKEN, 3L, LoadGenerator.LOCK_LOST, 4L);
		Map<String, Long> reactive = Map.of("200", 2L, LoadGenerator.STALE_TOKEN, 1L, LoadGenerator.LOCK_LOST, 4L);
		SalesAudit.Sales sales = new SalesAudit.Sales(0, 5, 5, Map.of("app-1", 5L), 0, true, 0);
		LoadGenerator.Outcome outcome = new LoadGenerator.Outcome(new LoadReport("locked-chaos", 12, 5, 5, 0, 1, 2, 3),
				sales, new TreeMap<>(answers), new TreeMap<>(reactive));
		assertThat(outcome.count(LoadGenerator.STALE_TOKEN)).isEqualTo(3);
		assertThat(outcome.reactiveCount(LoadGenerator.STALE_TOKEN)).isEqualTo(1);
		assertThat(outcome.blockingCount(LoadGenerator.STALE_TOKEN)).isEqualTo(2);
		assertThat(outcome.blockingCount(LoadGenerator.LOCK_LOST)).isZero();
		assertThat(outcome.unexpectedAnswers()).isZero();
	}

	private static LoadGenerator.Outcome outcome(long withoutToken, boolean nonDecreasing, long sharing) {
		SalesAudit.Sales sales = new SalesAudit.Sales(0, 5, 5, Map.of("app-1", 5L), withoutToken, nonDecreasing,
				sharing);
		LoadReport report = new LoadReport("locked", 5, 5, 5, 0, 1, 2, 3);
		return new LoadGenerator.Outcome(report, sales, new TreeMap<>(Map.of("200", 5L)), new TreeMap<>());
	}

	private static LoadGenerator.Outcome outcome(String mode, Map<String, Long> answers) {
		SalesAudit.Sales sales = new SalesAudit.Sales(0, 5, 5, Map.of("app-1", 5L), 0, true, 0);
		return new LoadGenerator.Outcome(new LoadReport(mode, 28, 5, 5, 0, 1, 2, 3), sales, new TreeMap<>(answers),
				new TreeMap<>());
	}

}
