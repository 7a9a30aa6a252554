package io.github.zklock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A grant owned by itself rather than by a thread: returned by the {@link AsyncLockTemplate}
 * ({@link LockTemplate#async()}) and passed to the action of its {@code execute} and of
 * {@link LockTemplate#executeAsync(String, LockMode, java.time.Duration, java.util.function.Function)}.
 *
 * <p>Thread rules: every method may be called from any thread, {@link #release()} included. Curator's
 * reentrant recipes (EXCLUSIVE, READ, WRITE) only let the thread that acquired a znode release it,
 * so such a grant is acquired and released by a thread of its own, parked while the grant is held
 * (a pooled daemon thread, or a virtual thread, see {@link LockTemplateBuilder#virtualGrantThreads});
 * {@code release()} from another thread asks that thread to release and waits until it has.
 * Non-reentrant EXCLUSIVE grants and permits have no such thread.
 *
 * <p>Asynchronous grants are not reentrant: a thread's identity says nothing about which
 * asynchronous work runs on it, so a second request for a key that an asynchronous grant holds
 * (from the same chain of work or not) waits like any other and fails when its wait time runs
 * out. With {@link LockRequest#WAIT_FOREVER} it would wait forever: give nested asynchronous
 * requests a finite wait time. One exception: when the template has no async executor, the
 * action of {@code execute} starts on the grant's own thread, and a synchronous request made
 * there, before the action returns its stage, re-enters the grant as on any thread that holds a
 * lock (it is released before the action returns, so it never outlives the grant).
 */
public interface AsyncLockHandle extends LockHandle {

	/**
	 * Release the grant without blocking the calling thread. Idempotent: later calls return the
	 * same future.
	 * @return a future that completes when the lock znode is deleted (or, when the delete failed,
	 * exceptionally with the failure: Curator's guaranteed delete removes the znode once reconnected,
	 * or ZooKeeper when the session ends)
	 */
	CompletableFuture<Void> releaseAsync();

	/**
	 * Return a stage that completes when this grant is lost and its holder is asked to stop:
	 * when the registry interrupts the holders of lost grants ({@code zk.lock.interrupt-on-lost},
	 * {@code CuratorLockRegistry.setInterruptOnLost}), which it does for the grants bound to a
	 * thread (EXCLUSIVE reentrant, READ, WRITE, and multi-locks of those), as for synchronous ones.
	 * Otherwise, and for non-reentrant EXCLUSIVE grants and permits, it never completes; the loss
	 * is still reported by {@link #state()}, {@link #checkHeld()} and the registry's listeners.
	 * {@link LockTemplate#executeAsync executeAsync} and the {@code @DistributedLock} support for
	 * asynchronous methods cancel the work and fail its result with {@link LockLostException} when
	 * it completes.
	 * @return the stage, completed once at most
	 */
	CompletionStage<Void> whenLost();

	/**
	 * Release the grant; from any thread. Blocks until the lock znode is deleted (see
	 * {@link #releaseAsync()} for the non-blocking form). Idempotent.
	 * @throws LockException if the release failed
	 */
	@Override
	void release();

}
