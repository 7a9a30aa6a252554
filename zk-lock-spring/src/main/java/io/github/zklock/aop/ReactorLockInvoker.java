package io.github.zklock.aop;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.ReactiveAdapter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.reactive.ReactiveLockOperator;

/**
 * Runs a method returning Reactor's {@code Mono} or {@code Flux} through the
 * {@link ReactiveLockOperator}: nothing happens on assembly; each subscription acquires a grant of
 * its own, invokes the method (a clone of the invocation per subscription), subscribes to what it
 * returns with the grant in the Reactor context, and releases on complete, error or cancel; a
 * skipped subscription completes empty. The only class of the advice that loads Reactor, and only
 * for methods that return its types, Kotlin's {@code Flow} (adapted to a {@code Flux} and back
 * through Spring's {@code ReactiveAdapterRegistry}) or are {@code suspend} functions (which Spring's
 * AOP runs as a {@code Mono}, or a {@code Flux} for a {@code Flow}, and whose proxy awaits what the
 * advice returns: cancelling the calling coroutine cancels the subscription).
 */
final class ReactorLockInvoker implements LockInvoker {

	private final boolean mono;

	private final @Nullable ReactiveAdapter adapter;

	/**
	 * @param mono whether the method returns {@code Mono} (else {@code Flux})
	 * @param adapter converts the method's return type to a publisher and back; {@code null} for
	 * Reactor's types and {@code suspend} functions
	 */
	ReactorLockInvoker(boolean mono, @Nullable ReactiveAdapter adapter) {
		this.mono = mono;
		this.adapter = adapter;
	}

	@Override
	public Object invoke(LockTemplate template, LockRequest request, MethodInvocation invocation) {
		if (!(invocation instanceof ProxyMethodInvocation proxyInvocation)) {
			throw new IllegalStateException("A Mono, Flux, Flow or suspend function under a lock invokes its method "
					+ "once per subscription, which needs a Spring AOP proxy's invocation; got "
					+ invocation.getClass().getName());
		}
		Flux<Object> locked = ReactiveLockOperator.create(template).execute(request, (handle) -> proceed(proxyInvocation));
		if (this.adapter != null) {
			return this.adapter.fromPublisher(locked);
		}
		return this.mono ? locked.singleOrEmpty() : locked;
	}

	/** Proceed with a clone of the call: each subscription invokes the method once. */
	@SuppressWarnings("unchecked")
	private Publisher<Object> proceed(ProxyMethodInvocation invocation) {
		Object result;
		try {
			result = invocation.invocableClone().proceed();
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		if (result == null) {
			return Mono.empty();
		}
		return (this.adapter != null) ? (Publisher<Object>) this.adapter.toPublisher(result) : (Publisher<Object>) result;
	}

}
