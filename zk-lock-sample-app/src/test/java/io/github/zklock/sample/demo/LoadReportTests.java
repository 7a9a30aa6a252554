package io.github.zklock.sample.demo;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link LoadReport}.
 */
class LoadReportTests {

	@Test
	void resultLineOfAConsistentRun() {
		LoadReport report = new LoadReport("locked", 1500, 500, 500, 0, 12.34, 56.78, 123.45);
		assertThat(report.consistent()).isTrue();
		assertThat(report.toResultLine()).isEqualTo("RESULT mode=locked requests=1500 sold=500 remaining=0 oversold=0 "
				+ "lost_updates=0 lock_wait_p50_ms=12.3 lock_wait_p99_ms=56.8 throughput_rps=123.5");
	}

	@Test
	void oversoldCountsSalesBeyondTheInitialStock() {
		LoadReport report = new LoadReport("unlocked", 1500, 500, 1500, 436, 1, 2, 3);
		assertThat(report.oversold()).isEqualTo(1000);
		assertThat(report.lostUpdates()).isEqualTo(1436);
		assertThat(report.consistent()).isFalse();
	}

	@Test
	void lostUpdatesCountSalesThatDidNotReduceTheStock() {
		// 300 sold but the stock only went down by 250: 50 decrements were overwritten.
		LoadReport report = new LoadReport("unlocked", 400, 500, 300, 250, 1, 2, 3);
		assertThat(report.oversold()).isZero();
		assertThat(report.lostUpdates()).isEqualTo(50);
		assertThat(report.toResultLine()).contains(" oversold=0 lost_updates=50 ");
	}

	@Test
	void percentileIsTheNearestRank() {
		double[] samples = { 5, 1, 4, 2, 3, 10, 9, 8, 7, 6 };
		assertThat(LoadReport.percentile(samples, 50)).isEqualTo(5);
		assertThat(LoadReport.percentile(samples, 99)).isEqualTo(10);
		assertThat(LoadReport.percentile(samples, 100)).isEqualTo(10);
		assertThat(LoadReport.percentile(samples, 1)).isEqualTo(1);
		assertThat(LoadReport.percentile(new double[] { 7 }, 50)).isEqualTo(7);
		assertThat(samples[0]).as("samples left unsorted").isEqualTo(5);
	}

	@Test
	void percentileOfNoSamplesIsZero() {
		assertThat(LoadReport.percentile(new double[0], 99)).isZero();
	}

	@Test
	void percentileOutOfRangeIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> LoadReport.percentile(new double[] { 1 }, 0));
		assertThatIllegalArgumentException().isThrownBy(() -> LoadReport.percentile(new double[] { 1 }, 101));
	}

}
