package io.github.zklock.benchmarks;

import java.util.concurrent.Semaphore;

import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The baseline: Curator recipes used the way Curator recommends, one instance per lock path, shared
 * by every thread and built once. Nothing runs around them, so they are the fastest a Curator-based
 * starter can be.
 */
@State(Scope.Benchmark)
public class RawCuratorState {

	/** The path of the shared mutex, below the fork's top znode. */
	static final String MUTEX_PATH = "/raw/mutex/k";

	InterProcessMutex mutex;

	/** Admits one thread at a time to the diagnosis mutexes of {@link ThreadPaths#depthOneMutex}. */
	final Semaphore admitOne = new Semaphore(1, true);

	/** Admits three threads at a time to the diagnosis mutexes of {@link ThreadPaths#depthThreeMutex}. */
	final Semaphore admitThree = new Semaphore(3, true);

	InterProcessReadWriteLock readWrite;

	InterProcessSemaphoreMutex semaphoreMutex;

	/**
	 * Build the recipes (no request is sent until the first acquire).
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		this.mutex = new InterProcessMutex(zooKeeper.client(), zooKeeper.path(MUTEX_PATH));
		this.readWrite = new InterProcessReadWriteLock(zooKeeper.client(), zooKeeper.path("/raw/rw/k"));
		this.semaphoreMutex = new InterProcessSemaphoreMutex(zooKeeper.client(), zooKeeper.path("/raw/sem/k"));
	}

}
