package io.github.zklock.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockRegistry;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTarget;
import io.github.zklock.OnBusy;

/**
 * The two observations of a lock, for metrics and tracing through Micrometer:
 * <ul>
 * <li>{@value #ACQUIRE}: the time spent waiting for a grant; low-cardinality keys {@code name}
 * (the request's name, such as a key template, never a resolved value), {@code mode} and
 * {@code outcome} ({@code acquired}, {@code timeout}, {@code skipped} when the request's on-busy
 * policy is {@link OnBusy#SKIP}, or {@code error}) and {@code handoff} ({@code local} for a grant
 * handed over by another thread of the application without a ZooKeeper request, see
 * {@link LockHandle#isLocalHandoff()}; {@code none} otherwise);</li>
 * <li>{@value #HELD}: the time the grant is held; keys {@code name}, {@code mode} and, once it is
 * released, {@code outcome}: {@code released} for a grant held until its release, {@code expired}
 * for one its ceiling ended ({@link LockRequest#withLockAtMostFor lockAtMostFor}), {@code lost}
 * for one lost otherwise (its session, a revocation).</li>
 * </ul>
 * With Spring Boot's default meter handler they become the timers {@code zk.lock.acquire} and
 * {@code zk.lock.held} (plus {@code zk.lock.held.active}). Each also has a high-cardinality key
 * {@code path}, for traces only: the requested key on {@value #ACQUIRE} ({@code /stock/apple}), the
 * granted lock's znode path on {@value #HELD} ({@code /locks/stock/apple}). A multi-lock is
 * observed per key.
 *
 * <p>The only class of the engine that uses Micrometer, which is an optional dependency: it is
 * loaded only when an observation registry is given to the template.
 */
public final class LockObservations {

	static final String ACQUIRE = "zk.lock.acquire";

	static final String HELD = "zk.lock.held";

	static final String HANDOFF = "handoff";

	static final String OUTCOME = "outcome";

	static final String HOLD_RELEASED = "released";

	static final String HOLD_EXPIRED = "expired";

	static final String HOLD_LOST = "lost";

	static final String HANDOFF_LOCAL = "local";

	static final String HANDOFF_NONE = "none";

	private final ObservationRegistry registry;

	/**
	 * Observe through a registry.
	 * @param registry the observation registry
	 */
	public LockObservations(ObservationRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Acquire one key through the lock registry, observed unless the observation registry is a
	 * no-op.
	 * @param parent the observation current on the thread that asked, when the acquisition runs on
	 * another thread; {@code null} for the current one
	 */
	Optional<LockHandle> tryAcquire(LockRegistry lockRegistry, LockTarget target, LockRequest request,
			@Nullable Parent parent) {
		ObservationRegistry registry = this.registry;
		if (registry.isNoop()) {
			return lockRegistry.tryAcquire(target);
		}
		Observation observation = startAcquire(registry, target, request, parent);
		try {
			return acquired(observation, lockRegistry.tryAcquire(target), request, parent);
		}
		catch (RuntimeException | Error ex) {
			failed(observation, ex);
			throw ex;
		}
	}

	/**
	 * Acquire one key through the lock registry's asynchronous acquisition (see
	 * {@link LockRegistry#submit}), observed unless the observation registry is a no-op: the
	 * acquire observation runs until the returned future completes.
	 * @return the grant, observed; {@code null} when the registry cannot acquire the target so
	 */
	@Nullable CompletableFuture<Optional<LockHandle>> submit(LockRegistry lockRegistry, LockTarget target,
			LockRequest request, @Nullable Parent parent) {
		CompletableFuture<Optional<LockHandle>> pending = lockRegistry.submit(target);
		ObservationRegistry registry = this.registry;
		if (pending == null || registry.isNoop()) {
			return pending;
		}
		Observation observation = startAcquire(registry, target, request, parent);
		CompletableFuture<Optional<LockHandle>> observed = pending.handle((handle, ex) -> {
			if (ex != null) {
				failed(observation, ex);
				throw (ex instanceof CompletionException completion) ? completion : new CompletionException(ex);
			}
			return acquired(observation, handle, request, parent);
		});
		observed.whenComplete((handle, ex) -> {
			if (observed.isCancelled()) {
				pending.cancel(false);
			}
		});
		return observed;
	}

	private static Observation startAcquire(ObservationRegistry registry, LockTarget target, LockRequest request,
			@Nullable Parent parent) {
		return Observation.createNotStarted(ACQUIRE, registry)
			.parentObservation((parent != null) ? parent.observation() : null)
			.contextualName("lock " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", target.mode().name())
			.highCardinalityKeyValue("path", target.key())
			.start();
	}

	/** End the acquire observation with its outcome, and observe the hold of a grant. */
	private Optional<LockHandle> acquired(Observation observation, Optional<LockHandle> handle, LockRequest request,
			@Nullable Parent parent) {
		observation.lowCardinalityKeyValue("outcome", handle.isPresent() ? "acquired"
				: (request.onBusy() == OnBusy.SKIP) ? "skipped" : "timeout");
		observation.lowCardinalityKeyValue(HANDOFF,
				(handle.isPresent() && handle.get().isLocalHandoff()) ? HANDOFF_LOCAL : HANDOFF_NONE);
		observation.stop();
		return handle.map((granted) -> observeHold(granted, request, parent));
	}

	private static void failed(Observation observation, Throwable ex) {
		observation.lowCardinalityKeyValue("outcome", "error");
		observation.lowCardinalityKeyValue(HANDOFF, HANDOFF_NONE);
		observation.error(ex);
		observation.stop();
	}

	/**
	 * Open the hold observation's scope on this thread, for the duration of a callback; for a
	 * multi-lock, the scopes of its parts, nested in acquisition order.
	 * @return what closes the scopes, innermost first, or {@code null} if the grant is not observed
	 */
	@Nullable Runnable openScope(LockHandle handle) {
		LockHandle grant = unwrap(handle);
		if (grant instanceof ObservedLockHandle observed) {
			// One key: the common case, without the list.
			return observed.observation().openScope()::close;
		}
		if (!(grant instanceof MultiLockHandle)) {
			return null;
		}
		List<Observation.Scope> scopes = new ArrayList<>(grant.parts().size());
		for (LockHandle part : grant.parts()) {
			if (unwrap(part) instanceof ObservedLockHandle observed) {
				scopes.add(observed.observation().openScope());
			}
		}
		return () -> {
			for (int i = scopes.size() - 1; i >= 0; i--) {
				scopes.get(i).close();
			}
		};
	}

	/** The observed grant (or the multi-lock) below the wrappers that keep or own a grant. */
	private static LockHandle unwrap(LockHandle handle) {
		LockHandle current = handle;
		while (current instanceof ForwardingLockHandle forwarding && !(current instanceof ObservedLockHandle)) {
			current = forwarding.delegate;
		}
		return current;
	}

	/**
	 * Return the observation current on this thread, to parent the observations of an acquisition
	 * made on another thread.
	 * @return the parent, or {@code null} if no observation is current
	 */
	@Nullable Parent currentObservation() {
		Observation current = this.registry.getCurrentObservation();
		return (current != null) ? new Parent(current) : null;
	}

	private LockHandle observeHold(LockHandle handle, LockRequest request, @Nullable Parent parent) {
		Observation held = Observation.createNotStarted(HELD, this.registry)
			.parentObservation((parent != null) ? parent.observation() : null)
			.contextualName("hold " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", request.mode().name())
			.highCardinalityKeyValue("path", handle.path())
			.start();
		return new ObservedLockHandle(handle, held);
	}

	/**
	 * The observation current on a thread that asked for an asynchronous grant, carried to the
	 * thread that acquires it.
	 * @param observation the observation
	 */
	record Parent(Observation observation) {
	}

}
