package io.github.zklock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link ZooKeeperUnreachableException}: the start waited for ZooKeeper
 * ({@code zk.lock.fail-fast=true}) and got no connection.
 */
class ZooKeeperUnreachableFailureAnalyzer extends AbstractFailureAnalyzer<ZooKeeperUnreachableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, ZooKeeperUnreachableException cause) {
		String description = "zk-lock could not connect to ZooKeeper at '" + cause.getConnectString() + "' within "
				+ cause.getTimeout().toMillis() + " ms. zk.lock.fail-fast=true makes the start wait for a first "
				+ "connection, up to zk.lock.connection-timeout.";
		String action = "Check that the ZooKeeper ensemble is running and reachable from this host (firewall, DNS, "
				+ "port), and that zk.lock.connect-string names it (host:port[,host:port...][/chroot]). If it is "
				+ "slow to answer, raise zk.lock.connection-timeout. To start without it, set zk.lock.fail-fast=false "
				+ "(lock requests then fail with a LockException until ZooKeeper is reachable), or, for development "
				+ "and tests, run an in-process server: zk.lock.embedded.enabled=true with "
				+ "io.github.zklock:zk-lock-test on the class path.";
		return new FailureAnalysis(description, action, cause);
	}

}
