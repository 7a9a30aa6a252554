package io.github.zklock;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs code under a ZooKeeper lock, or hands out lock grants: the programmatic twin of
 * {@code @DistributedLock} (module zk-lock-spring), which delegates to it. Needs no Spring.
 *
 * <p>Keys are given below the registry's root path ({@code zk.lock.root-path}) and start with
 * {@code /}; parameters named {@code path} take a key. Wait times: a {@code null} wait time uses
 * the default wait time this template was built with; zero makes one attempt without waiting;
 * {@link LockRequest#WAIT_FOREVER} waits without limit; other negative durations are rejected
 * with {@link IllegalArgumentException}.
 *
 * <pre class="code">
 * LockTemplate locks = new LockTemplate(new CuratorLockRegistry(client, "/locks", 10_000), Duration.ofSeconds(5));
 * int left = locks.execute("/stock/apple", LockMode.EXCLUSIVE, null, (handle) -&gt; store.take(handle.fencingToken()));
 * </pre>
 *
 * <p>Thread-safe. Locks are bound to the acquiring thread (except non-reentrant EXCLUSIVE
 * grants): {@code execute} acquires and releases on the calling thread.
 */
public class LockTemplate {

	private static final Log logger = LogFactory.getLog(LockTemplate.class);

	private final LockRegistry registry;

	private final Duration defaultWaitTime;

	/** Only set with an observation registry: Micrometer is an optional dependency. */
	private volatile @Nullable LockObservations observations;

	/**
	 * Create a template.
	 * @param registry the backend that grants locks
	 * @param defaultWaitTime the wait time used when a request gives none: zero, positive, or
	 * {@link LockRequest#WAIT_FOREVER}
	 * @throws IllegalArgumentException if the default wait time is negative but not
	 * {@link LockRequest#WAIT_FOREVER}
	 */
	public LockTemplate(LockRegistry registry, Duration defaultWaitTime) {
		this.registry = Objects.requireNonNull(registry, "registry must not be null");
		this.defaultWaitTime = LockRequest.checkWaitTime(
				Objects.requireNonNull(defaultWaitTime, "defaultWaitTime must not be null"), "The default wait time");
	}

	/**
	 * Set the registry that observes acquisitions ({@code zk.lock.acquire}) and holds
	 * ({@code zk.lock.held}) for metrics and tracing (needs {@code io.micrometer:micrometer-observation}).
	 * Without one (the default) nothing is observed and nothing is added to the lock path. Call it
	 * before the template is used by other threads.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observations = new LockObservations(
				Objects.requireNonNull(observationRegistry, "observationRegistry must not be null"));
	}

	/**
	 * Return the backend this template asks for grants.
	 * @return the lock registry
	 */
	public LockRegistry getRegistry() {
		return this.registry;
	}

	/**
	 * Return the wait time used when a request gives none.
	 * @return the default wait time, {@link LockRequest#WAIT_FOREVER} for no limit
	 */
	public Duration getDefaultWaitTime() {
		return this.defaultWaitTime;
	}

	/**
	 * Run {@code action} under a reentrant EXCLUSIVE lock, waiting the default wait time.
	 * @param <T> the result type
	 * @param path the key below the root path
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 * @throws InvalidLockPathException if the key is not legal (action not run)
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
	 * @param path the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal (action not run)
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
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal (action not run)
	 * @throws LockException if ZooKeeper cannot serve the request (action not run)
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action;
	 * unchecked exceptions and errors propagate unchanged
	 */
	public <T> @Nullable T execute(LockRequest request, LockCallback<T> action) {
		Objects.requireNonNull(action, "action must not be null");
		LockHandle handle = acquire(request);
		LockContext.push(handle);
		LockObservations observations = this.observations;
		Runnable closeScope = (observations != null) ? observations.openScope(handle) : null;
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
			if (closeScope != null) {
				closeScope.run();
			}
			LockContext.pop(handle);
			releaseQuietly(handle);
		}
	}

	/**
	 * Acquire a lock and return its grant; the caller must release it, on the same thread.
	 * @param path the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant
	 * @throws LockAcquisitionException if the lock was not granted in time
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal
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
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal
	 * @throws LockException if ZooKeeper cannot serve the request
	 */
	public LockHandle acquire(LockRequest request) {
		LockRequest resolved = withWaitTime(request);
		Optional<LockHandle> handle = tryAcquireResolved(resolved);
		if (handle.isPresent()) {
			return handle.get();
		}
		Duration waitTime = Objects.requireNonNull(resolved.waitTime());
		throw new LockAcquisitionException(this.registry.lockPath(resolved.path()), resolved.mode(), waitTime);
	}

	/**
	 * Try to acquire a lock within the wait time.
	 * @param path the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal
	 * @throws LockException if ZooKeeper cannot serve the request (never reported as empty)
	 */
	public Optional<LockHandle> tryAcquire(String path, LockMode mode, @Nullable Duration waitTime) {
		return tryAcquire(new LockRequest(path, mode, true, waitTime));
	}

	/**
	 * Try to acquire the requested lock within its wait time.
	 * @param request what to lock
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal
	 * @throws LockException if ZooKeeper cannot serve the request (never reported as empty)
	 */
	public Optional<LockHandle> tryAcquire(LockRequest request) {
		return tryAcquireResolved(withWaitTime(request));
	}

	private Optional<LockHandle> tryAcquireResolved(LockRequest request) {
		LockObservations observations = this.observations;
		return (observations != null) ? observations.tryAcquire(this.registry, request)
				: this.registry.tryAcquire(request);
	}

	private LockRequest withWaitTime(LockRequest request) {
		return (request.waitTime() != null) ? request : request.withWaitTime(this.defaultWaitTime);
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
