package io.github.zklock.benchmarks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The floor: the plain ZooKeeper client, no Curator. One {@code create(EPHEMERAL)} plus one
 * {@code delete} is the least any lock built on ephemeral znodes sends per cycle (a lock recipe adds
 * at least the read of its queue).
 */
@State(Scope.Benchmark)
public class PlainZooKeeperState {

	ZooKeeper zooKeeper;

	String node;

	private String parent;

	private CuratorFramework curator;

	/**
	 * Create the parent of the node, as a container like the lock recipes' parents (the server
	 * reaps it when it stays empty, so an external server is clean after the run). Called again by
	 * the benchmark when the server reaped it between two runs.
	 * @throws Exception if ZooKeeper fails
	 */
	void createParent() throws Exception {
		try {
			this.curator.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(this.parent);
		}
		catch (KeeperException.NodeExistsException ex) {
			// Created before.
		}
	}

	/**
	 * Connect and create the parent of the node.
	 * @param zooKeeper the server; its Curator client creates the parent
	 * @throws Exception if the client does not connect or the parent cannot be created
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) throws Exception {
		this.parent = zooKeeper.path("/floor");
		this.curator = zooKeeper.client();
		createParent();
		this.node = this.parent + "/k";
		CountDownLatch connected = new CountDownLatch(1);
		this.zooKeeper = new ZooKeeper(zooKeeper.connectString(), 60_000, (event) -> {
			if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
				connected.countDown();
			}
		});
		if (!connected.await(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("Could not connect to " + zooKeeper.connectString());
		}
	}

	/**
	 * Close the client.
	 * @throws InterruptedException if interrupted while closing
	 */
	@TearDown(Level.Trial)
	public void close() throws InterruptedException {
		this.zooKeeper.close();
	}

}
