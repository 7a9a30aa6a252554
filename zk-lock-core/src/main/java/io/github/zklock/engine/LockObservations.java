package io.github.zklock.engine;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.OnBusy;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

/**
 * The two observations of a lock, for metrics and tracing through Micrometer:
 * <ul>
 * <li>{@value #ACQUIRE}: the time spent waiting for a grant; low-cardinality keys {@code name}
 * (the request's name, such as a key template, never a resolved value), {@code mode} and
 * {@code outcome} ({@code acquired}, {@code timeout}, {@code skipped} when the request's on-busy
 * policy is {@link OnBusy#SKIP}, or {@code error}) and {@code handoff} ({@code local} for a grant
 * handed over by another thread of the application without a ZooKeeper request, as the
 * registry tells; {@code kept} for one made on a znode the application kept while nobody held it,
 * see {@link LockRequest#withKeep(Boolean)}; {@code none} otherwise);</li>
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

	static final String HANDOFF_KEPT = "kept";

	static final String HANDOFF_NONE = "none";

	private final ObservationRegistry registry;

	/**
	 * Observe the locks of a template in an observation registry.
	 * @param registry the registry
	 */
	public LockObservations(ObservationRegistry registry) {
		this.registry = registry;
	}

	/** Acquire one key on the calling thread, observed. */
	Optional<RegistryGrant> tryAcquire(LockRegistry lockRegistry, LockTarget target, LockRequest request,
			@Nullable Parent parent) {
		if (this.registry.isNoop()) {
			return lockRegistry.tryAcquire(target);
		}
		Observation observation = startAcquire(target, request, parent);
		try {
			return acquired(observation, lockRegistry.tryAcquire(target), request);
		}
		catch (RuntimeException | Error ex) {
			failed(observation, ex);
			throw ex;
		}
	}

	/** Acquire one key without a thread, observed; {@code null} if the registry cannot. */
	@Nullable CompletableFuture<Optional<RegistryGrant>> submit(LockRegistry lockRegistry, LockTarget target,
			LockRequest request, @Nullable Parent parent) {
		CompletableFuture<Optional<RegistryGrant>> pending = lockRegistry.submit(target);
		if (pending == null || this.registry.isNoop()) {
			return pending;
		}
		Observation observation = startAcquire(target, request, parent);
		pending.whenComplete((grant, ex) -> {
			if (ex != null) {
				failed(observation, LockEngine.unwrap(ex));
			}
		});
		return LockEngine.map(pending, (grant) -> acquired(observation, grant, request),
				(grant) -> grant.ifPresent(RegistryGrant::releaseAsync));
	}

	private Observation startAcquire(LockTarget target, LockRequest request, @Nullable Parent parent) {
		return Observation.createNotStarted(ACQUIRE, this.registry)
			.parentObservation((parent != null) ? parent.observation() : null)
			.contextualName("lock " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", target.mode().name())
			.highCardinalityKeyValue("path", target.key())
			.start();
	}

	private static Optional<RegistryGrant> acquired(Observation observation, Optional<RegistryGrant> grant,
			LockRequest request) {
		observation.lowCardinalityKeyValue("outcome", grant.isPresent() ? "acquired"
				: (request.onBusy() == OnBusy.SKIP) ? "skipped" : "timeout");
		observation.lowCardinalityKeyValue(HANDOFF,
				(grant.isPresent() && grant.get().isFromKeptZnode()) ? HANDOFF_KEPT
						: (grant.isPresent() && grant.get().isLocalHandoff()) ? HANDOFF_LOCAL : HANDOFF_NONE);
		observation.stop();
		return grant;
	}

	private static void failed(Observation observation, Throwable ex) {
		observation.lowCardinalityKeyValue("outcome", "error");
		observation.lowCardinalityKeyValue(HANDOFF, HANDOFF_NONE);
		observation.error(ex);
		observation.stop();
	}

	/**
	 * Start observing the hold of a key's grant, unless the registry is a no-op one.
	 * @return the hold, {@code null} when nothing is observed
	 */
	@Nullable Hold hold(RegistryGrant grant, LockRequest request, @Nullable Parent parent) {
		if (this.registry.isNoop()) {
			return null;
		}
		Observation held = Observation.createNotStarted(HELD, this.registry)
			.parentObservation((parent != null) ? parent.observation() : null)
			.contextualName("hold " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", request.mode().name())
			.highCardinalityKeyValue("path", grant.path())
			.start();
		return new Hold(held);
	}

	/** The observation current on the calling thread, as the parent of an acquisition's. */
	@Nullable Parent currentObservation() {
		Observation current = this.registry.getCurrentObservation();
		return (current != null) ? new Parent(current) : null;
	}

	/** The observation of a grant's hold: stopped once, with its outcome, when the grant is released. */
	static final class Hold {

		private final Observation held;

		private Hold(Observation held) {
			this.held = held;
		}

		/**
		 * Stop it with the outcome of the key's grant as it is released: {@code released},
		 * {@code expired} (its ceiling ended it) or {@code lost}.
		 */
		void stop(LockHandle key) {
			String outcome = HOLD_RELEASED;
			if (key.state() == LockState.LOST) {
				Instant deadline = key.deadline().orElse(null);
				outcome = (deadline != null && !Instant.now().isBefore(deadline)) ? HOLD_EXPIRED : HOLD_LOST;
			}
			this.held.lowCardinalityKeyValue(OUTCOME, outcome);
			this.held.stop();
		}

		/**
		 * Open its scope on the calling thread, for the callback run under the grant.
		 * @return what closes the scope
		 */
		Runnable openScope() {
			return this.held.openScope()::close;
		}

	}

	/** The observation an acquisition is nested in. */
	record Parent(Observation observation) {
	}

}
