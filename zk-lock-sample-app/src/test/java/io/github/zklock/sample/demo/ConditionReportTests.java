package io.github.zklock.sample.demo;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ConditionReport}: the {@code CONDITION} line and what makes a run consistent.
 */
class ConditionReportTests {

	@Test
	void lineNamesEveryFigure() {
		ConditionReport report = new ConditionReport(200, 200, 200, 0, 0, 5, 5, 31, 402, 9.4, 41.6, 25.26);
		assertThat(report.toLine()).isEqualTo("CONDITION items=200 produced=200 consumed=200 duplicates=0 lost=0 "
				+ "capacity=5 max_depth=5 producer_waits=31 consumer_waits=402 wake_p50_ms=9 wake_p99_ms=42 "
				+ "items_per_second=25.3");
		assertThat(report.consistent()).isTrue();
	}

	@Test
	void anItemMissingTakenTwiceOrAFullQueueOverfilledIsInconsistent() {
		assertThat(report(199, 199, 0, 0, 5).consistent()).as("one not produced").isFalse();
		assertThat(report(200, 199, 0, 1, 5).consistent()).as("one lost").isFalse();
		assertThat(report(200, 201, 1, 0, 5).consistent()).as("one taken twice").isFalse();
		assertThat(report(200, 200, 0, 0, 6).consistent()).as("above capacity").isFalse();
	}

	private static ConditionReport report(long produced, long consumed, long duplicates, long lost, int maxDepth) {
		return new ConditionReport(200, produced, consumed, duplicates, lost, 5, maxDepth, 0, 0, 0, 0, 1);
	}

}
