package io.github.zklock.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;

import io.github.zklock.LockCallback;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.OnBusy;
import io.github.zklock.expression.LockPathTemplate;

/**
 * Runs a {@link io.github.zklock.annotation.DistributedLock @DistributedLock} or
 * {@link io.github.zklock.annotation.DistributedSemaphore @DistributedSemaphore} method through
 * the {@link LockTemplate}: one key (a lock or a permit) through
 * {@link LockTemplate#execute(LockRequest, LockCallback)}, several keys through
 * {@link LockTemplate#executeAll(List, LockCallback)} (their {@code OrSkip} variants for
 * {@link OnBusy#SKIP}). Every key is resolved before any ZooKeeper request, the lock is released
 * on the calling thread after the method returns or throws (with {@code lockAtLeastFor}: by a
 * scheduler thread once that time has passed since the grant), and the method's own exception,
 * checked or not, propagates unchanged.
 */
public class DistributedLockInterceptor implements MethodInterceptor {

	private static final Supplier<@Nullable Object> SKIPPED = () -> null;

	private static final Supplier<@Nullable Object> SKIPPED_OPTIONAL = Optional::empty;

	private final LockOperationSource operationSource;

	private final Supplier<LockTemplate> lockTemplate;

	/**
	 * Create an interceptor.
	 * @param operationSource finds the lock declaration of a method
	 * @param lockTemplate supplies the template, looked up on first call so that the advisor can be
	 * created before the Curator client
	 */
	public DistributedLockInterceptor(LockOperationSource operationSource, Supplier<LockTemplate> lockTemplate) {
		this.operationSource = operationSource;
		this.lockTemplate = lockTemplate;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		LockOperation operation = this.operationSource.getOperation(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		LockCallback<@Nullable Object> callback = (handle) -> {
			try {
				return invocation.proceed();
			}
			catch (RuntimeException | Error ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new ThrowableHolder(ex);
			}
		};
		try {
			if (!operation.isMultiLock()) {
				LockPathTemplate path = operation.paths().get(0);
				LockRequest request = request(operation, path, invocation.getArguments(), target);
				return (operation.onBusy() == OnBusy.SKIP)
						? this.lockTemplate.get().executeOrSkip(request, callback, skipped(operation))
						: this.lockTemplate.get().execute(request, callback);
			}
			// All keys resolved first: a bad value fails the call before any request.
			List<LockRequest> requests = new ArrayList<>(operation.paths().size());
			for (LockPathTemplate path : operation.paths()) {
				requests.add(request(operation, path, invocation.getArguments(), target));
			}
			return (operation.onBusy() == OnBusy.SKIP)
					? this.lockTemplate.get().executeAllOrSkip(requests, callback, skipped(operation))
					: this.lockTemplate.get().executeAll(requests, callback);
		}
		catch (ThrowableHolder holder) {
			throw holder.getCause();
		}
	}

	private LockRequest request(LockOperation operation, LockPathTemplate path, @Nullable Object[] args,
			@Nullable Object target) {
		String key = this.operationSource.resolvePath(operation, path, args, target);
		// Named after the template: resolved values would make a metric per key.
		return new LockRequest(key, operation.mode(), operation.reentrant(), operation.waitTime(), path.getSource(),
				operation.permits(), operation.lockAtLeastFor());
	}

	private static Supplier<@Nullable Object> skipped(LockOperation operation) {
		return (operation.method().getReturnType() == Optional.class) ? SKIPPED_OPTIONAL : SKIPPED;
	}

	/** Carries a checked exception of the method through the template, to be thrown unchanged. */
	@SuppressWarnings("serial")
	private static final class ThrowableHolder extends RuntimeException {

		ThrowableHolder(Throwable cause) {
			super(null, cause, false, false);
		}

	}

}
