package io.github.zklock;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import io.github.zklock.engine.LockEngine;
import io.github.zklock.engine.LockObservations;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.RequestRules;

/**
 * Builds a {@link LockTemplate} ({@link LockTemplate#builder(LockRegistry)}); every setting is
 * optional. Not thread-safe; the template it builds is.
 */
public final class LockTemplateBuilder {

	private final LockRegistry registry;

	private Duration defaultWaitTime = LockRequest.WAIT_FOREVER;

	private Duration defaultLockAtMostFor = LockRequest.NO_CEILING;

	private @Nullable LockObservations observations;

	private @Nullable Executor asyncExecutor;

	private boolean virtualGrantThreads;

	LockTemplateBuilder(LockRegistry registry) {
		this.registry = Objects.requireNonNull(registry, "registry must not be null");
	}

	/**
	 * Set the wait time of requests that give none ({@link LockRequest#WAIT_FOREVER} unless set).
	 * @param defaultWaitTime zero, positive, or {@link LockRequest#WAIT_FOREVER}
	 * @return this builder
	 * @throws IllegalArgumentException if it is negative but not {@link LockRequest#WAIT_FOREVER}
	 */
	public LockTemplateBuilder defaultWaitTime(Duration defaultWaitTime) {
		this.defaultWaitTime = RequestRules.checkWaitTime(defaultWaitTime, "The default wait time");
		return this;
	}

	/**
	 * Set the ceiling of requests that give none ({@link LockRequest#withLockAtMostFor(Duration)}):
	 * {@link LockRequest#NO_CEILING} unless set, so that a grant lasts until it is released.
	 * @param defaultLockAtMostFor {@link LockRequest#NO_CEILING} for none, or a positive duration
	 * @return this builder
	 * @throws IllegalArgumentException if it is zero or negative
	 */
	public LockTemplateBuilder defaultLockAtMostFor(Duration defaultLockAtMostFor) {
		this.defaultLockAtMostFor = RequestRules.checkLockAtMostFor(defaultLockAtMostFor,
				"The default lockAtMostFor");
		return this;
	}

	/**
	 * Set the registry that observes acquisitions ({@code zk.lock.acquire}) and holds
	 * ({@code zk.lock.held}) for metrics and tracing (needs
	 * {@code io.micrometer:micrometer-observation}). Without one nothing is observed.
	 * @param observationRegistry the registry
	 * @return this builder
	 */
	public LockTemplateBuilder observationRegistry(ObservationRegistry observationRegistry) {
		this.observations = new LockObservations(
				Objects.requireNonNull(observationRegistry, "observationRegistry must not be null"));
		return this;
	}

	/**
	 * Set the executor on which asynchronous grants are delivered and their work invoked (the
	 * Spring Boot starter sets Boot's {@code applicationTaskExecutor}). Without one, the grant's
	 * own thread. Acquisitions never wait on it.
	 * @param asyncExecutor the executor, or {@code null} for the grant's thread
	 * @return this builder
	 */
	public LockTemplateBuilder asyncExecutor(@Nullable Executor asyncExecutor) {
		this.asyncExecutor = asyncExecutor;
		return this;
	}

	/**
	 * Set whether asynchronous grants are owned by virtual threads (Java 21 and later) rather
	 * than pooled platform threads. Off by default: a platform thread hands a grant over faster;
	 * a virtual thread makes many concurrent asynchronous waits and holds cheap. The Spring Boot
	 * starter turns it on with {@code spring.threads.virtual.enabled=true}. Before Java 21 a
	 * warning is logged and platform threads are used.
	 * @param virtualGrantThreads whether to use virtual threads
	 * @return this builder
	 */
	public LockTemplateBuilder virtualGrantThreads(boolean virtualGrantThreads) {
		this.virtualGrantThreads = virtualGrantThreads;
		return this;
	}

	/**
	 * Build the template.
	 * @return the template
	 */
	public LockTemplate build() {
		return new LockTemplate(engine());
	}

	LockEngine engine() {
		return new LockEngine(this.registry, this.defaultWaitTime, this.defaultLockAtMostFor, this.observations,
				this.asyncExecutor, this.virtualGrantThreads);
	}

}
