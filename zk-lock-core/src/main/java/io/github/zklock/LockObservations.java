package io.github.zklock;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The two observations of a lock, for metrics and tracing through Micrometer:
 * <ul>
 * <li>{@value #ACQUIRE}: the time spent waiting for a grant; low-cardinality keys {@code name}
 * (the key template, never a resolved value), {@code mode} and {@code outcome}
 * ({@code acquired}, {@code timeout}, {@code skipped} when the caller goes on without the lock
 * instead of failing, or {@code error}) and {@code handoff} ({@code local} for a grant handed over
 * by another thread of the application without a ZooKeeper request, see
 * {@link LockHandle#isLocalHandoff()}; {@code none} otherwise);</li>
 * <li>{@value #HELD}: the time the grant is held; keys {@code name} and {@code mode}.</li>
 * </ul>
 * With Spring Boot's default meter handler they become the timers {@code zk.lock.acquire} and
 * {@code zk.lock.held} (plus {@code zk.lock.held.active}). Each also has a high-cardinality key
 * {@code path}, for traces only: the requested key on {@value #ACQUIRE} ({@code /stock/apple}), the
 * granted lock's znode path on {@value #HELD} ({@code /locks/stock/apple}).
 *
 * <p>The only class of the template that uses Micrometer, which is an optional dependency: it is
 * loaded only when an observation registry is set.
 */
final class LockObservations {

	static final String ACQUIRE = "zk.lock.acquire";

	static final String HELD = "zk.lock.held";

	static final String HANDOFF = "handoff";

	static final String HANDOFF_LOCAL = "local";

	static final String HANDOFF_NONE = "none";

	private final ObservationRegistry registry;

	LockObservations(ObservationRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Acquire through the lock registry, observed unless the observation registry is a no-op.
	 * @param skipOnBusy whether the caller skips its work when the lock is busy (outcome
	 * {@code skipped} rather than {@code timeout})
	 */
	Optional<LockHandle> tryAcquire(LockRegistry lockRegistry, LockRequest request, boolean skipOnBusy) {
		return tryAcquire(lockRegistry, request, skipOnBusy, null);
	}

	/**
	 * Acquire as {@link #tryAcquire(LockRegistry, LockRequest, boolean)}, on a thread other than the
	 * caller's: the observation is a child of the one that was current on the caller's thread.
	 * @param parent what {@link #currentObservation()} returned on the caller's thread
	 */
	Optional<LockHandle> tryAcquire(LockRegistry lockRegistry, LockRequest request, boolean skipOnBusy,
			@Nullable Object parent) {
		ObservationRegistry registry = this.registry;
		if (registry.isNoop()) {
			return lockRegistry.tryAcquire(request);
		}
		Observation observation = Observation.createNotStarted(ACQUIRE, registry)
			.parentObservation((Observation) parent)
			.contextualName("lock " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", request.mode().name())
			.highCardinalityKeyValue("path", request.path())
			.start();
		try {
			Optional<LockHandle> handle = lockRegistry.tryAcquire(request);
			observation.lowCardinalityKeyValue("outcome",
					handle.isPresent() ? "acquired" : (skipOnBusy ? "skipped" : "timeout"));
			observation.lowCardinalityKeyValue(HANDOFF,
					(handle.isPresent() && handle.get().isLocalHandoff()) ? HANDOFF_LOCAL : HANDOFF_NONE);
			return handle.map((granted) -> observeHold(granted, request, parent));
		}
		catch (RuntimeException | Error ex) {
			observation.lowCardinalityKeyValue("outcome", "error");
			observation.lowCardinalityKeyValue(HANDOFF, HANDOFF_NONE);
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	/**
	 * Open the hold observation's scope on this thread, for the duration of a callback; for a
	 * multi-lock, the scopes of its parts, nested in acquisition order.
	 * @return what closes the scopes, innermost first, or {@code null} if the grant is not observed
	 */
	@Nullable Runnable openScope(LockHandle handle) {
		if (handle instanceof ObservedLockHandle observed) {
			// One key: the common case, without the list.
			return observed.observation().openScope()::close;
		}
		List<Observation.Scope> scopes = new ArrayList<>(1);
		for (LockHandle part : handle.parts()) {
			if (part instanceof ObservedLockHandle observed) {
				scopes.add(observed.observation().openScope());
			}
		}
		if (scopes.isEmpty()) {
			return null;
		}
		return () -> {
			for (int i = scopes.size() - 1; i >= 0; i--) {
				scopes.get(i).close();
			}
		};
	}

	/**
	 * Return the observation current on this thread, to parent the observations of an acquisition
	 * made on another thread ({@code Object}: the template does not load Micrometer types).
	 */
	@Nullable Object currentObservation() {
		return this.registry.getCurrentObservation();
	}

	private LockHandle observeHold(LockHandle handle, LockRequest request, @Nullable Object parent) {
		Observation held = Observation.createNotStarted(HELD, this.registry)
			.parentObservation((Observation) parent)
			.contextualName("hold " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", request.mode().name())
			.highCardinalityKeyValue("path", handle.path())
			.start();
		return new ObservedLockHandle(handle, held);
	}

}
