package io.github.zklock.reactive;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import io.github.zklock.LockHandle;

/**
 * The lock grants a {@code Mono} or {@code Flux} run by the {@link ReactiveLockOperator} (and so
 * of a {@code @DistributedLock} or {@code @DistributedSemaphore} method) runs under, read from the
 * Reactor context: the reactive replacement of {@link io.github.zklock.LockContext}, which is
 * bound to a thread and so has no meaning in reactive code.
 *
 * <p>Each subscription is its own grant; the operator writes the grant's handle (an
 * {@link io.github.zklock.AsyncLockHandle}) into the context of the publisher it locks, so every
 * operator of it, and every publisher it is composed of, can read it:
 * <pre class="code">
 * &#64;DistributedLock(path = "/stock/#{#sku}")
 * public Mono&lt;Void&gt; take(String sku) {
 * 	return ReactiveLockContext.current()
 * 		.flatMap((handle) -&gt; this.store.take(sku, handle.fencingToken()));
 * }
 * </pre>
 * The handle is under {@link #LOCK_HANDLE_KEY} (the innermost grant), and the list of every grant
 * the publisher runs under, outermost first, under {@link #HELD_LOCK_HANDLES_KEY}. Needs
 * {@code io.projectreactor:reactor-core}.
 */
public final class ReactiveLockContext {

	/** The Reactor context key of the innermost grant's {@link LockHandle}. */
	public static final String LOCK_HANDLE_KEY = "io.github.zklock.LockHandle";

	/**
	 * The Reactor context key of every grant ({@code List<LockHandle>}, outermost first), as read by
	 * the reactive commit guard.
	 */
	public static final String HELD_LOCK_HANDLES_KEY = "io.github.zklock.LockHandle.held";

	private ReactiveLockContext() {
	}

	/**
	 * Return the innermost grant of the subscriber's context.
	 * @return a {@code Mono} of the handle, empty outside a locked method's publisher
	 */
	public static Mono<LockHandle> current() {
		return Mono.deferContextual((context) -> Mono.justOrEmpty(current(context)));
	}

	/**
	 * Return every grant of the subscriber's context, outermost first.
	 * @return a {@code Mono} of the handles, an empty list outside a locked method's publisher
	 */
	public static Mono<List<LockHandle>> held() {
		return Mono.deferContextual((context) -> Mono.just(held(context)));
	}

	/**
	 * Return the innermost grant of a context.
	 * @param context the context
	 * @return the handle, or {@code null}
	 */
	public static @Nullable LockHandle current(ContextView context) {
		return context.getOrDefault(LOCK_HANDLE_KEY, null);
	}

	/**
	 * Return every grant of a context, outermost first.
	 * @param context the context
	 * @return the handles, empty if none
	 */
	public static List<LockHandle> held(ContextView context) {
		return context.getOrDefault(HELD_LOCK_HANDLES_KEY, List.of());
	}

	/** Add a grant to a context, as the innermost one. */
	static Context with(Context context, LockHandle handle) {
		List<LockHandle> outer = held(context);
		List<LockHandle> held = new ArrayList<>(outer.size() + 1);
		held.addAll(outer);
		held.add(handle);
		return context.put(LOCK_HANDLE_KEY, handle).put(HELD_LOCK_HANDLES_KEY, List.copyOf(held));
	}

}
