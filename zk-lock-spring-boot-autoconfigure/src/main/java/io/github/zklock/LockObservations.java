package io.github.zklock;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * The two observations of a lock, for metrics and tracing through Micrometer:
 * <ul>
 * <li>{@value #ACQUIRE}: the time spent waiting for a grant; low-cardinality keys {@code name}
 * (the path template, never a resolved value), {@code mode} and {@code outcome}
 * ({@code acquired}, {@code timeout} or {@code error});</li>
 * <li>{@value #HELD}: the time the grant is held; keys {@code name} and {@code mode}.</li>
 * </ul>
 * With Spring Boot's default meter handler they become the timers {@code zk.lock.acquire} and
 * {@code zk.lock.held} (plus {@code zk.lock.held.active}). The resolved path is a
 * high-cardinality key, {@code path}, for traces only.
 */
final class LockObservations {

	static final String ACQUIRE = "zk.lock.acquire";

	static final String HELD = "zk.lock.held";

	private LockObservations() {
	}

	static Observation acquire(LockRequest request, ObservationRegistry registry) {
		return Observation.createNotStarted(ACQUIRE, registry)
			.contextualName("lock " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", request.mode().name())
			.highCardinalityKeyValue("path", request.path());
	}

	static LockHandle observeHold(LockHandle handle, LockRequest request, ObservationRegistry registry) {
		Observation held = Observation.createNotStarted(HELD, registry)
			.contextualName("hold " + request.name())
			.lowCardinalityKeyValue("name", request.name())
			.lowCardinalityKeyValue("mode", request.mode().name())
			.highCardinalityKeyValue("path", handle.path())
			.start();
		return new ObservedLockHandle(handle, held);
	}

}
