package io.github.zklock;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.annotation.LockMode;

/**
 * Runs code under a ZooKeeper lock, or hands out lock grants: the programmatic twin of
 * {@link io.github.zklock.annotation.DistributedLock @DistributedLock}, which delegates to it.
 *
 * <p>Paths are given below {@code zk.lock.root-path} and start with {@code /}. Wait times: a
 * {@code null} wait time uses the default wait time this template was built with; zero makes one
 * attempt without waiting; a negative duration waits without limit.
 *
 * <p>Thread-safe. Locks are bound to the acquiring thread (except non-reentrant EXCLUSIVE
 * grants): {@code execute} acquires and releases on the calling thread.
 */
public class LockTemplate {

	private static final Log logger = LogFactory.getLog(LockTemplate.class);

	private final LockProvider provider;

	private final Duration defaultWaitTime;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	/**
	 * Create a template.
	 * @param provider the backend that grants locks
	 * @param defaultWaitTime the wait time used when a request gives none; negative waits
	 * without limit
	 */
	public LockTemplate(LockProvider provider, Duration defaultWaitTime) {
		this.provider = Objects.requireNonNull(provider, "provider must not be null");
		this.defaultWaitTime = Objects.requireNonNull(defaultWaitTime, "defaultWaitTime must not be null");
	}

	/**
	 * Set the registry that observes acquisitions ({@code zk.lock.acquire}) and holds
	 * ({@code zk.lock.held}) for metrics and tracing. Without one (the default, a no-op registry)
	 * nothing is observed and nothing is added to the lock path.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = Objects.requireNonNull(observationRegistry, "observationRegistry must not be null");
	}

	/**
	 * Return the wait time used when a request gives none.
	 * @return the default wait time, negative for no limit
	 */
	public Duration getDefaultWaitTime() {
		return this.defaultWaitTime;
	}

	/**
	 * Run {@code action} under a reentrant EXCLUSIVE lock, waiting the default wait time.
	 * @param <T> the result type
	 * @param path the lock path below the root path
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 * @throws InvalidLockPathException if the path is not legal (action not run)
	 * @throws LockException if ZooKeeper cannot serve the request (action not run)
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action;
	 * unchecked exceptions from the action propagate unchanged
	 */
	public <T> @Nullable T execute(String path, LockCallback<T> action) {
		return execute(LockRequest.of(path), action);
	}

	/**
	 * Run {@code action} under a lock of the given mode.
	 * @param <T> the result type
	 * @param path the lock path below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws InvalidLockPathException if the path is not legal (action not run)
	 * @throws LockException if ZooKeeper cannot serve the request (action not run)
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action
	 */
	public <T> @Nullable T execute(String path, LockMode mode, @Nullable Duration waitTime, LockCallback<T> action) {
		return execute(new LockRequest(path, mode, true, waitTime), action);
	}

	/**
	 * Run {@code action} under the requested lock. The lock is released in a {@code finally}
	 * block on the calling thread; a failed release is logged, never thrown over the action's
	 * result or exception. While the action runs, {@link LockContext#current()} returns its
	 * handle.
	 * @param <T> the result type
	 * @param request what to lock
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws InvalidLockPathException if the path is not legal (action not run)
	 * @throws LockException if ZooKeeper cannot serve the request (action not run)
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action;
	 * unchecked exceptions and errors propagate unchanged
	 */
	public <T> @Nullable T execute(LockRequest request, LockCallback<T> action) {
		Objects.requireNonNull(action, "action must not be null");
		LockHandle handle = acquire(request);
		LockContext.push(handle);
		Observation.Scope scope = (handle instanceof ObservedLockHandle observed) ? observed.observation().openScope()
				: null;
		try {
			return action.doInLock(handle);
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw new UndeclaredThrowableException(ex);
		}
		finally {
			if (scope != null) {
				scope.close();
			}
			LockContext.pop(handle);
			releaseQuietly(handle);
		}
	}

	/**
	 * Acquire a lock and return its grant; the caller must release it, on the same thread.
	 * @param path the lock path below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant
	 * @throws LockAcquisitionException if the lock was not granted in time
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws InvalidLockPathException if the path is not legal
	 * @throws LockException if ZooKeeper cannot serve the request
	 */
	public LockHandle acquire(String path, LockMode mode, @Nullable Duration waitTime) {
		return acquire(new LockRequest(path, mode, true, waitTime));
	}

	/**
	 * Acquire the requested lock and return its grant; the caller must release it.
	 * @param request what to lock
	 * @return the grant
	 * @throws LockAcquisitionException if the lock was not granted in time
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws InvalidLockPathException if the path is not legal
	 * @throws LockException if ZooKeeper cannot serve the request
	 */
	public LockHandle acquire(LockRequest request) {
		Duration waitTime = waitTimeOf(request);
		return tryAcquire(request, waitTime).orElseThrow(() -> new LockAcquisitionException(
				this.provider.fullPath(request.path()), request.mode(), waitTime));
	}

	/**
	 * Try to acquire a lock within the wait time.
	 * @param path the lock path below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws InvalidLockPathException if the path is not legal
	 * @throws LockException if ZooKeeper cannot serve the request (never reported as empty)
	 */
	public Optional<LockHandle> tryAcquire(String path, LockMode mode, @Nullable Duration waitTime) {
		return tryAcquire(new LockRequest(path, mode, true, waitTime));
	}

	/**
	 * Try to acquire the requested lock within its wait time.
	 * @param request what to lock
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws InvalidLockPathException if the path is not legal
	 * @throws LockException if ZooKeeper cannot serve the request (never reported as empty)
	 */
	public Optional<LockHandle> tryAcquire(LockRequest request) {
		return tryAcquire(request, waitTimeOf(request));
	}

	private Optional<LockHandle> tryAcquire(LockRequest request, Duration waitTime) {
		ObservationRegistry registry = this.observationRegistry;
		if (registry.isNoop()) {
			return this.provider.tryAcquire(request.path(), request.mode(), request.reentrant(), waitTime);
		}
		Observation observation = LockObservations.acquire(request, registry).start();
		try {
			Optional<LockHandle> handle = this.provider.tryAcquire(request.path(), request.mode(),
					request.reentrant(), waitTime);
			observation.lowCardinalityKeyValue("outcome", handle.isPresent() ? "acquired" : "timeout");
			return handle.map((granted) -> LockObservations.observeHold(granted, request, registry));
		}
		catch (RuntimeException | Error ex) {
			observation.lowCardinalityKeyValue("outcome", "error");
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	private Duration waitTimeOf(LockRequest request) {
		return (request.waitTime() != null) ? request.waitTime() : this.defaultWaitTime;
	}

	private static void releaseQuietly(LockHandle handle) {
		try {
			handle.release();
		}
		catch (RuntimeException ex) {
			// The business result wins; a lock that could not be deleted dies with the session.
			logger.warn("Failed to release " + handle.mode() + " lock '" + handle.path() + "'", ex);
		}
	}

}
