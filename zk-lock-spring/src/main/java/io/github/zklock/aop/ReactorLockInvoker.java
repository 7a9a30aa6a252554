package io.github.zklock.aop;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
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
 * for methods that return its types.
 */
final class ReactorLockInvoker implements LockInvoker {

	private final boolean mono;

	/**
	 * @param mono whether the method returns {@code Mono} (else {@code Flux})
	 */
	ReactorLockInvoker(boolean mono) {
		this.mono = mono;
	}

	@Override
	public Publisher<?> invoke(LockTemplate template, LockRequest request, MethodInvocation invocation) {
		if (!(invocation instanceof ProxyMethodInvocation proxyInvocation)) {
			throw new IllegalStateException("A Mono or Flux under a lock invokes its method once per subscription, "
					+ "which needs a Spring AOP proxy's invocation; got " + invocation.getClass().getName());
		}
		Flux<Object> locked = ReactiveLockOperator.create(template).execute(request, (handle) -> proceed(proxyInvocation));
		return this.mono ? locked.singleOrEmpty() : locked;
	}

	/** Proceed with a clone of the call: each subscription invokes the method once. */
	@SuppressWarnings("unchecked")
	private static Publisher<Object> proceed(ProxyMethodInvocation invocation) {
		Object result;
		try {
			result = invocation.invocableClone().proceed();
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		return (result != null) ? (Publisher<Object>) result : Mono.empty();
	}

}
