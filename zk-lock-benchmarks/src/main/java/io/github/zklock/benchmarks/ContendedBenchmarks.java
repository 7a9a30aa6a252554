package io.github.zklock.benchmarks;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import com.baomidou.lock.LockInfo;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import io.github.zklock.LockCallback;
import io.github.zklock.LockMode;

/**
 * Eight threads of one process. "One path": all lock the same path, so every grant is a hand-over
 * through ZooKeeper (release, watch event, read of the queue); the score is total grants per second,
 * and the runner reports each thread's share (fairness). "Distinct paths": each thread locks its own
 * path, so nothing waits and the threads share only the client, the server and the key cache.
 * Critical sections are empty.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(3)
@Threads(8)
public class ContendedBenchmarks {

	private static final LockCallback<Object> NOTHING = (handle) -> null;

	/**
	 * Baseline: one shared Curator {@code InterProcessMutex}.
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutexOnePath(RawCuratorState raw) throws Exception {
		UncontendedBenchmarks.cycle(raw.mutex);
	}

	/**
	 * {@code LockTemplate.execute}, EXCLUSIVE, one path.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateOnePath(ZkLockState ours) {
		return ours.template.execute("/mutex/k", LockMode.EXCLUSIVE, null, NOTHING);
	}

	/**
	 * Peer: Spring Integration, one key.
	 * @param peer the registry
	 */
	@Benchmark
	public void springIntegrationOnePath(SpringIntegrationState peer) {
		Lock lock = peer.registry.obtain(SpringIntegrationState.KEY);
		lock.lock();
		lock.unlock();
	}

	/**
	 * Peer: lock4j, one key.
	 * @param peer the template
	 */
	@Benchmark
	public void lock4jOnePath(Lock4jState peer) {
		LockInfo info = peer.template.lock(peer.key);
		if (info == null) {
			throw new IllegalStateException("lock4j did not acquire '" + peer.key + "' within its acquire timeout");
		}
		peer.template.releaseLock(info);
	}

	/**
	 * Diagnosis: one raw {@code InterProcessMutex} instance per thread, all on the one path (what
	 * lock4j does by creating one per call). Curator's {@code LockInternals} makes waiters of one
	 * instance wait on one monitor that every watch event wakes with {@code notifyAll}; with an
	 * instance per thread only the waiter whose predecessor left wakes up.
	 * @param paths this thread's own mutex on the shared path
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutexPerThreadOnePath(ThreadPaths paths) throws Exception {
		UncontendedBenchmarks.cycle(paths.ownMutexOnSharedPath);
	}

	/**
	 * Diagnosis: a raw {@code InterProcessMutex} per thread, with one thread of the process at a
	 * time admitted to the ZooKeeper queue (a local fair queue in front): the starter's admission
	 * without local hand-off (one znode per application and key at a time).
	 * @param raw the admission
	 * @param paths this thread's own mutex
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutexDepthOneOnePath(RawCuratorState raw, ThreadPaths paths) throws Exception {
		admittedCycle(raw.admitOne, paths.depthOneMutex);
	}

	/**
	 * Diagnosis: as {@link #rawMutexDepthOneOnePath}, with three threads admitted at a time.
	 * @param raw the admission
	 * @param paths this thread's own mutex
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutexDepthThreeOnePath(RawCuratorState raw, ThreadPaths paths) throws Exception {
		admittedCycle(raw.admitThree, paths.depthThreeMutex);
	}

	private static void admittedCycle(Semaphore admission, InterProcessMutex mutex) throws Exception {
		admission.acquire();
		try {
			UncontendedBenchmarks.cycle(mutex);
		}
		finally {
			admission.release();
		}
	}

	/**
	 * Baseline: one raw {@code InterProcessMutex} per thread, each on its own path.
	 * @param paths this thread's path and mutex
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutexDistinctPaths(ThreadPaths paths) throws Exception {
		UncontendedBenchmarks.cycle(paths.rawMutex);
	}

	/**
	 * {@code LockTemplate.execute}, EXCLUSIVE, each thread on its own path.
	 * @param ours the template
	 * @param paths this thread's path
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateDistinctPaths(ZkLockState ours, ThreadPaths paths) {
		return ours.template.execute(paths.path, LockMode.EXCLUSIVE, null, NOTHING);
	}

}
