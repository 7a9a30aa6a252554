package io.github.zklock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A grant owned by itself rather than by a thread: returned by the {@link AsyncLockTemplate}
 * ({@link LockTemplate#async()}) and passed to the action of its {@code execute} and of
 * {@link LockTemplate#executeAsync(String, LockMode, java.time.Duration, java.util.function.Function)}.
 *
 * <p>Thread rules: every method may be called from any thread, {@link #release()} included. A
 * registry that can acquire without a thread ({@link io.github.zklock.spi.LockRegistry#submit}; {@code CuratorLockRegistry}
 * for every kind) makes grants owned by no thread, released without waiting for ZooKeeper. With a
 * registry that cannot, grants are acquired on a thread of the template's (a pooled daemon thread,
 * or a virtual thread, see {@link LockTemplateBuilder#virtualGrantThreads}); where the registry
 * binds the grant to that thread the thread stays parked while the grant is held, and
 * {@code release()} from another thread asks it to release and waits until it has.
 *
 * <p>Asynchronous grants are not reentrant: a thread's identity says nothing about which
 * asynchronous work runs on it, so a second request for a key that an asynchronous grant holds
 * (from the same chain of work or not) waits like any other and fails when its wait time runs
 * out, a synchronous request made inside the work included. With {@link LockRequest#WAIT_FOREVER}
 * it would wait forever: give nested requests a finite wait time.
 */
public interface AsyncLockHandle extends LockHandle {

	/**
	 * Release the grant without blocking the calling thread. Idempotent: later calls return the
	 * same future.
	 * @return a future that completes once the grant is released: at once when its znode is handed
	 * to the application's next request of the key, else when the lock znode's delete was answered,
	 * so that another application asking after it finds the key free (or, when the delete failed,
	 * exceptionally with the failure: Curator's guaranteed delete removes the znode once
	 * reconnected, or ZooKeeper when the session ends)
	 */
	CompletableFuture<Void> releaseAsync();

	/**
	 * Return a stage that completes when this grant is lost and its holder is asked to stop:
	 * when the registry interrupts the holders of lost grants ({@code zk.lock.interrupt-on-lost},
	 * {@code CuratorLockRegistry.setInterruptOnLost}), which it does for every grant it made without
	 * a thread (see {@link io.github.zklock.spi.LockRegistry#submit}: with {@code CuratorLockRegistry}, every kind and
	 * multi-locks of them) and for EXCLUSIVE reentrant, READ and WRITE grants made on a grant
	 * thread. Otherwise it never completes; the loss is still reported by {@link #state()},
	 * {@link #checkHeld()} and the registry's listeners.
	 * {@link LockTemplate#executeAsync executeAsync} and the {@code @DistributedLock} support for
	 * asynchronous methods cancel work that is still running and fail its result with
	 * {@link LockLostException}; work that had completed keeps its result (see
	 * {@link AsyncLockTemplate#execute}).
	 * @return the stage, completed once at most
	 */
	CompletionStage<Void> whenLost();

	/**
	 * Release the grant; from any thread. For a grant owned by no thread, returns once the delete
	 * of its znode is sent, without waiting for the answer (it may be called where a wait would
	 * hold up ZooKeeper's event thread): to know that another application will find the key free,
	 * wait for {@link #releaseAsync()}'s future. For the others, blocks until the lock znode is
	 * deleted. Idempotent.
	 * @throws LockException if the release failed
	 */
	@Override
	void release();

}
