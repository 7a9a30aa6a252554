package io.github.zklock.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;

/**
 * What belongs to one benchmark thread:
 * <ul>
 * <li>for the "distinct paths" scenario, a lock path of its own (and a raw mutex on its own raw
 * path), so the threads never wait for each other and share only the client, the server and the
 * starter's recipe cache;</li>
 * <li>for the diagnosis of the "one path" scenario, a recipe instance of its own on the shared path:
 * a raw mutex, and a {@link LockTemplate} on a registry of its own (so on a recipe instance of its
 * own), which is what the starter would do with one recipe instance per path and thread.</li>
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

	/** A registry of this thread's own, on the starter's root path. */
	CuratorLockRegistry ownRegistry;

	/** A template on {@link #ownRegistry}. */
	LockTemplate ownTemplate;

	/**
	 * Pick this thread's path and build its own recipes.
	 * @param zooKeeper the server and client
	 */
	@Setup(Level.Trial)
	public void setUp(ZooKeeperState zooKeeper) {
		int index = nextIndex.getAndIncrement();
		this.path = "/distinct/t" + index;
		this.rawMutex = new InterProcessMutex(zooKeeper.client(), zooKeeper.path("/raw/distinct/t" + index));
		this.ownMutexOnSharedPath = new InterProcessMutex(zooKeeper.client(), zooKeeper.path(RawCuratorState.MUTEX_PATH));
		this.ownRegistry = new CuratorLockRegistry(zooKeeper.client(), zooKeeper.path(ZkLockState.ROOT), 10_000);
		this.ownTemplate = new LockTemplate(this.ownRegistry, LockRequest.WAIT_FOREVER);
	}

	/** Stop the own registry's connection tracking. */
	@TearDown(Level.Trial)
	public void close() {
		this.ownRegistry.close();
	}

}
