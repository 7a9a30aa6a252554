package io.github.zklock;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.zklock.engine.Attempt;
import io.github.zklock.engine.LockEngine;

/**
 * The {@link AsyncLockTemplate} of a {@link LockTemplate}: acquisitions through the engine's grant
 * threads, the work invoked once granted with the grant in {@link LockContext}, the release when
 * its stage completes.
 */
final class DefaultAsyncLockTemplate implements AsyncLockTemplate {

	private static final Log logger = LogFactory.getLog(DefaultAsyncLockTemplate.class);

	private final LockEngine engine;

	DefaultAsyncLockTemplate(LockEngine engine) {
		this.engine = engine;
	}

	@Override
	public <T> CompletableFuture<LockResult<T>> execute(LockRequest request,
			Function<LockHandle, ? extends CompletionStage<T>> action) {
		Objects.requireNonNull(action, "action must not be null");
		CompletableFuture<LockResult<T>> result = new CompletableFuture<>();
		CompletableFuture<Attempt> grant = this.engine.submit(request, (attempt, ex) -> {
			if (ex != null) {
				result.completeExceptionally(unwrap(ex));
				return;
			}
			AsyncLockHandle granted = attempt.asyncGranted();
			if (granted != null) {
				invoke(granted, attempt, action, result);
			}
			else if (request.onBusy() == OnBusy.SKIP) {
				if (logger.isDebugEnabled()) {
					logger.debug("Skipped " + request.name() + ": " + attempt.describeBusy());
				}
				result.complete(LockResult.skipped());
			}
			else {
				result.completeExceptionally(attempt.busy());
			}
		});
		cancelWith(result, grant);
		return result;
	}

	@Override
	public CompletableFuture<AsyncLockHandle> acquire(LockRequest request) {
		CompletableFuture<AsyncLockHandle> result = new CompletableFuture<>();
		CompletableFuture<Attempt> grant = this.engine.submit(request, (attempt, ex) -> {
			if (ex != null) {
				result.completeExceptionally(unwrap(ex));
			}
			else if (attempt.asyncGranted() != null) {
				completeOrRelease(result, attempt.asyncGranted());
			}
			else {
				result.completeExceptionally(attempt.busy());
			}
		});
		cancelWith(result, grant);
		return result;
	}

	@Override
	public CompletableFuture<Optional<AsyncLockHandle>> tryAcquire(LockRequest request) {
		CompletableFuture<Optional<AsyncLockHandle>> result = new CompletableFuture<>();
		CompletableFuture<Attempt> grant = this.engine.submit(request, (attempt, ex) -> {
			if (ex != null) {
				result.completeExceptionally(unwrap(ex));
			}
			else if (attempt.asyncGranted() != null) {
				AsyncLockHandle granted = attempt.asyncGranted();
				if (!result.complete(Optional.of(granted))) {
					granted.releaseAsync();
				}
			}
			else {
				result.complete(Optional.empty());
			}
		});
		cancelWith(result, grant);
		return result;
	}

	/**
	 * The value of work that ran, or the failure of a busy request: for the key-first
	 * {@link LockTemplate#executeAsync}, whose request fails when busy.
	 */
	static <T> CompletableFuture<T> values(CompletableFuture<LockResult<T>> outcome) {
		CompletableFuture<T> result = new CompletableFuture<>();
		outcome.whenComplete((value, ex) -> {
			if (ex != null) {
				result.completeExceptionally(unwrap(ex));
			}
			else {
				result.complete(value.result());
			}
		});
		cancelWith(result, outcome);
		return result;
	}

	/** Cancelling what the caller holds gives up what it stands for. */
	private static void cancelWith(CompletableFuture<?> result, CompletableFuture<?> source) {
		result.whenComplete((value, ex) -> {
			if (result.isCancelled()) {
				source.cancel(false);
			}
		});
	}

	private static void completeOrRelease(CompletableFuture<AsyncLockHandle> result, AsyncLockHandle granted) {
		if (!result.complete(granted)) {
			// Cancelled just as it was granted.
			granted.releaseAsync();
		}
	}

	private <T> void invoke(AsyncLockHandle grant, Attempt attempt,
			Function<LockHandle, ? extends CompletionStage<T>> action, CompletableFuture<LockResult<T>> result) {
		CompletionStage<T> stage;
		LockContext.push(grant);
		Runnable closeScope = attempt.openScope();
		try {
			stage = action.apply(grant);
			if (stage == null) {
				throw new IllegalStateException("The asynchronous action under lock '" + grant.path()
						+ "' returned null instead of a CompletionStage");
			}
		}
		catch (Throwable ex) {
			stage = CompletableFuture.failedFuture(ex);
		}
		finally {
			closeScope.run();
			LockContext.pop(grant);
		}
		AsyncWork.follow(grant, stage, result);
	}

	private static Throwable unwrap(Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

}
