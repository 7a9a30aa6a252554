package io.github.zklock.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;

import io.github.zklock.LockTemplate;

/**
 * Runs a {@link io.github.zklock.annotation.DistributedLock @DistributedLock} or
 * {@link io.github.zklock.annotation.DistributedSemaphore @DistributedSemaphore} method under its
 * lock: it finds the method's {@link LockOperation} (built and cached once per method by the
 * {@link LockOperationSource}) and makes one call of it, which resolves every key before any
 * ZooKeeper request and runs the method through the invoker chosen for its return type:
 * <ul>
 * <li>an ordinary method through {@link LockTemplate#execute(io.github.zklock.LockRequest,
 * io.github.zklock.LockCallback) LockTemplate.execute}: locked and released on the calling thread
 * (with {@code lockAtLeastFor}: released by a scheduler thread once that time has passed since the
 * grant), the method's own exception, checked or not, propagated unchanged;</li>
 * <li>a method returning {@code CompletionStage} or {@code CompletableFuture} through the
 * {@linkplain LockTemplate#async() asynchronous template}: invoked once granted, the grant
 * released when its stage completes;</li>
 * <li>a method returning Reactor's {@code Mono} or {@code Flux} through the
 * {@link io.github.zklock.reactive.ReactiveLockOperator}: a grant per subscription.</li>
 * </ul>
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
		return operation.invoke(this.lockTemplate.get(), invocation, target);
	}

}
