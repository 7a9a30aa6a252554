package io.github.zklock.benchmarks;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

/**
 * Peer: Spring Integration's {@link ZookeeperLockRegistry} (one cached {@code InterProcessMutex} per
 * key) on the shared Curator client, with its defaults.
 */
@State(Scope.Benchmark)
public class SpringIntegrationState {

	/** The key every call locks. */
	static final String KEY = "k";

	ZookeeperLockRegistry registry;

	/**
	 * Build the registry.
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		this.registry = new ZookeeperLockRegistry(zooKeeper.client(), zooKeeper.path("/si/mutex"));
	}

	/** Stop the registry's executor. */
	@TearDown(Level.Trial)
	public void close() {
		this.registry.destroy();
	}

}
