package io.github.zklock.benchmarks;

import java.util.concurrent.Semaphore;

import java.util.List;

import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
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

	/** Two mutexes taken together, in sorted path order (the order the starter uses). */
	InterProcessMultiLock multiLock;

	/** A semaphore of {@link #PERMITS} leases. */
	InterProcessSemaphoreV2 semaphore;

	/** The number of permits of the semaphore benchmarks. */
	public static final int PERMITS = 3;

	/**
	 * Build the recipes (no request is sent until the first acquire).
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		this.mutex = new InterProcessMutex(zooKeeper.client(), zooKeeper.path(MUTEX_PATH));
		this.readWrite = new InterProcessReadWriteLock(zooKeeper.client(), zooKeeper.path("/raw/rw/k"));
		this.semaphoreMutex = new InterProcessSemaphoreMutex(zooKeeper.client(), zooKeeper.path("/raw/sem/k"));
		this.multiLock = new InterProcessMultiLock(zooKeeper.client(),
				List.of(zooKeeper.path("/raw/multi/a"), zooKeeper.path("/raw/multi/b")));
		this.semaphore = new InterProcessSemaphoreV2(zooKeeper.client(), zooKeeper.path("/raw/permits/k"), PERMITS);
	}

}
