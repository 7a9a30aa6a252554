package io.github.zklock.aop;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;

/**
 * How a locked method is run, one strategy per return type, chosen once per method by
 * {@link LockOperationSource} (as Spring's {@code TransactionAspectSupport} picks one per method):
 * {@link BlockingLockInvoker} for ordinary methods, {@link CompletionStageLockInvoker} for
 * {@code CompletionStage} and {@code CompletableFuture}, {@link ReactorLockInvoker} for
 * {@code Mono}, {@code Flux}, Kotlin's {@code Flow} and {@code suspend} functions (the only one that
 * loads Reactor classes).
 */
interface LockInvoker {

	/**
	 * Run one call.
	 * @param template the template that grants
	 * @param request the call's request, keys resolved
	 * @param invocation the call
	 * @return what the call returns
	 * @throws Throwable what the method throws, unchanged, or the lock's exceptions
	 */
	@Nullable Object invoke(LockTemplate template, LockRequest request, MethodInvocation invocation) throws Throwable;

}
