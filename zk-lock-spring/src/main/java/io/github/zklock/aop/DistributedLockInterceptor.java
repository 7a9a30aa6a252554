package io.github.zklock.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;

/**
 * Runs a {@link io.github.zklock.annotation.DistributedLock @DistributedLock} method through
 * {@link LockTemplate#execute(LockRequest, io.github.zklock.LockCallback)}: the path is resolved
 * before any ZooKeeper request, the lock is released on the calling thread after the method
 * returns or throws, and the method's own exception, checked or not, propagates unchanged.
 */
public class DistributedLockInterceptor implements MethodInterceptor {

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
		String path = this.operationSource.resolvePath(operation, invocation.getArguments(), target);
		LockRequest request = new LockRequest(path, operation.mode(), operation.reentrant(), operation.waitTime(),
				operation.path().getSource());
		try {
			return this.lockTemplate.get().execute(request, (handle) -> {
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
	}

	/** Carries a checked exception of the method through the template, to be thrown unchanged. */
	@SuppressWarnings("serial")
	private static final class ThrowableHolder extends RuntimeException {

		ThrowableHolder(Throwable cause) {
			super(null, cause, false, false);
		}

	}

}
