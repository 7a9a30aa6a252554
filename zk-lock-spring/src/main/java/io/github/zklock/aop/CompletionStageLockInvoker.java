package io.github.zklock.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.zklock.AsyncLockTemplate;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;

/**
 * Runs a method returning {@code CompletionStage} or {@code CompletableFuture} through
 * {@link AsyncLockTemplate#execute}: the method is invoked once granted and the grant released
 * when its stage completes; what it throws, checked or not, fails the returned future; a
 * {@code null} stage completes with {@code null}. A skipped call completes with {@code null}, or
 * an empty {@code Optional} for a stage of {@code Optional}. Cancelling the returned future cancels
 * the wait or the work.
 */
final class CompletionStageLockInvoker implements LockInvoker {

	private final @Nullable Object skipped;

	/**
	 * @param skipped what a skipped call completes with
	 */
	CompletionStageLockInvoker(@Nullable Object skipped) {
		this.skipped = skipped;
	}

	@Override
	public CompletableFuture<@Nullable Object> invoke(LockTemplate template, LockRequest request,
			MethodInvocation invocation) {
		CompletableFuture<LockResult<@Nullable Object>> outcome = template.async()
			.execute(request, (handle) -> proceed(invocation));
		CompletableFuture<@Nullable Object> result = new CompletableFuture<>();
		outcome.whenComplete((value, ex) -> {
			if (ex != null) {
				result.completeExceptionally((ex instanceof CompletionException && ex.getCause() != null)
						? ex.getCause() : ex);
			}
			else {
				result.complete(value.orElse(this.skipped));
			}
		});
		result.whenComplete((value, ex) -> {
			if (result.isCancelled()) {
				outcome.cancel(false);
			}
		});
		return result;
	}

	@SuppressWarnings("unchecked")
	private static CompletionStage<@Nullable Object> proceed(MethodInvocation invocation) {
		Object stage;
		try {
			stage = invocation.proceed();
		}
		catch (Throwable ex) {
			// Checked or not, as a failed future: the caller holds a future, not a stack.
			return CompletableFuture.failedFuture(ex);
		}
		return (stage != null) ? (CompletionStage<@Nullable Object>) stage : CompletableFuture.completedFuture(null);
	}

}
