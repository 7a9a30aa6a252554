package io.github.zklock;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

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
 * <p>Besides single locks it grants several keys at once ({@link #acquireAll}, a multi-lock),
 * permits of a semaphore ({@link #acquirePermit}) and {@code java.util.concurrent} views of a lock
 * ({@link #lock(String)}, {@link #readWriteLock(String)}).
 *
 * <p>Asynchronous work holds a lock until it completes, without blocking the calling thread:
 * {@link #executeAsync(String, LockMode, Duration, Function)} and its variants, and
 * {@link #acquireAsync(LockRequest)} for a grant that any thread may release (see
 * {@link AsyncLockHandle}: such grants are owned by the grant, not by a thread, and are not
 * reentrant).
 *
 * <p>Thread-safe. Synchronous grants are bound to the acquiring thread (except non-reentrant
 * EXCLUSIVE grants and permits): {@code execute} acquires and releases on the calling thread.
 */
public class LockTemplate {

	private static final Log logger = LogFactory.getLog(LockTemplate.class);

	private final LockRegistry registry;

	private final Duration defaultWaitTime;

	/** Only set with an observation registry: Micrometer is an optional dependency. */
	private volatile @Nullable LockObservations observations;

	private volatile @Nullable Executor asyncExecutor;

	private volatile Executor grantThreads = GrantThreads.platform();

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
	 * handle. A request with {@link LockRequest#withLockAtLeastFor(Duration) lockAtLeastFor} keeps
	 * the grant after a quick action until that time has passed since the grant (released then by
	 * a scheduler thread; the calling thread returns at once).
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
		return run(acquire(request), action);
	}

	/**
	 * Run {@code action} under the requested lock, or, when the lock stays busy for the whole wait
	 * time, skip it and return what {@code whenBusy} supplies, without the lock: for work that one
	 * instance at a time is enough to do, such as a scheduled job. The skip is logged at debug
	 * level and observed as the outcome {@code skipped} of {@code zk.lock.acquire}. Otherwise as
	 * {@link #execute(LockRequest, LockCallback)}.
	 * @param <T> the result type
	 * @param request what to lock
	 * @param action the code to run while the lock is held
	 * @param whenBusy supplies the result when the lock was busy (called on the calling thread)
	 * @return the action's result, or the supplied one
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws InvalidLockPathException if the key is not legal (action not run)
	 * @throws LockException if ZooKeeper cannot serve the request (action not run, never skipped)
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action
	 */
	public <T> @Nullable T executeOrSkip(LockRequest request, LockCallback<T> action,
			Supplier<? extends @Nullable T> whenBusy) {
		Objects.requireNonNull(action, "action must not be null");
		Objects.requireNonNull(whenBusy, "whenBusy must not be null");
		LockRequest resolved = withWaitTime(request);
		Optional<LockHandle> handle = tryAcquireResolved(resolved, true);
		if (handle.isEmpty()) {
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + resolved.name() + ": " + resolved.mode() + " lock '" + resolved.path()
						+ "' busy for " + resolved.waitTime());
			}
			return whenBusy.get();
		}
		return run(handle.get(), action);
	}

	/**
	 * Run {@code action} while holding every key of a multi-lock (see {@link #acquireAll(List)}):
	 * all keys are acquired before the action runs and released, in reverse order, after it
	 * returns or throws. While the action runs, {@link LockContext#current()} returns the
	 * multi-lock's handle.
	 * @param <T> the result type
	 * @param paths the keys below the root path, in any order; duplicates are merged
	 * @param mode the lock mode of every key
	 * @param waitTime how long to wait for all keys together, {@code null} for the default
	 * @param action the code to run while all keys are held
	 * @return the action's result
	 * @throws LockAcquisitionException if a key was not granted in time (action not run, no key
	 * left held)
	 * @throws LockUpgradeException if the thread holds READ on a key and asks for WRITE
	 * @throws InvalidLockPathException if a key is not legal (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve a request (action not run, no key left held)
	 * @throws IllegalArgumentException if no key is given
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action
	 */
	public <T> @Nullable T executeAll(Collection<String> paths, LockMode mode, @Nullable Duration waitTime,
			LockCallback<T> action) {
		Objects.requireNonNull(action, "action must not be null");
		return run(acquireAll(paths, mode, waitTime), action);
	}

	/**
	 * Run {@code action} while holding every requested key (see {@link #acquireAll(List)}).
	 * @param <T> the result type
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @param action the code to run while all keys are held
	 * @return the action's result
	 * @throws LockAcquisitionException if a key was not granted in time (action not run, no key
	 * left held)
	 * @throws LockUpgradeException if the thread holds READ on a key and asks for WRITE
	 * @throws InvalidLockPathException if a key is not legal (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve a request (action not run, no key left held)
	 * @throws IllegalArgumentException if no request is given, or the requests differ in mode,
	 * reentrancy or wait time, or ask for permits
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action
	 */
	public <T> @Nullable T executeAll(List<LockRequest> requests, LockCallback<T> action) {
		Objects.requireNonNull(action, "action must not be null");
		return run(acquireAll(requests), action);
	}

	/**
	 * Run {@code action} while holding every requested key, or, when a key stays busy for the
	 * whole wait time, skip it (no key left held) and return what {@code whenBusy} supplies: the
	 * multi-lock form of {@link #executeOrSkip(LockRequest, LockCallback, Supplier)}.
	 * @param <T> the result type
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @param action the code to run while all keys are held
	 * @param whenBusy supplies the result when a key was busy (called on the calling thread)
	 * @return the action's result, or the supplied one
	 * @throws LockUpgradeException if the thread holds READ on a key and asks for WRITE
	 * @throws InvalidLockPathException if a key is not legal (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve a request (action not run, never skipped)
	 * @throws IllegalArgumentException if no request is given, or the requests differ in mode,
	 * reentrancy or wait time, or ask for permits
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action
	 */
	public <T> @Nullable T executeAllOrSkip(List<LockRequest> requests, LockCallback<T> action,
			Supplier<? extends @Nullable T> whenBusy) {
		Objects.requireNonNull(action, "action must not be null");
		Objects.requireNonNull(whenBusy, "whenBusy must not be null");
		LockHandle handle;
		try {
			handle = acquireAll(requests, true);
		}
		catch (BusyException ex) {
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + requests.get(0).name() + ": " + ex.getMessage());
			}
			return whenBusy.get();
		}
		return run(handle, action);
	}

	private <T> @Nullable T run(LockHandle handle, LockCallback<T> action) {
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
		return acquireResolved(withWaitTime(request));
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

	/**
	 * Acquire several keys as one grant, all or nothing: a multi-lock (for example both accounts
	 * of a transfer). The keys are acquired one after the other in one canonical order, sorted by
	 * their full lock path with duplicates merged, so that two callers naming the same keys in
	 * different orders never wait for each other in a cycle. The wait time is one budget for all
	 * keys. When a key is not granted within what is left of it, or a request fails, the keys
	 * already acquired are released (last first) before the exception is thrown.
	 *
	 * <p>Each key is an ordinary grant: reentrant (a key this thread already holds is re-entered,
	 * so a multi-lock nested in a grant of one of its keys works), queued like a single key,
	 * observed like one. The returned handle is held while every part is held; its
	 * {@link LockHandle#parts() parts} give each key's path and fencing token. It is bound to the
	 * acquiring thread like its parts. One key gives that key's plain grant.
	 *
	 * <p>Curator's {@code InterProcessMultiLock} is not used: it takes the locks in the order given,
	 * waits up to the full wait time for each key (so up to n times the wait in all), and works on
	 * fixed recipe instances, which would bypass this registry's per-thread instances and local
	 * queue.
	 * @param paths the keys below the root path, in any order; duplicates are merged
	 * @param mode the lock mode of every key
	 * @param waitTime how long to wait for all keys together, {@code null} for the default
	 * @return the grant of all keys; the caller must release it
	 * @throws LockAcquisitionException if a key was not granted in time (no key left held)
	 * @throws LockUpgradeException if the thread holds READ on a key and asks for WRITE
	 * @throws InvalidLockPathException if a key is not legal (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve a request (no key left held)
	 * @throws IllegalArgumentException if no key is given
	 */
	public LockHandle acquireAll(Collection<String> paths, LockMode mode, @Nullable Duration waitTime) {
		Objects.requireNonNull(paths, "paths must not be null");
		List<LockRequest> requests = new ArrayList<>(paths.size());
		for (String path : paths) {
			requests.add(new LockRequest(path, mode, true, waitTime));
		}
		return acquireAll(requests);
	}

	/**
	 * Acquire several keys as one grant, all or nothing, as {@link #acquireAll(Collection, LockMode, Duration)}
	 * does, from one request per key (each may carry its own name for metrics).
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @return the grant of all keys; the caller must release it
	 * @throws LockAcquisitionException if a key was not granted in time (no key left held)
	 * @throws LockUpgradeException if the thread holds READ on a key and asks for WRITE
	 * @throws InvalidLockPathException if a key is not legal (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve a request (no key left held)
	 * @throws IllegalArgumentException if no request is given, or the requests differ in mode,
	 * reentrancy or wait time, or ask for permits
	 */
	public LockHandle acquireAll(List<LockRequest> requests) {
		return acquireAll(requests, false);
	}

	private LockHandle acquireAll(List<LockRequest> requests, boolean skipOnBusy) {
		return acquireAll(checkedMultiLock(requests), skipOnBusy, null);
	}

	/**
	 * The keys of a multi-lock, validated and in canonical order.
	 * @param byLockPath one request per lock path, sorted, with the resolved wait time and no
	 * lockAtLeastFor (a part given up on the way is released at once)
	 * @param first the first request as given, resolved, whose lockAtLeastFor applies to the whole
	 */
	private record MultiLock(TreeMap<String, LockRequest> byLockPath, LockRequest first) {
	}

	/**
	 * Validate and order the keys of a multi-lock before any request: an invalid key acquires
	 * nothing.
	 */
	private MultiLock checkedMultiLock(List<LockRequest> requests) {
		Objects.requireNonNull(requests, "requests must not be null");
		if (requests.isEmpty()) {
			throw new IllegalArgumentException("A multi-lock needs at least one key");
		}
		LockRequest first = withWaitTime(requests.get(0));
		Duration waitTime = Objects.requireNonNull(first.waitTime());
		// Validated and ordered before any request: an invalid key acquires nothing.
		TreeMap<String, LockRequest> byLockPath = new TreeMap<>();
		for (LockRequest request : requests) {
			LockRequest resolved = withWaitTime(request);
			if (resolved.mode() != first.mode() || resolved.reentrant() != first.reentrant()
					|| !waitTime.equals(resolved.waitTime()) || resolved.isPermit()
					|| !resolved.lockAtLeastFor().equals(first.lockAtLeastFor())) {
				throw new IllegalArgumentException("The keys of a multi-lock share one mode, reentrancy, wait time "
						+ "and lockAtLeastFor and are no permits: " + first + " and " + resolved + " differ");
			}
			// Kept at least that long as a whole: a part given up on the way is released at once.
			byLockPath.putIfAbsent(this.registry.lockPath(resolved.path()),
					resolved.withLockAtLeastFor(Duration.ZERO));
		}
		return new MultiLock(byLockPath, first);
	}

	private LockHandle acquireAll(MultiLock multiLock, boolean skipOnBusy, @Nullable Object parentObservation) {
		return acquireAll(multiLock, skipOnBusy, skipOnBusy, parentObservation);
	}

	/**
	 * @param busyAsBusyException whether a busy key throws {@link BusyException} (for the callers
	 * that turn it into a skip or an empty result) rather than {@link LockAcquisitionException}
	 * @param skipOnBusy whether a busy key is observed as skipped
	 */
	private LockHandle acquireAll(MultiLock multiLock, boolean busyAsBusyException, boolean skipOnBusy,
			@Nullable Object parentObservation) {
		TreeMap<String, LockRequest> byLockPath = multiLock.byLockPath();
		LockRequest first = multiLock.first();
		Duration waitTime = Objects.requireNonNull(first.waitTime());
		boolean timed = !waitTime.isNegative() && !waitTime.isZero();
		long deadline = System.nanoTime() + (timed ? waitTime.toNanos() : 0);
		List<LockHandle> acquired = new ArrayList<>(byLockPath.size());
		try {
			for (Map.Entry<String, LockRequest> entry : byLockPath.entrySet()) {
				LockRequest request = entry.getValue();
				if (timed) {
					request = request.withWaitTime(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
				}
				Optional<LockHandle> handle = tryAcquireResolved(request, skipOnBusy, parentObservation);
				if (handle.isEmpty()) {
					String reason = (byLockPath.size() == 1) ? "held by another owner"
							: "held by another owner; the multi-lock's keys acquired before it (" + acquired.size()
									+ " of " + byLockPath.size() + ") were released";
					throw busyAsBusyException ? new BusyException(entry.getKey(), first.mode(), waitTime, reason)
							: new LockAcquisitionException(entry.getKey(), first.mode(), waitTime, reason);
				}
				acquired.add(handle.get());
			}
		}
		catch (RuntimeException | Error ex) {
			for (int i = acquired.size() - 1; i >= 0; i--) {
				releaseQuietly(acquired.get(i));
			}
			throw ex;
		}
		return keepAtLeast((acquired.size() == 1) ? acquired.get(0) : new MultiLockHandle(acquired, first.mode()),
				first.lockAtLeastFor());
	}

	/**
	 * Acquire one permit (lease) of a semaphore: at most {@code permits} holders of the key at once
	 * across every application (Curator {@code InterProcessSemaphoreV2} on the key's lock path).
	 * The permit is not reentrant and not bound to a thread: release it from any thread. Its
	 * fencing token is the lease znode's {@code czxid}; it is lost with the session like a lock.
	 * Every participant must name the same number of permits for a key: the first to use the key
	 * stores its number with it (in the data of the key's znode), a participant naming another
	 * number fails with {@link PermitsMismatchException} before it acquires anything.
	 * @param path the key below the root path
	 * @param permits how many holders the semaphore lets in at once, positive
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant of one permit; the caller must release it
	 * @throws LockAcquisitionException if no permit was free in time
	 * @throws PermitsMismatchException if another number of permits is stored with the key
	 * @throws InvalidLockPathException if the key is not legal
	 * @throws LockException if ZooKeeper cannot serve the request
	 * @throws IllegalArgumentException if {@code permits} is not positive
	 */
	public LockHandle acquirePermit(String path, int permits, @Nullable Duration waitTime) {
		return acquire(new LockRequest(path, LockMode.EXCLUSIVE, false, waitTime).withPermits(permits));
	}

	/**
	 * Return a {@link Lock} view of a reentrant EXCLUSIVE lock on a key, for code written against
	 * {@code java.util.concurrent.locks}. Each {@code lock()} or successful {@code tryLock} is a
	 * grant of this template (observed, queued and reentrant like any other); {@code unlock()}
	 * releases the calling thread's latest grant of the key. Grants are bound to the thread: a
	 * thread that holds none gets {@link IllegalMonitorStateException} from {@code unlock()}.
	 * Views of the same key, mode and template are equal and interchangeable: a lock taken through
	 * one may be unlocked through another. A view holds no resources; creating one sends no
	 * request.
	 *
	 * <ul>
	 * <li>{@code lock()} waits without limit and is not interruptible (an interrupt is kept and
	 * restored once the lock is granted);</li>
	 * <li>{@code lockInterruptibly()} and {@code tryLock(time, unit)} throw
	 * {@link InterruptedException} when interrupted (the thread's interrupt flag cleared, no grant
	 * left behind);</li>
	 * <li>{@code tryLock()} makes one attempt;</li>
	 * <li>{@code newCondition()} throws {@link UnsupportedOperationException}: a ZooKeeper lock
	 * has no condition queue;</li>
	 * <li>ZooKeeper failures are thrown as {@link LockException}, never reported as a busy lock
	 * ({@code false}); an invalid key throws {@link InvalidLockPathException} on first use;</li>
	 * <li>a thread whose grant of the key was lost with its ZooKeeper session gets
	 * {@link LockLostException} from {@code lock()} and {@code tryLock} instead of a re-entry, until
	 * it has unlocked that grant (as every nested request of the registry does).</li>
	 * </ul>
	 * @param path the key below the root path
	 * @return the lock view
	 */
	public Lock lock(String path) {
		return new LockView(this, Objects.requireNonNull(path, "path must not be null"), LockMode.EXCLUSIVE);
	}

	/**
	 * Return a {@link ReadWriteLock} view of the READ and WRITE locks of a key: its
	 * {@code readLock()} and {@code writeLock()} behave as {@link #lock(String)} does, for READ and
	 * WRITE grants. The write lock's holder may take the read lock; a read lock holder asking for
	 * the write lock gets {@link LockUpgradeException} at once, from {@code lock()} too.
	 * @param path the key below the root path
	 * @return the read-write lock view
	 */
	public ReadWriteLock readWriteLock(String path) {
		Objects.requireNonNull(path, "path must not be null");
		LockView read = new LockView(this, path, LockMode.READ);
		LockView write = new LockView(this, path, LockMode.WRITE);
		return new ReadWriteLock() {

			@Override
			public Lock readLock() {
				return read;
			}

			@Override
			public Lock writeLock() {
				return write;
			}

		};
	}

	/**
	 * Set the executor on which the asynchronous methods invoke their action once the lock is
	 * granted ({@link #executeAsync(LockRequest, Function)} and its variants). Without one (the
	 * default) the action runs on the grant's own thread (see {@link AsyncLockHandle}). The Spring
	 * Boot starter sets Boot's {@code applicationTaskExecutor} when there is one. Acquisitions never
	 * wait on this executor: a grant's thread is occupied for the whole wait and hold, which would
	 * starve a bounded pool. Call it before the template is used by other threads.
	 * @param asyncExecutor the executor, or {@code null} for the grant's thread
	 */
	public void setAsyncExecutor(@Nullable Executor asyncExecutor) {
		this.asyncExecutor = asyncExecutor;
	}

	/**
	 * Set whether asynchronous grants are owned by virtual threads (Java 21 and later) rather than
	 * pooled platform threads (see {@link AsyncLockHandle}). Off by default: a platform thread hands
	 * a grant over faster (an uncontended asynchronous cycle costs about 0.94 of a synchronous one
	 * with platform threads, 0.85 with virtual threads, see BENCHMARKS.md); a virtual thread makes
	 * many concurrent asynchronous waits and holds cheap (no platform thread each). The Spring Boot
	 * starter turns it on with {@code spring.threads.virtual.enabled=true}. Applies to grants
	 * requested after the call.
	 * @param virtualGrantThreads whether to use virtual threads
	 * @return whether virtual threads are used: {@code false} when asked for before Java 21 (logged)
	 */
	public boolean setVirtualGrantThreads(boolean virtualGrantThreads) {
		Executor virtual = virtualGrantThreads ? GrantThreads.virtual() : null;
		if (virtualGrantThreads && virtual == null) {
			logger.warn("Virtual threads need Java 21 or later; asynchronous grants use platform threads");
		}
		this.grantThreads = (virtual != null) ? virtual : GrantThreads.platform();
		return virtual != null;
	}

	/**
	 * Return whether asynchronous grants are owned by virtual threads.
	 * @return {@code true} if they are
	 */
	public boolean isVirtualGrantThreads() {
		return this.grantThreads != GrantThreads.platform();
	}

	/**
	 * Return the executor on which asynchronous actions are invoked.
	 * @return the executor, or {@code null} when actions run on the grant's own thread
	 */
	public @Nullable Executor getAsyncExecutor() {
		return this.asyncExecutor;
	}

	/**
	 * Run an asynchronous action under a lock, without blocking the calling thread: the lock is
	 * acquired on a thread of its own, the action is invoked once it is granted (on the
	 * {@linkplain #setAsyncExecutor async executor}, else on that thread), and the grant is held
	 * until the stage the action returns completes, normally, exceptionally or by cancellation. The
	 * returned future completes after the grant is released, with the stage's result or exception.
	 * See {@link #executeAsync(LockRequest, Function)}.
	 * @param <T> the result type
	 * @param path the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @param action the work to run under the lock; must not return {@code null}
	 * @return the result, completed after the release
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public <T> CompletableFuture<T> executeAsync(String path, LockMode mode, @Nullable Duration waitTime,
			Function<LockHandle, ? extends CompletionStage<T>> action) {
		return executeAsync(new LockRequest(path, mode, true, waitTime), action);
	}

	/**
	 * Run an asynchronous action under the requested lock, without blocking the calling thread.
	 *
	 * <ul>
	 * <li>The lock is acquired on a thread of the grant's own (see {@link AsyncLockHandle}), which
	 * waits for ZooKeeper; the calling thread only validates the request.</li>
	 * <li>Once granted, {@code action} is invoked with the grant (an {@link AsyncLockHandle}) on the
	 * {@linkplain #setAsyncExecutor async executor}, or on the grant's thread without one. While the
	 * action itself runs (not its stage's later callbacks), {@link LockContext#current()} returns
	 * the grant and the hold observation is current: a transaction committed within the action is
	 * checked by the commit guard. Afterwards, use the handle passed to the action.</li>
	 * <li>The grant is held until the returned stage completes, then released on its own thread; the
	 * future returned here completes after that, with the stage's result, or exceptionally with
	 * its exception (a {@link CompletionException}'s cause unwrapped) or with what the action
	 * threw.</li>
	 * <li>Busy for the whole wait time: completes exceptionally with
	 * {@link LockAcquisitionException}, the action not run; ZooKeeper failures with
	 * {@link LockException}.</li>
	 * <li>Cancelling the returned future before the grant gives up the wait (a grant made meanwhile
	 * is released at once); after it, cancels the action's stage when that is a
	 * {@link CompletableFuture} (once the action has returned it) and releases the grant when the
	 * stage completes. A cancelled future is done at once: the release follows in the
	 * background.</li>
	 * <li>Lost: with interrupt-on-lost (see {@link AsyncLockHandle#whenLost()}; EXCLUSIVE
	 * reentrant, READ and WRITE grants), the action's stage is cancelled and the returned future
	 * completes exceptionally with {@link LockLostException} once the grant is released.</li>
	 * <li>Not reentrant: a nested request for a key this grant holds waits and fails after its wait
	 * time (see {@link AsyncLockHandle}).</li>
	 * </ul>
	 * @param <T> the result type
	 * @param request what to lock
	 * @param action the work to run under the lock; must not return {@code null}
	 * @return the result, completed after the release
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public <T> CompletableFuture<T> executeAsync(LockRequest request,
			Function<LockHandle, ? extends CompletionStage<T>> action) {
		Objects.requireNonNull(action, "action must not be null");
		LockRequest resolved = checkedAsync(request);
		// Read on the calling thread: the grant thread has no current observation.
		Object parent = parentObservation();
		return runAsync(() -> Optional.of(acquireResolved(resolved, parent)), resolved, action, null);
	}

	/**
	 * Run an asynchronous action under the requested lock, or, when the lock stays busy for the
	 * whole wait time, skip it and complete with what {@code whenBusy} supplies, without the lock.
	 * Otherwise as {@link #executeAsync(LockRequest, Function)}.
	 * @param <T> the result type
	 * @param request what to lock
	 * @param action the work to run under the lock; must not return {@code null}
	 * @param whenBusy supplies the result when the lock was busy (called on the grant's thread)
	 * @return the result, completed after the release
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public <T> CompletableFuture<T> executeAsyncOrSkip(LockRequest request,
			Function<LockHandle, ? extends CompletionStage<T>> action, Supplier<? extends @Nullable T> whenBusy) {
		Objects.requireNonNull(action, "action must not be null");
		Objects.requireNonNull(whenBusy, "whenBusy must not be null");
		LockRequest resolved = checkedAsync(request);
		Object parent = parentObservation();
		return runAsync(() -> tryAcquireResolved(resolved, true, parent), resolved, action, whenBusy);
	}

	/**
	 * Run an asynchronous action while holding every requested key of a multi-lock (see
	 * {@link #acquireAll(List)}), acquired on a thread of the grant's own; otherwise as
	 * {@link #executeAsync(LockRequest, Function)}.
	 * @param <T> the result type
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @param action the work to run while all keys are held; must not return {@code null}
	 * @return the result, completed after the release of every key
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 * @throws IllegalArgumentException if no request is given, or the requests differ
	 */
	public <T> CompletableFuture<T> executeAllAsync(List<LockRequest> requests,
			Function<LockHandle, ? extends CompletionStage<T>> action) {
		Objects.requireNonNull(action, "action must not be null");
		MultiLock multiLock = checkedMultiLock(requests);
		Object parent = parentObservation();
		return runAsync(() -> Optional.of(acquireAll(multiLock, false, parent)), multiLock.first(), action, null);
	}

	/**
	 * The multi-lock form of {@link #executeAsyncOrSkip(LockRequest, Function, Supplier)}.
	 * @param <T> the result type
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @param action the work to run while all keys are held; must not return {@code null}
	 * @param whenBusy supplies the result when a key was busy (called on the grant's thread)
	 * @return the result, completed after the release of every key
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 * @throws IllegalArgumentException if no request is given, or the requests differ
	 */
	public <T> CompletableFuture<T> executeAllAsyncOrSkip(List<LockRequest> requests,
			Function<LockHandle, ? extends CompletionStage<T>> action, Supplier<? extends @Nullable T> whenBusy) {
		Objects.requireNonNull(action, "action must not be null");
		Objects.requireNonNull(whenBusy, "whenBusy must not be null");
		MultiLock multiLock = checkedMultiLock(requests);
		Object parent = parentObservation();
		return runAsync(() -> tryAcquireAll(multiLock, true, parent), multiLock.first(), action, whenBusy);
	}

	/**
	 * Acquire the requested lock without blocking the calling thread, as a grant that any thread
	 * may release (see {@link AsyncLockHandle}). The caller must release it.
	 * @param request what to lock
	 * @return the grant; completes exceptionally with {@link LockAcquisitionException} when busy for
	 * the whole wait time, with {@link LockException} when ZooKeeper cannot serve the request.
	 * Cancelling it gives up the wait (a grant made meanwhile is released at once).
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public CompletableFuture<AsyncLockHandle> acquireAsync(LockRequest request) {
		LockRequest resolved = checkedAsync(request);
		Object parent = parentObservation();
		return present(startAsync(() -> Optional.of(acquireResolved(resolved, parent)), resolved));
	}

	/**
	 * Try to acquire the requested lock within its wait time, without blocking the calling thread
	 * (see {@link #acquireAsync(LockRequest)}).
	 * @param request what to lock
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * (completes exceptionally with {@link LockException} when ZooKeeper cannot serve the request,
	 * never empty then)
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public CompletableFuture<Optional<AsyncLockHandle>> tryAcquireAsync(LockRequest request) {
		LockRequest resolved = checkedAsync(request);
		Object parent = parentObservation();
		return startAsync(() -> tryAcquireResolved(resolved, false, parent), resolved);
	}

	/**
	 * Try to acquire the requested lock for work that is skipped when the lock stays busy for the
	 * whole wait time, without blocking the calling thread: as
	 * {@link #tryAcquireAsync(LockRequest)}, but a busy lock is observed as the outcome
	 * {@code skipped} of {@code zk.lock.acquire}, not {@code timeout} (the reactive form of
	 * {@link #executeOrSkip}).
	 * @param request what to lock
	 * @return the grant, or empty when the lock was busy
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public CompletableFuture<Optional<AsyncLockHandle>> acquireAsyncOrSkip(LockRequest request) {
		LockRequest resolved = checkedAsync(request);
		Object parent = parentObservation();
		return startAsync(() -> tryAcquireResolved(resolved, true, parent), resolved);
	}

	/**
	 * Acquire several keys as one grant, all or nothing (see {@link #acquireAll(List)}), without
	 * blocking the calling thread; any thread may release it (see {@link AsyncLockHandle}).
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @return the grant of all keys; completes exceptionally with {@link LockAcquisitionException}
	 * when a key was busy (no key left held) or {@link LockException}
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 * @throws IllegalArgumentException if no request is given, or the requests differ
	 */
	public CompletableFuture<AsyncLockHandle> acquireAllAsync(List<LockRequest> requests) {
		MultiLock multiLock = checkedMultiLock(requests);
		Object parent = parentObservation();
		return present(startAsync(() -> Optional.of(acquireAll(multiLock, false, parent)), multiLock.first()));
	}

	/**
	 * Try to acquire several keys as one grant, without blocking the calling thread (see
	 * {@link #acquireAllAsync(List)}).
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @return the grant of all keys, or empty when a key was busy for the whole wait time (no key
	 * left held)
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 * @throws IllegalArgumentException if no request is given, or the requests differ
	 */
	public CompletableFuture<Optional<AsyncLockHandle>> tryAcquireAllAsync(List<LockRequest> requests) {
		MultiLock multiLock = checkedMultiLock(requests);
		Object parent = parentObservation();
		return startAsync(() -> tryAcquireAll(multiLock, false, parent), multiLock.first());
	}

	/**
	 * The multi-lock form of {@link #acquireAsyncOrSkip(LockRequest)}.
	 * @param requests one request per key, sharing mode, reentrancy and wait time
	 * @return the grant of all keys, or empty when a key was busy (no key left held)
	 * @throws InvalidLockPathException if a key is not legal (thrown at once, nothing requested)
	 * @throws IllegalArgumentException if no request is given, or the requests differ
	 */
	public CompletableFuture<Optional<AsyncLockHandle>> acquireAllAsyncOrSkip(List<LockRequest> requests) {
		MultiLock multiLock = checkedMultiLock(requests);
		Object parent = parentObservation();
		return startAsync(() -> tryAcquireAll(multiLock, true, parent), multiLock.first());
	}

	private Optional<LockHandle> tryAcquireAll(MultiLock multiLock, boolean skipOnBusy, @Nullable Object parent) {
		try {
			return Optional.of(acquireAll(multiLock, true, skipOnBusy, parent));
		}
		catch (BusyException ex) {
			return Optional.empty();
		}
	}

	/** Resolve the wait time and validate the key on the calling thread, before any request. */
	private LockRequest checkedAsync(LockRequest request) {
		Objects.requireNonNull(request, "request must not be null");
		LockRequest resolved = withWaitTime(request);
		this.registry.lockPath(resolved.path());
		return resolved;
	}

	private @Nullable Object parentObservation() {
		LockObservations observations = this.observations;
		return (observations != null) ? observations.currentObservation() : null;
	}

	/**
	 * Start an acquisition on a grant thread. A grant bound to its thread (reentrant EXCLUSIVE,
	 * READ, WRITE) keeps that thread, parked, until it is released.
	 * @param acquisition acquires on the grant thread; empty when busy
	 * @param request the request (or a multi-lock's first): whether the grant is bound to its thread
	 */
	private CompletableFuture<Optional<AsyncLockHandle>> startAsync(Supplier<Optional<LockHandle>> acquisition,
			LockRequest request) {
		return startAsync(acquisition, request, null);
	}

	/**
	 * @param whenGranted called with the outcome on the grant thread (registered before the thread
	 * starts, so never on the caller's), {@code null} for none
	 */
	private CompletableFuture<Optional<AsyncLockHandle>> startAsync(Supplier<Optional<LockHandle>> acquisition,
			LockRequest request, @Nullable BiConsumer<Optional<AsyncLockHandle>, Throwable> whenGranted) {
		boolean threadBound = request.reentrant() || request.mode() != LockMode.EXCLUSIVE;
		CompletableFuture<Optional<AsyncLockHandle>> result = new CompletableFuture<>();
		// The thread waiting for the grant, guarded by itself: a cancellation interrupts the wait,
		// never what the thread does after it.
		AtomicReference<@Nullable Thread> waiting = new AtomicReference<>();
		result.whenComplete((granted, ex) -> {
			if (result.isCancelled()) {
				synchronized (waiting) {
					Thread waiter = waiting.get();
					if (waiter != null) {
						waiter.interrupt();
					}
				}
			}
		});
		if (whenGranted != null) {
			result.whenComplete(whenGranted);
		}
		Executor grantThreads = this.grantThreads;
		grantThreads.execute(() -> {
			Thread.interrupted();
			if (result.isDone()) {
				return;
			}
			Optional<LockHandle> granted;
			waiting.set(Thread.currentThread());
			try {
				granted = acquisition.get();
			}
			catch (Throwable ex) {
				result.completeExceptionally(ex);
				return;
			}
			finally {
				synchronized (waiting) {
					waiting.set(null);
				}
				if (result.isCancelled()) {
					// The cancellation's interrupt, which came too late to end the wait.
					Thread.interrupted();
				}
			}
			if (granted.isEmpty()) {
				result.complete(Optional.empty());
				return;
			}
			AsyncGrant grant = new AsyncGrant(granted.get(), threadBound ? Thread.currentThread() : null,
					grantThreads);
			if (!result.complete(Optional.of(grant))) {
				// Cancelled while it was granted.
				grant.releaseNow();
				return;
			}
			if (threadBound) {
				grant.holdUntilReleased();
			}
		});
		return result;
	}

	private static CompletableFuture<AsyncLockHandle> present(CompletableFuture<Optional<AsyncLockHandle>> granted) {
		CompletableFuture<AsyncLockHandle> result = granted.thenApply(Optional::orElseThrow);
		// Cancelling the caller's future gives up the acquisition.
		result.whenComplete((handle, ex) -> {
			if (result.isCancelled()) {
				granted.cancel(false);
			}
		});
		return result;
	}

	/**
	 * Invoke the action when granted and complete the result after the release.
	 * @param whenBusy supplies the result when the lock was busy; {@code null} when the acquisition
	 * fails instead
	 */
	private <T> CompletableFuture<T> runAsync(Supplier<Optional<LockHandle>> acquisition, LockRequest request,
			Function<LockHandle, ? extends CompletionStage<T>> action, @Nullable Supplier<? extends @Nullable T> whenBusy) {
		CompletableFuture<T> result = new CompletableFuture<>();
		CompletableFuture<Optional<AsyncLockHandle>> grant = startAsync(acquisition, request, (granted, ex) -> {
			if (ex != null) {
				result.completeExceptionally(AsyncGrant.unwrap(ex));
				return;
			}
			if (granted.isEmpty()) {
				try {
					result.complete(Objects.requireNonNull(whenBusy, "busy without a whenBusy").get());
				}
				catch (Throwable failure) {
					result.completeExceptionally(failure);
				}
				return;
			}
			AsyncGrant asyncGrant = (AsyncGrant) granted.get();
			Executor executor = this.asyncExecutor;
			if (executor == null) {
				invokeAsync(asyncGrant, action, result);
				return;
			}
			try {
				executor.execute(() -> invokeAsync(asyncGrant, action, result));
			}
			catch (RuntimeException rejected) {
				asyncGrant.releaseAsync()
					.whenComplete((released, releaseFailure) -> result.completeExceptionally(rejected));
			}
		});
		result.whenComplete((value, ex) -> {
			if (result.isCancelled()) {
				grant.cancel(false);
			}
		});
		return result;
	}

	private <T> void invokeAsync(AsyncGrant grant, Function<LockHandle, ? extends CompletionStage<T>> action,
			CompletableFuture<T> result) {
		CompletionStage<T> stage;
		LockContext.push(grant);
		LockObservations observations = this.observations;
		Runnable closeScope = (observations != null) ? observations.openScope(grant.grant()) : null;
		try {
			stage = action.apply(grant);
			if (stage == null) {
				throw new IllegalStateException("The asynchronous action under lock '" + grant.path()
						+ "' returned null instead of a CompletionStage");
			}
		}
		catch (Throwable ex) {
			stage = CompletableFuture.failedFuture(ex);
		}
		finally {
			if (closeScope != null) {
				closeScope.run();
			}
			LockContext.pop(grant);
		}
		CompletionStage<T> work = stage;
		AtomicBoolean lost = new AtomicBoolean();
		result.whenComplete((value, ex) -> {
			if (result.isCancelled()) {
				cancel(work);
			}
		});
		grant.whenLost().thenRun(() -> {
			lost.set(true);
			cancel(work);
		});
		work.whenComplete((value, ex) -> grant.releaseAsync().whenComplete((released, releaseFailure) -> {
			if (releaseFailure != null) {
				logger.warn("Failed to release " + grant.mode() + " lock '" + grant.path() + "'",
						AsyncGrant.unwrap(releaseFailure));
			}
			if (lost.get()) {
				result.completeExceptionally(new LockLostException(grant.path(), grant.mode(),
						"the ZooKeeper session was lost while the asynchronous work held the lock; the work was "
								+ "cancelled"));
			}
			else if (ex != null) {
				result.completeExceptionally(AsyncGrant.unwrap(ex));
			}
			else {
				result.complete(value);
			}
		}));
	}

	private static void cancel(CompletionStage<?> stage) {
		try {
			stage.toCompletableFuture().cancel(true);
		}
		catch (UnsupportedOperationException ex) {
			// A stage that cannot be cancelled ends on its own; the grant is released then.
		}
	}

	private LockHandle acquireResolved(LockRequest resolved) {
		return acquireResolved(resolved, null);
	}

	private LockHandle acquireResolved(LockRequest resolved, @Nullable Object parentObservation) {
		Optional<LockHandle> handle = tryAcquireResolved(resolved, false, parentObservation);
		if (handle.isPresent()) {
			return handle.get();
		}
		Duration waitTime = Objects.requireNonNull(resolved.waitTime());
		throw new LockAcquisitionException(this.registry.lockPath(resolved.path()), resolved.mode(), waitTime,
				resolved.isPermit() ? "all " + resolved.permits() + " permits are held" : "held by another owner");
	}

	private Optional<LockHandle> tryAcquireResolved(LockRequest request) {
		return tryAcquireResolved(request, false);
	}

	private Optional<LockHandle> tryAcquireResolved(LockRequest request, boolean skipOnBusy) {
		return tryAcquireResolved(request, skipOnBusy, null);
	}

	/**
	 * @param parentObservation the observation current on the thread that asked, when the request
	 * is made on a grant thread (see {@link LockObservations#currentObservation()})
	 */
	private Optional<LockHandle> tryAcquireResolved(LockRequest request, boolean skipOnBusy,
			@Nullable Object parentObservation) {
		LockObservations observations = this.observations;
		Optional<LockHandle> handle = (observations != null)
				? observations.tryAcquire(this.registry, request, skipOnBusy, parentObservation)
				: this.registry.tryAcquire(request);
		if (handle.isEmpty() || request.lockAtLeastFor().isZero()) {
			// The hot path: nothing more allocated per grant.
			return handle;
		}
		return Optional.of(keepAtLeast(handle.get(), request.lockAtLeastFor()));
	}

	/**
	 * Return a view of a grant whose release, when asked for before {@code lockAtLeastFor} has
	 * passed from now, is carried out then by a scheduler thread, as for a grant of a request with
	 * {@link LockRequest#withLockAtLeastFor(Duration) lockAtLeastFor} (counted from its grant
	 * there): for keeping a grant longer once it is held, such as when a job extends its lock.
	 * Views compose: the grant is released once every view's time has passed. The grant must not be
	 * bound to a thread (a non-reentrant EXCLUSIVE lock or a permit), since another thread
	 * releases it. A grant that is lost is released at once.
	 * @param handle the grant
	 * @param lockAtLeastFor how long from now the grant is kept at least; zero returns the grant
	 * @return the view, whose {@code release()} returns at once
	 * @throws IllegalArgumentException if {@code lockAtLeastFor} is negative
	 */
	public static LockHandle keepAtLeast(LockHandle handle, Duration lockAtLeastFor) {
		Objects.requireNonNull(handle, "handle must not be null");
		if (lockAtLeastFor.isNegative()) {
			throw new IllegalArgumentException("lockAtLeastFor must not be negative, was " + lockAtLeastFor);
		}
		return lockAtLeastFor.isZero() ? handle : new LingeringLockHandle(handle, System.nanoTime(), lockAtLeastFor);
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

	/** A key of a multi-lock stayed busy and the caller skips: never leaves the template. */
	@SuppressWarnings("serial")
	private static final class BusyException extends LockAcquisitionException {

		BusyException(String path, LockMode mode, Duration waitTime, String reason) {
			super(path, mode, waitTime, reason);
		}

	}

}
