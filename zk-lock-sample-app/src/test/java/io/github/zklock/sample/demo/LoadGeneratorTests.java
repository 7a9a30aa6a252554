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
 * accepted. The runs themselves are in {@code MultiInstanceTests}.
 */
class LoadGeneratorTests {

	@Test
	void modesAreNamedOnTheCommandLineAsInTheResultLine() {
		assertThat(LoadGenerator.Mode.values()).extracting(LoadGenerator.Mode::label)
			.containsExactly("locked", "locked-no-handoff", "unlocked");
		assertThat(LoadGenerator.Options.from(Map.of("mode", "locked-no-handoff", "urls", "http://127.0.0.1:1"))
			.mode()).isEqualTo(LoadGenerator.Mode.LOCKED_NO_HANDOFF);
	}

	@Test
	void bothLockedModesCallTheLockedPurchase() {
		assertThat(LoadGenerator.Mode.LOCKED.locked()).isTrue();
		assertThat(LoadGenerator.Mode.LOCKED_NO_HANDOFF.locked()).isTrue();
		assertThat(LoadGenerator.Mode.UNLOCKED.locked()).isFalse();
	}

	@Test
	void unknownModeNamesTheModes() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LoadGenerator.Options.from(Map.of("mode", "no-handoff", "urls", "http://127.0.0.1:1")))
			.withMessage("--mode must be locked, locked-no-handoff or unlocked, was 'no-handoff'");
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

	private static LoadGenerator.Outcome outcome(long withoutToken, boolean nonDecreasing, long sharing) {
		SalesAudit.Sales sales = new SalesAudit.Sales(0, 5, 5, Map.of("app-1", 5L), withoutToken, nonDecreasing,
				sharing);
		LoadReport report = new LoadReport("locked", 5, 5, 5, 0, 1, 2, 3);
		return new LoadGenerator.Outcome(report, sales, new TreeMap<>(Map.of("200", 5L)));
	}

}
