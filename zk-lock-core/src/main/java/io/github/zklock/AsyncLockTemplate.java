package io.github.zklock;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The asynchronous form of {@link LockTemplate}, from {@link LockTemplate#async()}: the same
 * three verbs on a {@link LockRequest}, none of which blocks the calling thread, as Redisson's
 * {@code RLockAsync} is to {@code RLock}. For {@code Mono} and {@code Flux}, see the reactive
 * operator of zk-lock-spring ({@code io.github.zklock.reactive.ReactiveLockOperator}).
 *
 * <p>Grants are {@link AsyncLockHandle}s: owned by the grant, not by a thread, released from any
 * thread, and not reentrant (a nested request for a key that an asynchronous grant holds waits
 * like any other: give it a finite wait time). The calling thread only validates the request: an
 * illegal key throws {@link InvalidLockPathException} at once, nothing requested. The futures
 * complete on the template's async executor when it has one (Spring Boot's
 * {@code applicationTaskExecutor}), else on a grant thread (never on ZooKeeper's event thread).
 * Grants wait and are held with no thread when the registry queues them itself
 * ({@link io.github.zklock.spi.LockRegistry#submit}; {@code CuratorLockRegistry} does for every kind: EXCLUSIVE, READ,
 * WRITE, non-reentrant, permits, and multi-locks of them one key after the other); with a
 * registry that cannot, they are acquired on a grant thread.
 * Busy for the whole wait time:
 * {@code acquire} fails with {@link LockAcquisitionException}, {@code tryAcquire} completes
 * empty, {@code execute} follows the request's {@linkplain LockRequest#onBusy() on-busy policy};
 * ZooKeeper failures complete exceptionally with {@link LockException}, never as busy. Cancelling a
 * returned future before the grant gives up the wait (a grant made meanwhile is released at once).
 *
 * <p>Implementations are thread-safe.
 */
public interface AsyncLockTemplate {

	/**
	 * Run asynchronous work under the requested lock and hold the lock until the work's stage
	 * completes.
	 * <ul>
	 * <li>Once granted, {@code action} is invoked with the grant (an {@link AsyncLockHandle}) on the
	 * async executor, or on the grant's thread without one. While the action itself runs (not its
	 * stage's later callbacks), {@link LockContext#current()} returns the grant and the hold
	 * observation is current: a transaction committed within the action is checked by the commit
	 * guard. Afterwards, use the handle passed to the action.</li>
	 * <li>The grant is held until the returned stage completes, normally, exceptionally or by
	 * cancellation, then released; the future returned here completes after that, with
	 * {@link LockResult#executed} of the stage's value, or exceptionally with its exception (a
	 * {@link CompletionException}'s cause unwrapped) or with what the action threw.</li>
	 * <li>Busy: with {@link OnBusy#SKIP}, completes with {@link LockResult#skipped()}, the action not
	 * run; with {@link OnBusy#FAIL}, exceptionally with {@link LockAcquisitionException}.</li>
	 * <li>Cancelling the returned future after the grant cancels the action's stage when that is a
	 * {@link CompletableFuture} and releases the grant when the stage completes (a cancelled
	 * future is done at once: the release follows in the background).</li>
	 * <li>Lost: what came first, the stage's completion or the registry's signal of the loss
	 * ({@link AsyncLockHandle#whenLost()}), is decided once, atomically (a stage the action returns
	 * already completed has completed first). A loss signalled while the stage runs cancels it, and
	 * the future completes exceptionally with {@link LockLostException} once the grant is released:
	 * the work did not complete under the lock (the message says whether the stage was cancelled or
	 * ended after the loss without being cancelled). A loss signalled after the stage completed, while the
	 * release is on its way, does not undo the work: the future completes with
	 * {@link LockResult#executedThenLost} of the stage's value ({@link LockResult#lockLostAfterWork()}),
	 * or exceptionally with the stage's own exception.</li>
	 * </ul>
	 * @param <T> the result type
	 * @param request what to lock
	 * @param action the work to run under the lock; must not return {@code null}
	 * @return the outcome, completed after the release; exceptionally with
	 * {@link LockLostException} only when the work did not complete before the loss
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 */
	<T> CompletableFuture<LockResult<T>> execute(LockRequest request,
			Function<LockHandle, ? extends CompletionStage<T>> action);

	/**
	 * Acquire the requested lock; the caller must release the grant ({@link AsyncLockHandle#release()}
	 * or {@link AsyncLockHandle#releaseAsync()}, from any thread).
	 * @param request what to lock (its on-busy policy is only observed: busy always fails here)
	 * @return the grant; completes exceptionally with {@link LockAcquisitionException} when busy for
	 * the whole wait time, with {@link LockException} when ZooKeeper cannot serve the request
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 */
	CompletableFuture<AsyncLockHandle> acquire(LockRequest request);

	/**
	 * Try to acquire the requested lock within its wait time.
	 * @param request what to lock (its on-busy policy is only observed: busy is empty here)
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * (exceptionally with {@link LockException} when ZooKeeper cannot serve the request, never
	 * empty then)
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 */
	CompletableFuture<Optional<AsyncLockHandle>> tryAcquire(LockRequest request);

}
