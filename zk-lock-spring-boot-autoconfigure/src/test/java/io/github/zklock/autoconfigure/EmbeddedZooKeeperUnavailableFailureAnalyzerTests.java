package io.github.zklock.autoconfigure;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link EmbeddedZooKeeperUnavailableFailureAnalyzer}, on the failure of a real start
 * without curator-test on the class path.
 */
class EmbeddedZooKeeperUnavailableFailureAnalyzerTests {

	@Test
	void analyzesEmbeddedModeWithoutCuratorTest() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.apache.curator.test"))
			.withPropertyValues("zk.lock.embedded.enabled=true")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(EmbeddedZooKeeperUnavailableException.class);
				FailureAnalysis analysis = new EmbeddedZooKeeperUnavailableFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription()).contains("zk.lock.embedded.enabled=true")
					.contains("org.apache.curator:curator-test");
				assertThat(analysis.getAction())
					.startsWith("Add org.apache.curator:curator-test as a dependency")
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
