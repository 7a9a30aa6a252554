package io.github.zklock.autoconfigure;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link EmbeddedZooKeeperUnavailableFailureAnalyzer}, on the failure of a real start
 * without zk-lock-test, or without the curator-test it brings, on the class path.
 */
class EmbeddedZooKeeperUnavailableFailureAnalyzerTests {

	@Test
	void analyzesEmbeddedModeWithoutCuratorTest() {
		// zk-lock-test and its auto-configuration are there, curator-test is not.
		assertAnalyzed(new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.apache.curator.test")));
	}

	@Test
	void analyzesEmbeddedModeWithoutZkLockTest() {
		assertAnalyzed(new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("io.github.zklock.test")));
	}

	private static void assertAnalyzed(ApplicationContextRunner contextRunner) {
		contextRunner.withPropertyValues("zk.lock.embedded.enabled=true").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(EmbeddedZooKeeperUnavailableException.class);
			FailureAnalysis analysis = new EmbeddedZooKeeperUnavailableFailureAnalyzer()
				.analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("zk.lock.embedded.enabled=true")
				.contains("io.github.zklock:zk-lock-test")
				.contains("org.apache.curator:curator-test");
			assertThat(analysis.getAction()).startsWith("Add io.github.zklock:zk-lock-test as a dependency")
				.contains("or set zk.lock.embedded.enabled=false")
				.contains("zk.lock.connect-string");
		});
	}

	@Test
	void ignoresOtherFailures() {
		assertThat(new EmbeddedZooKeeperUnavailableFailureAnalyzer().analyze(new IllegalStateException("other")))
			.isNull();
	}

}
