package io.github.zklock.benchmarks;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;

import com.baomidou.lock.LockInfo;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import io.github.zklock.LockCallback;
import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockMode;

/**
 * One thread, one lock path, nobody else: the full cost of a lock cycle (acquire, empty critical
 * section, release) when the lock is free. Every operation is one cycle; the score is cycles per
 * second. The raw Curator recipes are the baseline, the plain ZooKeeper client the floor.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(3)
@Threads(1)
public class UncontendedBenchmarks {

	private static final LockCallback<Object> NOTHING = (handle) -> null;

	private static final Object DONE = new Object();

	/** An asynchronous action that has nothing to do: its stage is complete when it returns. */
	private static final Function<LockHandle, CompletableFuture<Object>> NOTHING_ASYNC = (handle) -> CompletableFuture
		.completedFuture(DONE);

	private static final byte[] NO_DATA = new byte[0];

	private static final LockRequest NON_REENTRANT = LockRequest.of("/sem/k").withReentrant(false);

	private static final LockRequest MULTI = LockRequest.of(List.of("/multi/b", "/multi/a"));

	private static final LockRequest PERMIT = LockRequest.permit("/permits/k", RawCuratorState.PERMITS);

	/**
	 * Floor: {@code create(EPHEMERAL)} and {@code delete} with the plain ZooKeeper client.
	 * @param state the client
	 * @throws Exception if ZooKeeper fails
	 */
	@Benchmark
	public void zooKeeperFloor(PlainZooKeeperState state) throws Exception {
		try {
			state.zooKeeper.create(state.node, NO_DATA, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
		}
		catch (KeeperException.NoNodeException ex) {
			// The server reaped the empty parent container (the lock recipes recreate theirs the same way).
			state.createParent();
			state.zooKeeper.create(state.node, NO_DATA, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
		}
		state.zooKeeper.delete(state.node, -1);
	}

	/**
	 * Baseline: Curator {@code InterProcessMutex}.
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutex(RawCuratorState raw) throws Exception {
		cycle(raw.mutex);
	}

	/**
	 * {@code LockTemplate.execute}, EXCLUSIVE.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateMutex(ZkLockState ours) {
		return ours.template.execute("/mutex/k", LockMode.EXCLUSIVE, null, NOTHING);
	}

	/**
	 * {@code LockTemplate.executeAsync}, EXCLUSIVE, on the key of {@link #templateMutex}: the lock is
	 * acquired and released by a grant thread of its own (a pooled platform thread, the template's default), the action
	 * returns a completed stage, and the caller joins the future, which completes after the release.
	 * @param ours the template
	 * @return the action's result, for JMH to consume
	 */
	@Benchmark
	public Object templateAsync(ZkLockState ours) {
		return ours.template.executeAsync("/mutex/k", LockMode.EXCLUSIVE, null, NOTHING_ASYNC).join();
	}

	/**
	 * {@code @DistributedLock} proxy call, EXCLUSIVE, SpEL path.
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedMutex(AnnotatedState annotated) {
		annotated.service.exclusive(AnnotatedState.KEY);
	}

	/**
	 * {@code @DistributedLock} proxy call of a method returning a completed
	 * {@code CompletableFuture}, EXCLUSIVE, SpEL path, joined: the asynchronous twin of
	 * {@link #annotatedMutex}.
	 * @param annotated the application
	 * @return the method's result, for JMH to consume
	 */
	@Benchmark
	public Object annotatedAsync(AnnotatedState annotated) {
		return annotated.service.exclusiveAsync(AnnotatedState.KEY).join();
	}

	/**
	 * Diagnosis: {@code @DistributedLock} proxy call, EXCLUSIVE, with the prototype fast path for
	 * argument-only path templates ({@link FastPathLockOperationSource}).
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedMutexFastPath(AnnotatedState.FastPath annotated) {
		annotated.service.exclusive(AnnotatedState.KEY);
	}

	/**
	 * Baseline: read side of a Curator {@code InterProcessReadWriteLock}.
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawRead(RawCuratorState raw) throws Exception {
		cycle(raw.readWrite.readLock());
	}

	/**
	 * {@code LockTemplate.execute}, READ.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateRead(ZkLockState ours) {
		return ours.template.execute("/rw/k", LockMode.READ, null, NOTHING);
	}

	/**
	 * {@code LockTemplate.executeAsync}, READ, on the key of {@link #templateRead} (see
	 * {@link #templateAsync}).
	 * @param ours the template
	 * @return the action's result, for JMH to consume
	 */
	@Benchmark
	public Object templateAsyncRead(ZkLockState ours) {
		return ours.template.executeAsync("/rw/k", LockMode.READ, null, NOTHING_ASYNC).join();
	}

	/**
	 * {@code @DistributedLock} proxy call, READ.
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedRead(AnnotatedState annotated) {
		annotated.service.read(AnnotatedState.KEY);
	}

	/**
	 * Baseline: write side of a Curator {@code InterProcessReadWriteLock}.
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawWrite(RawCuratorState raw) throws Exception {
		cycle(raw.readWrite.writeLock());
	}

	/**
	 * {@code LockTemplate.execute}, WRITE.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateWrite(ZkLockState ours) {
		return ours.template.execute("/rw/k", LockMode.WRITE, null, NOTHING);
	}

	/**
	 * {@code @DistributedLock} proxy call, WRITE.
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedWrite(AnnotatedState annotated) {
		annotated.service.write(AnnotatedState.KEY);
	}

	/**
	 * Baseline: Curator {@code InterProcessSemaphoreMutex} (non-reentrant).
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawSemaphoreMutex(RawCuratorState raw) throws Exception {
		raw.semaphoreMutex.acquire();
		raw.semaphoreMutex.release();
	}

	/**
	 * {@code LockTemplate.execute}, EXCLUSIVE with {@code reentrant = false}.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateNonReentrant(ZkLockState ours) {
		return ours.template.execute(NON_REENTRANT, NOTHING);
	}

	/**
	 * {@code @DistributedLock(reentrant = false)} proxy call.
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedNonReentrant(AnnotatedState annotated) {
		annotated.service.nonReentrant(AnnotatedState.KEY);
	}

	/**
	 * Baseline: Curator {@code InterProcessMultiLock} of two {@code InterProcessMutex}es.
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMultiLock(RawCuratorState raw) throws Exception {
		raw.multiLock.acquire();
		raw.multiLock.release();
	}

	/**
	 * {@code LockTemplate.execute} of a request of two keys (given unsorted), EXCLUSIVE.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateMulti(ZkLockState ours) {
		return ours.template.execute(MULTI, NOTHING);
	}

	/**
	 * {@code LockTemplate.async().execute} on two keys, EXCLUSIVE, completed stage, joined: the keys
	 * taken one after the other without a thread.
	 * @param ours the template
	 * @return the result, for JMH to consume
	 */
	@Benchmark
	public Object templateAsyncMulti(ZkLockState ours) {
		return ours.template.async().execute(MULTI, NOTHING_ASYNC).join();
	}

	/**
	 * {@code @DistributedLock} proxy call on two keys (given unsorted), EXCLUSIVE, SpEL paths.
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedMulti(AnnotatedState annotated) {
		annotated.service.transfer("b", "a");
	}

	/**
	 * Baseline: a lease of Curator {@code InterProcessSemaphoreV2}.
	 * @param raw the recipes
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawSemaphore(RawCuratorState raw) throws Exception {
		raw.semaphore.returnLease(raw.semaphore.acquire());
	}

	/**
	 * {@code LockTemplate.execute} of a permit of the same semaphore size.
	 * @param ours the template
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templatePermit(ZkLockState ours) {
		return ours.template.execute(PERMIT, NOTHING);
	}

	/**
	 * {@code LockTemplate.async().execute} of a permit of the same semaphore size, completed stage,
	 * joined: a lease made without a thread.
	 * @param ours the template
	 * @return the result, for JMH to consume
	 */
	@Benchmark
	public Object templateAsyncPermit(ZkLockState ours) {
		return ours.template.async().execute(PERMIT, NOTHING_ASYNC).join();
	}

	/**
	 * {@code @DistributedSemaphore} proxy call, a permit of the same semaphore size.
	 * @param annotated the application
	 */
	@Benchmark
	public void annotatedPermit(AnnotatedState annotated) {
		annotated.service.permit(AnnotatedState.KEY);
	}

	/**
	 * Peer: Spring Integration {@code ZookeeperLockRegistry.obtain(key)}, {@code lock()},
	 * {@code unlock()}.
	 * @param peer the registry
	 */
	@Benchmark
	public void springIntegration(SpringIntegrationState peer) {
		Lock lock = peer.registry.obtain(SpringIntegrationState.KEY);
		lock.lock();
		lock.unlock();
	}

	/**
	 * Peer: lock4j {@code LockTemplate.lock(key)} and {@code releaseLock} on its ZooKeeper executor.
	 * @param peer the template
	 */
	@Benchmark
	public void lock4j(Lock4jState peer) {
		LockInfo info = peer.template.lock(peer.key);
		if (info == null) {
			throw new IllegalStateException("lock4j did not acquire '" + peer.key + "'");
		}
		peer.template.releaseLock(info);
	}

	/**
	 * Baseline of the first use of a key: a new Curator {@code InterProcessMutex} on a never-seen
	 * path whose two parents are missing ({@link ColdKeys}), as a starter that made no recipe cache
	 * would; its create fails, Curator creates the parents, then creates the lock znode again.
	 * @param keys the never-seen paths
	 * @throws Exception if Curator fails
	 */
	@Benchmark
	public void rawMutexColdKey(ColdKeys keys) throws Exception {
		cycle(new InterProcessMutex(keys.client(), keys.nextRawPath()));
	}

	/**
	 * {@code LockTemplate.execute}, EXCLUSIVE, on a never-seen key of the same depth as
	 * {@link #rawMutexColdKey}'s paths, its two parents missing: a recipe built and cached, the
	 * parents created, the lock taken and released.
	 * @param ours the template
	 * @param keys the never-seen keys
	 * @return the callback's result ({@code null}), for JMH to consume
	 */
	@Benchmark
	public Object templateColdKey(ZkLockState ours, ColdKeys keys) {
		return ours.template.execute(keys.nextKey(), LockMode.EXCLUSIVE, null, NOTHING);
	}

	static void cycle(InterProcessMutex mutex) throws Exception {
		mutex.acquire();
		mutex.release();
	}

}
