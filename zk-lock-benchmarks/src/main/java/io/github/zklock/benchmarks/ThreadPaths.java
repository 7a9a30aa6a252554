package io.github.zklock.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;


/**
 * What belongs to one benchmark thread:
 * <ul>
 * <li>for the "distinct paths" scenario, a lock path of its own (and a raw mutex on its own raw
 * path), so the threads never wait for each other and share only the client, the server and the
 * starter's key cache;</li>
 * <li>for the diagnosis of the "one path" scenario, raw mutexes of its own on shared paths: one
 * Curator instance per thread, without a limit on the threads queued in ZooKeeper, and with one
 * or three admitted at a time (the starter queues one znode per key at a time).</li>
 * </ul>
 */
@State(Scope.Thread)
public class ThreadPaths {

	private static final AtomicInteger nextIndex = new AtomicInteger();

	/** This thread's lock path below the starter's root path. */
	String path;

	/** A raw mutex on this thread's own path. */
	InterProcessMutex rawMutex;

	/** A raw mutex of this thread's own on the path all threads lock in the "one path" scenario. */
	InterProcessMutex ownMutexOnSharedPath;

	/** A raw mutex of this thread's own, admitted one thread at a time. */
	InterProcessMutex depthOneMutex;

	/** A raw mutex of this thread's own, admitted three threads at a time. */
	InterProcessMutex depthThreeMutex;

	/**
	 * Pick this thread's path and build its own recipes.
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		int index = nextIndex.getAndIncrement();
		this.path = "/distinct/t" + index;
		this.rawMutex = new InterProcessMutex(zooKeeper.client(), zooKeeper.path("/raw/distinct/t" + index));
		this.depthOneMutex = new InterProcessMutex(zooKeeper.client(), zooKeeper.path("/raw/depth1/k"));
		this.depthThreeMutex = new InterProcessMutex(zooKeeper.client(), zooKeeper.path("/raw/depth3/k"));
		this.ownMutexOnSharedPath = new InterProcessMutex(zooKeeper.client(), zooKeeper.path(RawCuratorState.MUTEX_PATH));
	}

}
