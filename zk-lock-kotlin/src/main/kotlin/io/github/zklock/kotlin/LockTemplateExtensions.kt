package io.github.zklock.kotlin

import io.github.zklock.AsyncLockHandle
import io.github.zklock.LockAcquisitionException
import io.github.zklock.LockException
import io.github.zklock.LockLostException
import io.github.zklock.LockRequest
import io.github.zklock.LockTemplate
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withContext

/**
 * Runs [block] under the lock that [request] asks for and returns what it returns; the coroutine
 * suspends, rather than blocks its thread, while the lock is waited for.
 *
 * The grant is asked for through [LockTemplate.async] (an [AsyncLockHandle]: owned by the grant,
 * not by a thread, so [block] may suspend and resume on other threads while it holds it) and
 * released when [block] returns, throws or is cancelled; the release is awaited, in a
 * non-cancellable context, before this function returns or throws.
 *
 * - Cancelling the calling coroutine while it waits gives the wait up: no grant is kept, also when
 *   one was made at the moment of the cancellation (it is released).
 * - Cancelling it while [block] runs cancels [block] (cooperatively, as any coroutine), then
 *   releases the grant.
 * - When the grant is lost ([AsyncLockHandle.whenLost]: its session expired, or it was revoked)
 *   while [block] or a coroutine it launched in its scope runs, [block] is cancelled and this
 *   function throws [LockLostException] once the grant is released. A loss signalled after they
 *   completed (while the release is on its way) changes nothing: what [block] returned is
 *   returned. Which came first is decided once, atomically.
 * - The request's on-busy policy is not applied: a lock that stays busy for the whole wait time
 *   throws [LockAcquisitionException]. For skip-when-busy, use
 *   `async().execute(request) { ... }.await()`, whose `LockResult` tells a skipped run apart.
 * - [io.github.zklock.LockContext] is bound to threads and does not see the grant inside [block]:
 *   use the handle passed to it (its path, fencing token and state).
 *
 * Waiting and holding follow the asynchronous grants of [LockTemplate.async]: see that interface
 * for what a grant of each kind costs.
 *
 * @param request what to lock: key or keys, mode, permits, wait time (`null` for the template's
 *   default)
 * @param block the work, given the grant
 * @return what [block] returns
 * @throws LockAcquisitionException when the lock stayed busy for the whole wait time
 * @throws LockLostException when the grant was lost while [block] ran
 * @throws LockException when ZooKeeper could not serve the request (never reported as busy)
 * @throws io.github.zklock.InvalidLockPathException when a key is not legal, before any request
 */
suspend fun <T> LockTemplate.withLock(request: LockRequest, block: suspend CoroutineScope.(AsyncLockHandle) -> T): T {
	val grant = async().acquire(request)
	val handle = try {
		grant.await()
	}
	catch (ex: CancellationException) {
		// Cancelled as the grant was made: await gives up, the future stays completed with a grant.
		grant.thenAccept { it.releaseAsync() }
		throw ex
	}
	val state = AtomicReference(WorkState.RUNNING)
	try {
		return coroutineScope {
			val work = coroutineContext[Job]!!
			handle.whenLost().thenRun {
				if (state.compareAndSet(WorkState.RUNNING, WorkState.LOST)) {
					work.cancel(CancellationException("the lock was lost: $handle"))
				}
			}
			val value = block(handle)
			// What the block launched in its scope is its work too.
			work.children.forEach { it.join() }
			if (!state.compareAndSet(WorkState.RUNNING, WorkState.COMPLETED)) {
				// Lost first: the value of work cut short does not count.
				throw CancellationException("the lock was lost: $handle")
			}
			value
		}
	}
	catch (ex: CancellationException) {
		if (state.get() == WorkState.LOST) {
			throw LockLostException(handle.path(), handle.mode(),
				"the lock was lost while the coroutine's work was running (${handle.state()}); its work was cancelled")
		}
		throw ex
	}
	finally {
		withContext(NonCancellable) {
			handle.releaseAsync().await()
		}
	}
}

/** Where the work of [withLock] stands against the loss of its grant. */
private enum class WorkState {
	RUNNING, COMPLETED, LOST
}
