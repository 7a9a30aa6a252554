package io.github.zklock.aop;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockCallback;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;

/**
 * Runs an ordinary method through {@link LockTemplate#execute(LockRequest, LockCallback)}: the lock
 * is taken on the calling thread before the method runs and released after it returns or throws;
 * the method's own exception, checked or not, propagates unchanged. A skipped call returns
 * {@code null}, or {@code Optional.empty()} for a method returning {@code Optional}.
 */
final class BlockingLockInvoker implements LockInvoker {

	private final @Nullable Object skipped;

	/**
	 * @param skipped what a skipped call returns
	 */
	BlockingLockInvoker(@Nullable Object skipped) {
		this.skipped = skipped;
	}

	@Override
	public @Nullable Object invoke(LockTemplate template, LockRequest request, MethodInvocation invocation)
			throws Throwable {
		LockResult<@Nullable Object> result;
		try {
			result = template.execute(request, (handle) -> {
				try {
					return invocation.proceed();
				}
				catch (RuntimeException | Error ex) {
					throw ex;
				}
				catch (Throwable ex) {
					throw new ThrowableHolder(ex);
				}
			});
		}
		catch (ThrowableHolder holder) {
			throw holder.getCause();
		}
		return result.orElse(this.skipped);
	}

	/** Carries a checked exception of the method through the template, to be thrown unchanged. */
	@SuppressWarnings("serial")
	private static final class ThrowableHolder extends RuntimeException {

		ThrowableHolder(Throwable cause) {
			super(null, cause, false, false);
		}

	}

}
