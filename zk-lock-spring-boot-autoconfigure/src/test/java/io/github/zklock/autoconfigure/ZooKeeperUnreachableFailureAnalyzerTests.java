package io.github.zklock.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for {@link ZooKeeperUnreachableFailureAnalyzer}, on the failure of a real start.
 */
class ZooKeeperUnreachableFailureAnalyzerTests {

	@Test
	void analyzesAStartThatFoundNoZooKeeper() throws Exception {
		int closedPort = FailFastTests.closedPort();
		Throwable failure = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> startupFailure(
				"zk.lock.fail-fast=true", "zk.lock.connect-string=127.0.0.1:" + closedPort,
				"zk.lock.connection-timeout=500ms"));
		FailureAnalysis analysis = new ZooKeeperUnreachableFailureAnalyzer().analyze(failure);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).isEqualTo("zk-lock could not connect to ZooKeeper at '127.0.0.1:"
				+ closedPort + "' within 500 ms. zk.lock.fail-fast=true makes the start wait for a first connection, "
				+ "up to zk.lock.connection-timeout.");
		assertThat(analysis.getAction()).contains("ZooKeeper ensemble is running and reachable")
			.contains("zk.lock.connect-string")
			.contains("zk.lock.connection-timeout")
			.contains("zk.lock.fail-fast=false")
			.contains("zk.lock.embedded.enabled=true")
			.contains("io.github.zklock:zk-lock-test on the class path");
		assertThat(analysis.getCause()).isInstanceOf(ZooKeeperUnreachableException.class);
	}

	@Test
	void ignoresOtherFailures() {
		assertThat(new ZooKeeperUnreachableFailureAnalyzer().analyze(new IllegalStateException("other"))).isNull();
	}

	private static Throwable startupFailure(String... properties) {
		Throwable[] failure = new Throwable[1];
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withPropertyValues(properties)
			.run((context) -> failure[0] = context.getStartupFailure());
		assertThat(failure[0]).isNotNull();
		return failure[0];
	}

}
