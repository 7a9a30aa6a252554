package io.github.zklock.reactive;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.AsyncLockTemplate;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.OnBusy;

/**
 * Runs a {@code Mono} or {@code Flux} under a lock, one grant per subscription, as Spring's
 * {@code TransactionalOperator} runs one per transaction: the reactive form of
 * {@link LockTemplate}, on its {@link LockTemplate#async() asynchronous template}. The
 * {@code @DistributedLock} advice uses it for methods returning {@code Mono} or {@code Flux}.
 * <pre class="code">
 * ReactiveLockOperator locks = ReactiveLockOperator.create(lockTemplate);
 * Mono&lt;Order&gt; order = locks.lock(LockRequest.of("/stock/" + sku), this.orders.place(sku));
 * </pre>
 *
 * <ul>
 * <li>Nothing happens on assembly. Each subscription acquires without blocking (the lock is
 * waited for with no thread, see {@link io.github.zklock.AsyncLockTemplate}), subscribes to the locked publisher with the grant in the Reactor
 * context ({@link ReactiveLockContext}), and releases the grant when that publisher completes,
 * errors or is cancelled; cancelling while waiting gives up the wait.</li>
 * <li>Busy for the whole wait time: an empty publisher for {@link OnBusy#SKIP}, else
 * {@link LockAcquisitionException}. ZooKeeper failures are errors ({@code LockException}), never
 * empty.</li>
 * <li>Lost (the registry signals it, {@link AsyncLockHandle#whenLost()}) while the locked
 * publisher runs: the subscription to it is cancelled and the result ends with
 * {@link LockLostException}. A loss signalled after it completed or errored (while the release is
 * on its way) changes nothing: its outcome stands.</li>
 * <li>The grant is delivered, and the locked publisher subscribed to, on the template's async
 * executor when it has one, else on a grant thread.</li>
 * </ul>
 *
 * <p>Thread-safe and stateless beyond its template.
 */
public final class ReactiveLockOperator {

	private static final Log logger = LogFactory.getLog(ReactiveLockOperator.class);

	private final AsyncLockTemplate locks;

	private ReactiveLockOperator(AsyncLockTemplate locks) {
		this.locks = locks;
	}

	/**
	 * Create an operator on a template.
	 * @param template the template that grants
	 * @return the operator
	 */
	public static ReactiveLockOperator create(LockTemplate template) {
		return new ReactiveLockOperator(Objects.requireNonNull(template, "template must not be null").async());
	}

	/**
	 * Run a {@code Mono} under the requested lock, per subscription.
	 * @param <T> the value type
	 * @param request what to lock
	 * @param mono what to run while the lock is held, subscribed to once per subscription
	 * @return a {@code Mono} that locks, runs {@code mono} and releases
	 */
	public <T> Mono<T> lock(LockRequest request, Mono<T> mono) {
		Objects.requireNonNull(mono, "mono must not be null");
		return execute(request, (handle) -> mono).singleOrEmpty();
	}

	/**
	 * Run a {@code Flux} under the requested lock, per subscription.
	 * @param <T> the element type
	 * @param request what to lock
	 * @param flux what to run while the lock is held, subscribed to once per subscription
	 * @return a {@code Flux} that locks, runs {@code flux} and releases
	 */
	public <T> Flux<T> lock(LockRequest request, Flux<T> flux) {
		Objects.requireNonNull(flux, "flux must not be null");
		return execute(request, (handle) -> flux);
	}

	/**
	 * Run the publisher an action builds from the grant, under the requested lock, per
	 * subscription.
	 * @param <T> the element type
	 * @param request what to lock
	 * @param action builds the publisher to run while the lock is held, called once per
	 * subscription with that subscription's grant; what it throws ends the result with that error
	 * @return a {@code Flux} that locks, runs the action's publisher and releases
	 */
	public <T> Flux<T> execute(LockRequest request, Function<? super LockHandle, ? extends Publisher<T>> action) {
		Objects.requireNonNull(request, "request must not be null");
		Objects.requireNonNull(action, "action must not be null");
		return Flux.usingWhen(grant(request),
				(handle) -> untilLost(Flux.defer(() -> action.apply(handle)), handle)
					.contextWrite((context) -> ReactiveLockContext.with(context, handle)),
				ReactiveLockOperator::release, (handle, ex) -> release(handle), ReactiveLockOperator::release);
	}

	/**
	 * Acquire on subscription. Cancelling gives up the wait ({@code fromFuture} cancels the
	 * template's future, which releases a grant made meanwhile); a grant delivered just as the
	 * subscription is cancelled is discarded by Reactor, and released here.
	 */
	private Mono<AsyncLockHandle> grant(LockRequest request) {
		Mono<AsyncLockHandle> grant = (request.onBusy() == OnBusy.SKIP)
				? Mono.fromFuture(() -> this.locks.tryAcquire(request)).flatMap(Mono::justOrEmpty)
				: Mono.fromFuture(() -> this.locks.acquire(request));
		return grant.doOnDiscard(Object.class, ReactiveLockOperator::releaseDiscarded);
	}

	/**
	 * Cut the work short when the registry signals the grant lost while the locked publisher runs:
	 * its subscription is cancelled, and the result ends with {@link LockLostException}. Whether the
	 * publisher terminated first (completed or errored: its outcome stands, whatever is signalled
	 * afterwards, also while the release is on its way) or the loss was signalled first is decided
	 * by one compare-and-set, so that work that completed never ends as cancelled.
	 * ({@code takeUntilOther} on an erroring publisher would not cancel the work: only its
	 * completion does; the other publisher stays silent for a loss signalled too late.)
	 */
	private static <T> Flux<T> untilLost(Flux<T> body, AsyncLockHandle handle) {
		AtomicReference<Run> run = new AtomicReference<>(Run.RUNNING);
		Mono<Boolean> lossWhileRunning = Mono.fromFuture(handle.whenLost().toCompletableFuture(), true)
			.then(Mono.defer(() -> run.compareAndSet(Run.RUNNING, Run.LOST) ? Mono.just(Boolean.TRUE) : Mono.never()));
		return body.doOnTerminate(() -> run.compareAndSet(Run.RUNNING, Run.TERMINATED))
			.takeUntilOther(lossWhileRunning)
			.concatWith(Mono.defer(() -> (run.get() == Run.LOST)
					? Mono.error(new LockLostException(handle.path(), handle.mode(), "the lock was lost while the "
							+ "reactive work was running; the subscription was cancelled"))
					: Mono.empty()));
	}

	/** Where the locked publisher stands against the loss of its grant. */
	private enum Run {

		RUNNING, TERMINATED, LOST

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
