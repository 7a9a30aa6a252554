package io.github.zklock.aop;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;

/**
 * Runs a {@code @DistributedLock} or {@code @DistributedSemaphore} method returning Reactor's
 * {@code Mono} or {@code Flux}: nothing happens on assembly; each subscription acquires a grant of
 * its own without blocking ({@link LockTemplate#acquireAsync}), then invokes the method (a clone
 * of the invocation per subscription) and subscribes to what it returns, and releases the grant
 * on complete, error or cancel ({@code usingWhen}). Referenced only for those return types, so that
 * Reactor stays optional.
 */
final class ReactiveLocks {

	private static final Log logger = LogFactory.getLog(ReactiveLocks.class);

	private ReactiveLocks() {
	}

	/**
	 * Build the publisher a locked reactive method returns instead of its own.
	 * @param returnType {@code Mono} or {@code Flux}
	 * @param template the template that grants
	 * @param requests the resolved keys, one or several
	 * @param skip whether a busy lock completes empty instead of failing
	 * @param invocation the call, proceeded once per subscription
	 * @return a {@code Mono} or {@code Flux} as declared
	 * @throws IllegalStateException if the invocation cannot be cloned (not a Spring AOP proxy's)
	 */
	static Publisher<?> lock(Class<?> returnType, LockTemplate template, List<LockRequest> requests, boolean skip,
			MethodInvocation invocation) {
		if (!(invocation instanceof ProxyMethodInvocation proxyInvocation)) {
			throw new IllegalStateException("A Mono or Flux under a lock invokes its method once per subscription, "
					+ "which needs a Spring AOP proxy's invocation; got " + invocation.getClass().getName());
		}
		if (returnType == Mono.class) {
			return Mono.usingWhen(grant(template, requests, skip),
					(handle) -> untilLost(monoBody(proxyInvocation, template).flux(), handle).singleOrEmpty()
						.contextWrite((context) -> ReactiveLockContext.with(context, handle)),
					ReactiveLocks::release, (handle, ex) -> release(handle), ReactiveLocks::release);
		}
		return Flux.usingWhen(grant(template, requests, skip),
				(handle) -> untilLost(fluxBody(proxyInvocation, template), handle)
					.contextWrite((context) -> ReactiveLockContext.with(context, handle)),
				ReactiveLocks::release, (handle, ex) -> release(handle), ReactiveLocks::release);
	}

	/**
	 * Acquire on subscription. Cancelling gives up the wait ({@code fromFuture} cancels the
	 * template's future, which releases a grant made meanwhile); a grant delivered just as the
	 * subscription is cancelled is discarded by Reactor, and released here.
	 */
	private static Mono<AsyncLockHandle> grant(LockTemplate template, List<LockRequest> requests, boolean skip) {
		Mono<AsyncLockHandle> grant;
		if (skip) {
			grant = Mono
				.fromFuture(() -> (requests.size() == 1) ? template.acquireAsyncOrSkip(requests.get(0))
						: template.acquireAllAsyncOrSkip(requests))
				.flatMap(Mono::justOrEmpty);
		}
		else {
			grant = Mono.fromFuture(() -> (requests.size() == 1) ? template.acquireAsync(requests.get(0))
					: template.acquireAllAsync(requests));
		}
		return grant.doOnDiscard(Object.class, ReactiveLocks::releaseDiscarded);
	}

	/**
	 * Invoke the method on subscription, on the template's async executor when it has one (as
	 * {@link LockTemplate#executeAsync executeAsync} does), else on the thread that delivers the
	 * grant.
	 */
	private static Mono<Object> monoBody(ProxyMethodInvocation invocation, LockTemplate template) {
		Mono<Object> body = Mono.defer(() -> Mono.from(invoke(invocation)));
		Executor executor = template.getAsyncExecutor();
		return (executor != null) ? body.subscribeOn(Schedulers.fromExecutor(executor)) : body;
	}

	private static Flux<Object> fluxBody(ProxyMethodInvocation invocation, LockTemplate template) {
		Flux<Object> body = Flux.defer(() -> invoke(invocation));
		Executor executor = template.getAsyncExecutor();
		return (executor != null) ? body.subscribeOn(Schedulers.fromExecutor(executor)) : body;
	}

	/** Proceed with a clone of the call: each subscription invokes the method once. */
	@SuppressWarnings("unchecked")
	private static Publisher<Object> invoke(ProxyMethodInvocation invocation) {
		Object result;
		try {
			result = invocation.invocableClone().proceed();
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		return (result != null) ? (Publisher<Object>) result : Mono.empty();
	}

	/**
	 * Cut the work short when the registry signals the grant lost (interrupt-on-lost): the
	 * subscription to the method's publisher is cancelled, and the publisher ends with
	 * {@link LockLostException} (also when the work ended just as the loss was signalled).
	 * ({@code takeUntilOther} on an erroring publisher would not cancel the work: only its
	 * completion does.)
	 */
	private static Flux<Object> untilLost(Flux<Object> body, AsyncLockHandle handle) {
		CompletableFuture<Void> lost = handle.whenLost().toCompletableFuture();
		return body.takeUntilOther(Mono.fromFuture(lost, true))
			.concatWith(Mono.defer(() -> lost.isDone()
					? Mono.error(new LockLostException(handle.path(), handle.mode(), "the ZooKeeper session was lost "
							+ "while the reactive work held the lock; the subscription was cancelled"))
					: Mono.empty()));
	}

	private static Mono<Void> release(AsyncLockHandle handle) {
		return Mono.fromFuture(handle.releaseAsync(), true).onErrorResume((ex) -> {
			// The work's own outcome wins; the ephemeral znode dies with the session.
			logger.warn("Failed to release " + handle.mode() + " lock '" + handle.path() + "'", ex);
			return Mono.empty();
		});
	}

	private static void releaseDiscarded(@Nullable Object discarded) {
		Object grant = (discarded instanceof Optional<?> optional) ? optional.orElse(null) : discarded;
		if (grant instanceof AsyncLockHandle handle) {
			release(handle).subscribe();
		}
	}

}
