package io.github.zklock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains an {@link EmbeddedZooKeeperUnavailableException}: the embedded server was asked for
 * without the library that provides it.
 */
class EmbeddedZooKeeperUnavailableFailureAnalyzer
		extends AbstractFailureAnalyzer<EmbeddedZooKeeperUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, EmbeddedZooKeeperUnavailableException cause) {
		String description = "zk.lock.embedded.enabled=true asks for an in-process ZooKeeper server, but "
				+ "io.github.zklock:zk-lock-test, which provides it (with org.apache.curator:curator-test), is not on "
				+ "the class path.";
		String action = "Add io.github.zklock:zk-lock-test as a dependency (test scope is enough when only tests "
				+ "use the embedded server), or set zk.lock.embedded.enabled=false and point "
				+ "zk.lock.connect-string at a ZooKeeper ensemble.";
		return new FailureAnalysis(description, action, cause);
	}

}
