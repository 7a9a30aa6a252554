package io.github.zklock;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One run of asynchronous work under a grant, from the stage its action returned to the outcome
 * of {@link AsyncLockTemplate#execute}: the grant is released once the stage completes, and the
 * outcome completed once the release has. Whether the stage completed or the grant's loss was
 * signalled first is decided by one compare-and-set on {@link #state}, as
 * {@code java.util.concurrent.FutureTask} decides between completion and cancellation, so that
 * work that completed is never reported as cancelled:
 * <pre>
 * state              event                   next               does
 * RUNNING            stage completed         COMPLETED          releases
 * RUNNING            loss signalled          LOST               cancels the stage (releases once it completes)
 * COMPLETED          loss signalled          COMPLETED_LOST     -
 * COMPLETED          release completed       REPORTED           the stage's value (executed) or its failure
 * COMPLETED_LOST     release completed       COMPLETED_LOST     the stage's value (executedThenLost) or its failure
 * LOST               stage completed         LOST               releases
 * LOST               release completed       LOST               LockLostException
 * </pre>
 * Any other event changes nothing. A run starts RUNNING, or COMPLETED when the action returned a
 * stage completed already: that one completed before the loss is listened to (the action's own
 * synchronous part cannot be cancelled; it is guarded where it acts, by
 * {@link LockHandle#checkHeld()}, the fencing token and the commit guard).
 */
final class AsyncWork<T> {

	private static final Log logger = LogFactory.getLog(AsyncWork.class);

	/** Where a run stands; see the type's table. */
	private enum State {

		RUNNING, COMPLETED, COMPLETED_LOST, LOST, REPORTED

	}

	private final AtomicReference<State> state = new AtomicReference<>(State.RUNNING);

	private final AsyncLockHandle grant;

	private final CompletionStage<T> stage;

	private final CompletableFuture<LockResult<T>> outcome;

	private AsyncWork(AsyncLockHandle grant, CompletionStage<T> stage, CompletableFuture<LockResult<T>> outcome) {
		this.grant = grant;
		this.stage = stage;
		this.outcome = outcome;
	}

	/**
	 * Follow a stage to its outcome: release the grant when it completes, cancel it when the grant
	 * is lost first or the outcome is cancelled.
	 * @param grant the grant the work holds
	 * @param stage what the action returned
	 * @param outcome completed once the grant is released
	 */
	static <T> void follow(AsyncLockHandle grant, CompletionStage<T> stage, CompletableFuture<LockResult<T>> outcome) {
		AsyncWork<T> work = new AsyncWork<>(grant, stage, outcome);
		outcome.whenComplete((value, ex) -> {
			if (outcome.isCancelled()) {
				cancel(stage);
			}
		});
		if (isDone(stage)) {
			work.state.set(State.COMPLETED);
		}
		// The loss is listened to before the release can start: a release that completes at once
		// (the grant's znode is gone) reports at once.
		grant.whenLost().thenRun(work::lost);
		stage.whenComplete(work::stageCompleted);
	}

	private void stageCompleted(@Nullable T value, @Nullable Throwable failure) {
		this.state.compareAndSet(State.RUNNING, State.COMPLETED);
		this.grant.releaseAsync().whenComplete((released, releaseFailure) -> {
			if (releaseFailure != null) {
				logger.warn("Failed to release " + this.grant.mode() + " lock '" + this.grant.path() + "'",
						unwrap(releaseFailure));
			}
			report(value, failure);
		});
	}

	private void lost() {
		if (this.state.compareAndSet(State.RUNNING, State.LOST)) {
			cancel(this.stage);
		}
		else {
			this.state.compareAndSet(State.COMPLETED, State.COMPLETED_LOST);
		}
	}

	private void report(@Nullable T value, @Nullable Throwable failure) {
		State decided = this.state.compareAndExchange(State.COMPLETED, State.REPORTED);
		Throwable ended = unwrap(failure);
		if (decided == State.LOST) {
			boolean cancelled = ended instanceof CancellationException;
			LockLostException lost = new LockLostException(this.grant.path(), this.grant.mode(),
					"the lock was lost while the asynchronous work was running; " + (cancelled ? "the work was cancelled"
							: "its stage ended after the loss without being cancelled"));
			if (ended != null && !cancelled) {
				lost.addSuppressed(ended);
			}
			this.outcome.completeExceptionally(lost);
		}
		else if (ended != null) {
			this.outcome.completeExceptionally(ended);
		}
		else if (decided == State.COMPLETED_LOST) {
			logger.info("The " + this.grant.mode() + " lock '" + this.grant.path() + "' was lost after its "
					+ "asynchronous work had completed, before its release; the work's result stands");
			this.outcome.complete(LockResult.executedThenLost(value));
		}
		else {
			this.outcome.complete(LockResult.executed(value));
		}
	}

	private static @Nullable Throwable unwrap(@Nullable Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

	private static boolean isDone(CompletionStage<?> stage) {
		try {
			return stage.toCompletableFuture().isDone();
		}
		catch (UnsupportedOperationException ex) {
			return false;
		}
	}

	/** Cancel the work; a stage that cannot be cancelled ends on its own. */
	private static void cancel(CompletionStage<?> stage) {
		try {
			stage.toCompletableFuture().cancel(true);
		}
		catch (UnsupportedOperationException ex) {
			// Released once it ends.
		}
	}

}
