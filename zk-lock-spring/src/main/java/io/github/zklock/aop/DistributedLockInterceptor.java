package io.github.zklock.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.ResolvableType;

import io.github.zklock.LockCallback;
import io.github.zklock.LockHandle;
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
 *
 * <p>Asynchronous methods hold an asynchronous grant (see {@link io.github.zklock.AsyncLockHandle}):
 * a method returning {@code CompletionStage} or {@code CompletableFuture} runs through
 * {@link LockTemplate#executeAsync(LockRequest, Function)} and its variants, the method invoked
 * once granted and the grant released when its stage completes (what it throws fails the returned
 * future); a method returning Reactor's {@code Mono} or {@code Flux} returns a publisher that, per
 * subscription, acquires ({@link LockTemplate#acquireAsync}), invokes the method and subscribes to
 * its publisher with the handle in the Reactor context ({@link ReactiveLockContext}), and releases
 * on complete, error or cancel. Keys are resolved at call time in both cases. Reactor classes are
 * only loaded for methods that return them.
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
		Class<?> returnType = operation.method().getReturnType();
		if (returnType == CompletionStage.class || returnType == CompletableFuture.class) {
			return invokeAsync(invocation, operation, requests(operation, invocation.getArguments(), target));
		}
		if (LockOperationSource.isReactorType(returnType)) {
			// Only here is a Reactor class loaded: the module works without Reactor.
			return ReactiveLocks.lock(returnType, this.lockTemplate.get(),
					requests(operation, invocation.getArguments(), target), operation.onBusy() == OnBusy.SKIP,
					invocation);
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
			List<LockRequest> requests = requests(operation, invocation.getArguments(), target);
			return (operation.onBusy() == OnBusy.SKIP)
					? this.lockTemplate.get().executeAllOrSkip(requests, callback, skipped(operation))
					: this.lockTemplate.get().executeAll(requests, callback);
		}
		catch (ThrowableHolder holder) {
			throw holder.getCause();
		}
	}

	/**
	 * Run a method returning {@code CompletionStage} or {@code CompletableFuture}: the grant is held
	 * until the stage it returns completes; what it throws fails the returned future.
	 */
	private CompletableFuture<@Nullable Object> invokeAsync(MethodInvocation invocation, LockOperation operation,
			List<LockRequest> requests) {
		Function<LockHandle, CompletionStage<@Nullable Object>> action = (handle) -> proceedAsync(invocation);
		LockTemplate template = this.lockTemplate.get();
		if (operation.onBusy() == OnBusy.SKIP) {
			Supplier<@Nullable Object> whenBusy = skippedAsync(operation);
			return (requests.size() == 1) ? template.executeAsyncOrSkip(requests.get(0), action, whenBusy)
					: template.executeAllAsyncOrSkip(requests, action, whenBusy);
		}
		return (requests.size() == 1) ? template.executeAsync(requests.get(0), action)
				: template.executeAllAsync(requests, action);
	}

	@SuppressWarnings("unchecked")
	private static CompletionStage<@Nullable Object> proceedAsync(MethodInvocation invocation) {
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

	/** Every key resolved first: a bad value fails the call before any request. */
	private List<LockRequest> requests(LockOperation operation, @Nullable Object[] args, @Nullable Object target) {
		List<LockRequest> requests = new ArrayList<>(operation.paths().size());
		for (LockPathTemplate path : operation.paths()) {
			requests.add(request(operation, path, args, target));
		}
		return requests;
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

	/**
	 * A skipped {@code CompletableFuture<Optional<T>>} completes with an empty Optional, any other
	 * with {@code null}; the type is only looked at when a call is skipped.
	 */
	private static Supplier<@Nullable Object> skippedAsync(LockOperation operation) {
		return () -> {
			Class<?> value = ResolvableType.forMethodReturnType(operation.method())
				.as(CompletionStage.class)
				.getGeneric(0)
				.resolve();
			return (value == Optional.class) ? Optional.empty() : null;
		};
	}

	/** Carries a checked exception of the method through the template, to be thrown unchanged. */
	@SuppressWarnings("serial")
	private static final class ThrowableHolder extends RuntimeException {

		ThrowableHolder(Throwable cause) {
			super(null, cause, false, false);
		}

	}

}
