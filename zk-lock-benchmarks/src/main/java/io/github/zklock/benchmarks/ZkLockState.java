package io.github.zklock.benchmarks;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The starter's programmatic path: a {@link LockTemplate} on a {@link CuratorLockRegistry}, built the
 * way {@code ZkLockAutoConfiguration} builds them with the default properties (cache capacity 10,000,
 * no wait limit), on the shared Curator client.
 */
@State(Scope.Benchmark)
public class ZkLockState {

	/** Root path of the starter's locks, below the fork's top znode. */
	static final String ROOT = "/ours";

	CuratorLockRegistry registry;

	LockTemplate template;

	/**
	 * Build the registry and the template.
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		this.registry = new CuratorLockRegistry(zooKeeper.client(), zooKeeper.path(ROOT), 10_000);
		this.template = new LockTemplate(this.registry, LockRequest.WAIT_FOREVER);
	}

	/** Stop tracking the connection state. */
	@TearDown(Level.Trial)
	public void close() {
		this.registry.close();
	}

}
