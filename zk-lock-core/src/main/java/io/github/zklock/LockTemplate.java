package io.github.zklock;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.engine.Attempt;
import io.github.zklock.engine.LockEngine;
import io.github.zklock.spi.LockRegistry;

/**
 * Runs code under a ZooKeeper lock, or hands out grants: the programmatic twin of
 * {@code @DistributedLock} (module zk-lock-spring), which delegates to it. Needs no Spring.
 * Three verbs take a {@link LockRequest}, which says what to lock and how (one key or several,
 * mode, reentrancy, permits, wait time, on-busy policy, lockAtLeastFor, lockAtMostFor):
 * {@link #execute(LockRequest, LockCallback) execute}, {@link #acquire(LockRequest) acquire} and
 * {@link #tryAcquire(LockRequest) tryAcquire}; the key-first forms are shortcuts for a request of
 * one key; {@link #async()} has the same verbs without blocking.
 *
 * <pre class="code">
 * LockTemplate locks = new LockTemplate(new CuratorLockRegistry(client, "/locks", 10_000), Duration.ofSeconds(5));
 * int left = locks.execute("/stock/apple", (handle) -&gt; store.take(handle.fencingToken()));
 * </pre>
 *
 * <p>Keys are given below the registry's root path and start with {@code /}. Wait times:
 * {@code null} uses the template's default; zero makes one attempt; {@link LockRequest#WAIT_FOREVER}
 * waits without limit. Exceptions of every verb: {@link InvalidLockPathException} for an illegal key (nothing
 * requested); {@link LockUpgradeException} when the thread holds READ on a key and asks for WRITE;
 * {@link PermitsMismatchException} for a permit whose number differs from the key's;
 * {@link LockLostException} for a request nested in a lost grant of the same key;
 * {@link LockException} when ZooKeeper cannot serve the request (never reported as busy). A lock
 * busy for the whole wait time is {@link LockAcquisitionException} unless said otherwise.
 *
 * <p>Thread-safe. Grants of reentrant requests are bound to the acquiring thread (see
 * {@link LockRequest}): {@code execute} acquires and releases on the calling thread.
 */
public class LockTemplate {

	private static final Log logger = LogFactory.getLog(LockTemplate.class);

	private final LockEngine engine;

	private final DefaultAsyncLockTemplate async;

	/**
	 * Create a template without observations, whose asynchronous work runs on the grants' threads.
	 * @param registry the backend that grants locks
	 * @param defaultWaitTime the wait time of requests that give none
	 * @throws IllegalArgumentException if it is negative but not {@link LockRequest#WAIT_FOREVER}
	 */
	public LockTemplate(LockRegistry registry, Duration defaultWaitTime) {
		this(builder(registry).defaultWaitTime(defaultWaitTime).engine());
	}

	LockTemplate(LockEngine engine) {
		this.engine = engine;
		this.async = new DefaultAsyncLockTemplate(engine);
	}

	/**
	 * Start building a template with more than a default wait time.
	 * @param registry the backend that grants locks
	 * @return the builder
	 */
	public static LockTemplateBuilder builder(LockRegistry registry) {
		return new LockTemplateBuilder(registry);
	}

	/**
	 * Return the backend this template asks for grants.
	 * @return the lock registry
	 */
	public LockRegistry getRegistry() {
		return this.engine.registry();
	}

	/**
	 * Return the wait time of requests that give none.
	 * @return the default wait time, {@link LockRequest#WAIT_FOREVER} for no limit
	 */
	public Duration getDefaultWaitTime() {
		return this.engine.defaultWaitTime();
	}

	/**
	 * Return the ceiling of requests that give none
	 * ({@link LockRequest#withLockAtMostFor(Duration)}, {@link LockTemplateBuilder#defaultLockAtMostFor}).
	 * @return the default lockAtMostFor, {@link LockRequest#NO_CEILING} for none
	 */
	public Duration getDefaultLockAtMostFor() {
		return this.engine.defaultLockAtMostFor();
	}

	/**
	 * Run {@code action} under the requested lock, released in a {@code finally} block on the
	 * calling thread; a failed release is logged, never thrown over the action's outcome. While the
	 * action runs, {@link LockContext#current()} returns its grant. With
	 * {@link LockRequest#withLockAtLeastFor lockAtLeastFor}, a quick action's grant is kept until
	 * that time has passed since the grant (then released by a scheduler thread; this call returns
	 * at once).
	 * @param <T> the result type
	 * @param request what to lock
	 * @param action the code to run while the lock is held
	 * @return the action's result, or, when the lock stayed busy and the request's on-busy policy is
	 * {@link OnBusy#SKIP}, {@link LockResult#skipped()} (logged at debug level, action not run)
	 * @throws LockAcquisitionException if the lock stayed busy and the policy is {@link OnBusy#FAIL}
	 * @throws UndeclaredThrowableException wrapping a checked exception thrown by the action;
	 * unchecked exceptions and errors propagate unchanged
	 */
	public <T> LockResult<T> execute(LockRequest request, LockCallback<T> action) {
		Objects.requireNonNull(action, "action must not be null");
		Attempt attempt = this.engine.acquire(request);
		LockHandle handle = attempt.granted();
		if (handle == null) {
			if (request.onBusy() == OnBusy.FAIL) {
				throw attempt.busy();
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + request.name() + ": " + attempt.describeBusy());
			}
			return LockResult.skipped();
		}
		LockContext.push(handle);
		Runnable closeScope = attempt.openScope();
		try {
			return LockResult.executed(action.doInLock(handle));
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw new UndeclaredThrowableException(ex);
		}
		finally {
			closeScope.run();
			LockContext.pop(handle);
			LockEngine.releaseQuietly(handle);
		}
	}

	/**
	 * Run {@code action} under a reentrant EXCLUSIVE lock of one key, waiting the default wait
	 * time: {@link #execute(LockRequest, LockCallback)} of {@link LockRequest#of(String)}.
	 * @param <T> the result type
	 * @param key the key below the root path
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 */
	public <T> @Nullable T execute(String key, LockCallback<T> action) {
		return execute(LockRequest.of(key), action).result();
	}

	/**
	 * Run {@code action} under a lock of one key in the given mode (reentrant, failing when busy).
	 * @param <T> the result type
	 * @param key the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @param action the code to run while the lock is held
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock was not granted in time (action not run)
	 */
	public <T> @Nullable T execute(String key, LockMode mode, @Nullable Duration waitTime, LockCallback<T> action) {
		return execute(request(key, mode, waitTime), action).result();
	}

	/**
	 * Acquire the requested lock and return its grant, which the caller must release (on the
	 * acquiring thread for a reentrant request). A request with lockAtLeastFor returns a grant whose
	 * release is delayed until then.
	 * @param request what to lock (its on-busy policy is only observed: busy always fails here)
	 * @return the grant
	 * @throws LockAcquisitionException if the lock was not granted in time
	 */
	public LockHandle acquire(LockRequest request) {
		Attempt attempt = this.engine.acquire(request);
		LockHandle handle = attempt.granted();
		if (handle == null) {
			throw attempt.busy();
		}
		return handle;
	}

	/**
	 * Acquire a reentrant lock of one key in the given mode (see {@link #acquire(LockRequest)}).
	 * @param key the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant; the caller must release it on this thread
	 * @throws LockAcquisitionException if the lock was not granted in time
	 */
	public LockHandle acquire(String key, LockMode mode, @Nullable Duration waitTime) {
		return acquire(request(key, mode, waitTime));
	}

	/**
	 * Try to acquire the requested lock within its wait time.
	 * @param request what to lock (its on-busy policy is only observed: busy is empty here)
	 * @return the grant, which the caller must release; empty when another owner held the lock for
	 * the whole wait time (never when ZooKeeper failed: that throws)
	 */
	public Optional<LockHandle> tryAcquire(LockRequest request) {
		return Optional.ofNullable(this.engine.acquire(request).granted());
	}

	/**
	 * Try to acquire a reentrant lock of one key in the given mode (see
	 * {@link #tryAcquire(LockRequest)}).
	 * @param key the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 */
	public Optional<LockHandle> tryAcquire(String key, LockMode mode, @Nullable Duration waitTime) {
		return tryAcquire(request(key, mode, waitTime));
	}

	/**
	 * Return a {@link Lock} view of a reentrant EXCLUSIVE lock of a key, for code written against
	 * {@code java.util.concurrent.locks}. Each {@code lock()} or successful {@code tryLock} is a
	 * grant of this template; {@code unlock()} releases the calling thread's latest grant of the
	 * key ({@link IllegalMonitorStateException} for a thread that holds none). Views of the same
	 * key, mode and template are equal and interchangeable. {@code lock()} waits without limit and
	 * is not interruptible (an interrupt is restored once granted); {@code lockInterruptibly()} and
	 * {@code tryLock(time, unit)} throw {@link InterruptedException} when interrupted, leaving no
	 * grant; {@code tryLock()} makes one attempt; {@code newCondition()} returns the key's
	 * distributed condition, one per key across every application (see
	 * {@link io.github.zklock.spi.LockCondition} for its contract and requests); ZooKeeper failures
	 * are thrown as {@link LockException}, never reported as {@code false}. A view sends no request
	 * until used.
	 * @param key the key below the root path
	 * @return the lock view
	 */
	public Lock lock(String key) {
		return this.engine.lock(Objects.requireNonNull(key, "key must not be null"), LockMode.EXCLUSIVE);
	}

	/**
	 * Return a {@link ReadWriteLock} view of the READ and WRITE locks of a key, whose two locks
	 * behave as {@link #lock(String)} does. The write lock's holder may take the read lock; a read
	 * lock holder asking for the write lock gets {@link LockUpgradeException} at once. The write
	 * lock has the key's condition; the read lock, shared, has none
	 * ({@link UnsupportedOperationException}).
	 * @param key the key below the root path
	 * @return the read-write lock view
	 */
	public ReadWriteLock readWriteLock(String key) {
		return this.engine.readWriteLock(Objects.requireNonNull(key, "key must not be null"));
	}

	/**
	 * Run asynchronous work under a reentrant lock of one key, failing when busy, without blocking
	 * the calling thread: {@link AsyncLockTemplate#execute} of that request, whose result it
	 * completes with (see there for threads, cancellation and lost grants).
	 * @param <T> the result type
	 * @param key the key below the root path
	 * @param mode the lock mode
	 * @param waitTime how long to wait, {@code null} for the default
	 * @param action the work to run under the lock; must not return {@code null}
	 * @return the work's result, completed after the release (also when the grant's loss was
	 * signalled after the work had completed: logged, the result kept; the asynchronous
	 * {@code execute} tells it with {@link LockResult#lockLostAfterWork()}); exceptionally with
	 * {@link LockAcquisitionException} when busy, with {@link LockLostException} when the loss was
	 * signalled while the work was running (cancelled)
	 * @throws InvalidLockPathException if the key is not legal (thrown at once, nothing requested)
	 */
	public <T> CompletableFuture<T> executeAsync(String key, LockMode mode, @Nullable Duration waitTime,
			Function<LockHandle, ? extends CompletionStage<T>> action) {
		LockRequest request = request(key, mode, waitTime);
		return DefaultAsyncLockTemplate.values(this.async.execute(request, action));
	}

	/** The request of a key-first form: reentrant, failing when busy, named after its key. */
	private static LockRequest request(String key, LockMode mode, @Nullable Duration waitTime) {
		return LockEngine.request(key, mode, waitTime);
	}

	/**
	 * Return the asynchronous form of this template: the same verbs, none blocking the caller.
	 * @return the asynchronous template, sharing this template's registry and settings
	 */
	public AsyncLockTemplate async() {
		return this.async;
	}

}
