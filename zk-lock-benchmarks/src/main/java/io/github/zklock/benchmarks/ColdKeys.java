package io.github.zklock.benchmarks;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Never-seen keys, one per cycle, for the cold-key benchmarks: the starter's key
 * {@code /cold/<n>/k} below its root ({@code <top>/ours/cold/<n>/k}) and the raw path
 * {@code <top>/raw/cold/<n>/k}, of the same depth, where {@code <top>} is the fork's top znode. The
 * serial {@code n} is taken once and grows for as long as the fork runs (warm-up, rounds and JMH
 * iterations alike), and every fork has a top znode of its own (see {@link ZooKeeperState}): no key
 * is locked twice, so each cycle creates the lock znode's two missing parents.
 */
@State(Scope.Benchmark)
public class ColdKeys {

	private final AtomicLong next = new AtomicLong();

	private @Nullable ZooKeeperState zooKeeper;

	/**
	 * Remember the fork's server and client.
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		this.zooKeeper = zooKeeper;
	}

	/**
	 * Return a key no cycle has locked, below the starter's root.
	 * @return {@code /cold/<n>/k}
	 */
	String nextKey() {
		return "/cold/" + this.next.incrementAndGet() + "/k";
	}

	/**
	 * Return a raw path no cycle has locked, as deep as the starter's keys.
	 * @return {@code <top>/raw/cold/<n>/k}
	 */
	String nextRawPath() {
		return zooKeeper().path("/raw/cold/" + this.next.incrementAndGet() + "/k");
	}

	/**
	 * Return the shared Curator client.
	 * @return the client of the fork
	 */
	CuratorFramework client() {
		return zooKeeper().client();
	}

	private ZooKeeperState zooKeeper() {
		if (this.zooKeeper == null) {
			throw new IllegalStateException("Not set up");
		}
		return this.zooKeeper;
	}

}
