package io.github.zklock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.OnBusy;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

/**
 * Turns a {@link LockRequest} into grants of the {@link LockRegistry}, for the template facade:
 * the default wait time, multi-locks (several keys, validated before any request, taken in
 * canonical order within one wait budget, all or nothing), observations, {@code lockAtLeastFor},
 * and asynchronous acquisitions on grant threads. The template decides what a busy lock does
 * (fail, skip, or an empty result); the engine only reports it, as an {@link Attempt}.
 *
 * <p>Curator's {@code InterProcessMultiLock} is not used for multi-locks: it takes the locks in the
 * order given, waits up to the full wait time for each key (so up to n times the wait in all), and
 * works on fixed recipe instances, which would bypass the registry's local queue. Here each key is
 * an ordinary grant of the registry (reentrant, queued and observed like a single key), and the
 * caller gets one handle of all of them ({@link Grant}).
 *
 * <p>Thread-safe and immutable once built.
 */
public final class LockEngine {

	private static final Log logger = LogFactory.getLog(LockEngine.class);

	private final LockRegistry registry;

	private final Duration defaultWaitTime;

	private final Duration defaultLockAtMostFor;

	/** Only set with an observation registry: Micrometer is an optional dependency. */
	private final @Nullable LockObservations observations;

	private final @Nullable Executor asyncExecutor;

	private final Executor grantThreads;

	/**
	 * Create an engine.
	 * @param registry the backend that grants
	 * @param defaultWaitTime the wait time of requests that give none (checked by the caller)
	 * @param defaultLockAtMostFor the ceiling of requests that give none,
	 * {@link LockRequest#NO_CEILING} for none (checked by the caller)
	 * @param observations what observes acquisitions and holds, {@code null} for nothing
	 * @param asyncExecutor where asynchronous grants are delivered and their work invoked,
	 * {@code null} for a grant thread
	 * @param virtualGrantThreads whether asynchronous grants are owned by virtual threads (falls
	 * back to pooled platform threads before Java 21, logged)
	 */
	public LockEngine(LockRegistry registry, Duration defaultWaitTime, Duration defaultLockAtMostFor,
			@Nullable LockObservations observations, @Nullable Executor asyncExecutor, boolean virtualGrantThreads) {
		this.registry = Objects.requireNonNull(registry, "registry must not be null");
		this.defaultWaitTime = Objects.requireNonNull(defaultWaitTime, "defaultWaitTime must not be null");
		this.defaultLockAtMostFor = Objects.requireNonNull(defaultLockAtMostFor,
				"defaultLockAtMostFor must not be null");
		this.observations = observations;
		this.asyncExecutor = asyncExecutor;
		Executor virtual = virtualGrantThreads ? GrantThreads.virtual() : null;
		if (virtualGrantThreads && virtual == null) {
			logger.warn("Virtual threads need Java 21 or later; asynchronous grants use platform threads");
		}
		this.grantThreads = (virtual != null) ? virtual : GrantThreads.platform();
	}

	/**
	 * Return the backend.
	 * @return the registry
	 */
	public LockRegistry registry() {
		return this.registry;
	}

	/**
	 * Return the wait time of requests that give none.
	 * @return the default wait time
	 */
	public Duration defaultWaitTime() {
		return this.defaultWaitTime;
	}

	/**
	 * Return the ceiling of requests that give none.
	 * @return the default lockAtMostFor, zero for none
	 */
	public Duration defaultLockAtMostFor() {
		return this.defaultLockAtMostFor;
	}

	/** The request's ceiling, else the default. */
	private Duration lockAtMostFor(LockRequest request) {
		Duration lockAtMostFor = request.lockAtMostFor();
		return (lockAtMostFor != null) ? lockAtMostFor : this.defaultLockAtMostFor;
	}

	/**
	 * Acquire on the calling thread.
	 * @param request what to lock
	 * @return the grant (kept at least the request's {@code lockAtLeastFor}), or the busy lock
	 * @throws io.github.zklock.InvalidLockPathException if a key is illegal (a multi-lock's keys
	 * are all checked before any request)
	 * @throws io.github.zklock.LockException what the registry throws; a multi-lock releases the
	 * keys it took first
	 */
	public Attempt acquire(LockRequest request) {
		Duration waitTime = (request.waitTime() != null) ? request.waitTime() : this.defaultWaitTime;
		return acquireKeys(request, keys(request), waitTime, null, request.reentrant());
	}

	/**
	 * Acquire without blocking the calling thread, which only validates the request (an illegal key
	 * throws here, nothing requested): through the registry's own asynchronous acquisition, with
	 * no thread waiting, when it has one for the request's kind (a multi-lock's keys one after the
	 * other); else on a grant thread, where a grant bound to its thread keeps that thread, parked,
	 * until released (see {@link GrantThreads}). The returned future, and {@code whenDone}
	 * (registered before the acquisition starts, so never run on the calling thread), complete on
	 * the async executor when there is one, else on a grant thread; a granted attempt holds an
	 * {@link io.github.zklock.AsyncLockHandle}. Cancelling the future gives up the wait; a grant made
	 * meanwhile is released at once.
	 * @param request what to lock
	 * @param whenDone called with the outcome, {@code null} for none
	 * @return the attempt
	 * @throws io.github.zklock.InvalidLockPathException if a key is illegal
	 */
	public CompletableFuture<Attempt> submit(LockRequest request,
			@Nullable BiConsumer<? super Attempt, ? super Throwable> whenDone) {
		Duration waitTime = (request.waitTime() != null) ? request.waitTime() : this.defaultWaitTime;
		LockObservations observations = this.observations;
		// Read on the calling thread: the grant thread has no current observation.
		LockObservations.Parent parent = (observations != null) ? observations.currentObservation() : null;
		List<String> keys = keys(request);
		if (keys.size() == 1) {
			// Validated here, on the calling thread: an illegal key throws, nothing requested.
			this.registry.lockPath(keys.get(0));
		}
		CompletableFuture<Attempt> direct = submitToRegistry(request, keys, waitTime, parent, whenDone);
		if (direct != null) {
			return direct;
		}
		return start(() -> acquireKeys(request, keys, waitTime, parent, request.reentrant()), request.reentrant(),
				whenDone);
	}

	/**
	 * Acquire through the registry's own asynchronous acquisition, with no thread waiting
	 * ({@link LockRegistry#submit}), when it has one for the target: one key, or a multi-lock's keys
	 * one after the other ({@link AsyncKeys}). The outcome is delivered on the async executor, else
	 * on a grant thread: never on the registry's thread (ZooKeeper's event thread), which the work
	 * must not block.
	 * @param keys the keys, in canonical order
	 * @return the attempt, or {@code null} when the registry cannot acquire the target so
	 */
	private @Nullable CompletableFuture<Attempt> submitToRegistry(LockRequest request, List<String> keys,
			Duration waitTime, LockObservations.@Nullable Parent parent,
			@Nullable BiConsumer<? super Attempt, ? super Throwable> whenDone) {
		LockObservations observations = this.observations;
		Function<LockTarget, @Nullable CompletableFuture<Optional<Held>>> submit = (target) -> {
			CompletableFuture<Optional<RegistryGrant>> pending = (observations != null)
					? observations.submit(this.registry, target, request, parent) : this.registry.submit(target);
			return (pending != null) ? held(pending, request, parent) : null;
		};
		AsyncKeys multi = null;
		CompletableFuture<Optional<List<Held>>> pending;
		if (keys.size() == 1) {
			CompletableFuture<Optional<Held>> one = submit.apply(new LockTarget(keys.get(0), request.mode(),
					request.reentrant(), request.permits(), waitTime, lockAtMostFor(request), request.keep()));
			pending = (one != null) ? map(one, (granted) -> granted.map(List::of),
					(held) -> held.ifPresent((keysHeld) -> keysHeld.forEach(Held::releaseAsync))) : null;
		}
		else {
			multi = AsyncKeys.start(submit, request, keys, waitTime, lockAtMostFor(request));
			pending = multi;
		}
		if (pending == null) {
			return null;
		}
		AsyncKeys keysAcquisition = multi;
		CompletableFuture<Attempt> result = new CompletableFuture<>();
		result.whenComplete((attempt, ex) -> {
			if (result.isCancelled()) {
				pending.cancel(false);
			}
		});
		if (whenDone != null) {
			result.whenComplete(whenDone);
		}
		Executor executor = (this.asyncExecutor != null) ? this.asyncExecutor : this.grantThreads;
		pending.whenComplete((granted, ex) -> {
			Grant grant = (granted != null && granted.isPresent())
					? new Grant(granted.get(), request.mode(), request.lockAtLeastFor(), false) : null;
			Runnable completion = () -> {
				if (ex != null) {
					result.completeExceptionally(unwrap(ex));
				}
				else if (grant == null) {
					result.complete(busy(request, keys, waitTime, keysAcquisition));
				}
				else if (!result.complete(Attempt.granted(grant))) {
					// Cancelled while it was granted.
					grant.releaseAsync();
				}
			};
			try {
				executor.execute(completion);
			}
			catch (RuntimeException refused) {
				if (grant != null) {
					grant.releaseAsync();
				}
				result.completeExceptionally(refused);
			}
		});
		return result;
	}

	/** The busy attempt of an asynchronous acquisition that ended empty. */
	private Attempt busy(LockRequest request, List<String> keys, Duration waitTime, @Nullable AsyncKeys multi) {
		String busyKey = (multi != null) ? multi.busyKey() : null;
		if (multi == null || busyKey == null) {
			return Attempt.busy(this.registry.lockPath(keys.get(0)), request.mode(), waitTime, busyReason(request));
		}
		return Attempt.busy(this.registry.lockPath(busyKey), request.mode(), waitTime,
				multiBusyReason(multi.acquiredBeforeBusy(), keys.size()));
	}

	private static String busyReason(LockRequest request) {
		return request.isPermit() ? "all " + request.permits() + " permits are held" : "held by another owner";
	}

	private static String multiBusyReason(int acquiredBefore, int keys) {
		return "held by another owner; the multi-lock's keys acquired before it (" + acquiredBefore + " of " + keys
				+ ") were released";
	}

	/**
	 * Return a {@link Lock} over the grants of one key and mode (see {@link LockView}).
	 * @param key the key
	 * @param mode the mode of its grants
	 * @return the view; sends no request
	 */
	public Lock lock(String key, LockMode mode) {
		return new LockView(this, key, mode);
	}

	/**
	 * Return a {@link ReadWriteLock} over the READ and WRITE grants of one key.
	 * @param key the key
	 * @return the views; sends no request
	 */
	public ReadWriteLock readWriteLock(String key) {
		return new ReadWriteViews(lock(key, LockMode.READ), lock(key, LockMode.WRITE));
	}

	private record ReadWriteViews(Lock readLock, Lock writeLock) implements ReadWriteLock {
	}

	/**
	 * Return where asynchronous work is invoked once granted.
	 * @return the executor, or {@code null} for a grant thread
	 */
	public @Nullable Executor asyncExecutor() {
		return this.asyncExecutor;
	}

	/**
	 * Release a grant, logging a failure instead of throwing it: for releases whose caller has a
	 * result or an exception of its own to report.
	 * @param handle the grant
	 */
	public static void releaseQuietly(LockHandle handle) {
		try {
			handle.release();
		}
		catch (RuntimeException ex) {
			// The business result wins; a lock that could not be deleted dies with the session.
			logger.warn("Failed to release " + handle.mode() + " lock '" + handle.path() + "'", ex);
		}
	}

	/**
	 * The request of the key-first verbs: a reentrant lock of one key, failing when busy.
	 * @param key the key
	 * @param mode the mode
	 * @param waitTime the wait time, {@code null} for the default
	 * @return the request
	 */
	public static LockRequest request(String key, LockMode mode, @Nullable Duration waitTime) {
		return new LockRequest(Collections.singletonList(key), mode, true, 0, waitTime, OnBusy.FAIL, Duration.ZERO,
				null);
	}

	/** The cause of a completion's failure. */
	static Throwable unwrap(Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

	/**
	 * The keys of a request in canonical order: sorted by lock path, duplicates merged. A multi-lock's
	 * keys are all validated here, before any request (an illegal key acquires nothing); one key is
	 * validated by the registry as it acquires it.
	 */
	private List<String> keys(LockRequest request) {
		if (!request.isMultiLock()) {
			return request.keys();
		}
		TreeMap<String, String> byLockPath = new TreeMap<>();
		for (String key : request.keys()) {
			byLockPath.putIfAbsent(this.registry.lockPath(key), key);
		}
		return List.copyOf(byLockPath.values());
	}

	/**
	 * Acquire the keys of a request one after the other in canonical order, each with what is left
	 * of the wait budget; when a key stays busy or a request fails, release the keys taken so far,
	 * last first.
	 * @param threadBound whether the grant is bound to the calling thread
	 */
	private Attempt acquireKeys(LockRequest request, List<String> keys, Duration waitTime,
			LockObservations.@Nullable Parent parent, boolean threadBound) {
		boolean timed = !waitTime.isNegative() && !waitTime.isZero();
		long deadline = System.nanoTime() + (timed ? waitTime.toNanos() : 0);
		List<Held> acquired = new ArrayList<>(keys.size());
		Duration lockAtMostFor = lockAtMostFor(request);
		int permits = (keys.size() == 1) ? request.permits() : 0;
		try {
			for (String key : keys) {
				// One budget for all keys; one key waits its wait time as given.
				Duration remaining = (timed && keys.size() > 1)
						? Duration.ofNanos(Math.max(0, deadline - System.nanoTime())) : waitTime;
				LockTarget target = new LockTarget(key, request.mode(), request.reentrant(), permits, remaining,
						lockAtMostFor, request.keep());
				Optional<RegistryGrant> granted = tryAcquire(target, request, parent);
				if (granted.isEmpty()) {
					releaseAll(acquired);
					return Attempt.busy(this.registry.lockPath(key), request.mode(), waitTime, (keys.size() == 1)
							? busyReason(request) : multiBusyReason(acquired.size(), keys.size()));
				}
				acquired.add(held(granted.get(), request, parent));
			}
		}
		catch (RuntimeException | Error ex) {
			releaseAll(acquired);
			throw ex;
		}
		return Attempt.granted(new Grant(acquired, request.mode(), request.lockAtLeastFor(), threadBound));
	}

	/** A key's grant with the observation of its hold, started now. */
	private Held held(RegistryGrant key, LockRequest request, LockObservations.@Nullable Parent parent) {
		LockObservations observations = this.observations;
		return new Held(key, (observations != null) ? observations.hold(key, request, parent) : null);
	}

	private CompletableFuture<Optional<Held>> held(CompletableFuture<Optional<RegistryGrant>> pending,
			LockRequest request, LockObservations.@Nullable Parent parent) {
		return map(pending, (granted) -> granted.map((key) -> held(key, request, parent)),
				(held) -> held.ifPresent(Held::releaseAsync));
	}

	/**
	 * A future of what an acquisition's future completes with, mapped: cancelling it cancels the
	 * acquisition, and a grant that completes the acquisition after the cancellation is discarded
	 * (released), never left behind. (A stage of {@code thenApply} that is cancelled would not see the
	 * grant at all.)
	 * @param discard what to do with a value nobody takes any more
	 */
	static <T, R> CompletableFuture<R> map(CompletableFuture<T> source, Function<T, R> mapper, Consumer<R> discard) {
		CompletableFuture<R> mapped = new CompletableFuture<>();
		source.whenComplete((value, ex) -> {
			if (ex != null) {
				mapped.completeExceptionally(unwrap(ex));
				return;
			}
			R result;
			try {
				result = mapper.apply(value);
			}
			catch (RuntimeException | Error failure) {
				mapped.completeExceptionally(failure);
				return;
			}
			if (!mapped.complete(result)) {
				discard.accept(result);
			}
		});
		mapped.whenComplete((value, ex) -> {
			if (mapped.isCancelled()) {
				source.cancel(false);
			}
		});
		return mapped;
	}

	/**
	 * Release keys taken so far without waiting, last first, logging a failure.
	 * @return completes once every key's release is done (its delete answered, or failed and
	 * logged); never exceptionally
	 */
	static CompletableFuture<Void> releaseAllAsync(List<Held> acquired) {
		List<CompletableFuture<Void>> releases = new ArrayList<>(acquired.size());
		for (int i = acquired.size() - 1; i >= 0; i--) {
			Held held = acquired.get(i);
			try {
				releases.add(held.releaseAsync().handle((ignored, ex) -> {
					if (ex != null) {
						logger.warn("Failed to release " + held.key().mode() + " lock '" + held.key().path() + "'",
								unwrap(ex));
					}
					return null;
				}));
			}
			catch (RuntimeException ex) {
				logger.warn("Failed to release " + held.key().mode() + " lock '" + held.key().path() + "'", ex);
			}
		}
		return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new));
	}

	/** Release keys taken so far, last first, logging a failure. */
	static void releaseAll(List<Held> acquired) {
		for (int i = acquired.size() - 1; i >= 0; i--) {
			Held held = acquired.get(i);
			try {
				held.release();
			}
			catch (RuntimeException ex) {
				logger.warn("Failed to release " + held.key().mode() + " lock '" + held.key().path() + "'", ex);
			}
		}
	}

	private Optional<RegistryGrant> tryAcquire(LockTarget target, LockRequest request,
			LockObservations.@Nullable Parent parent) {
		LockObservations observations = this.observations;
		return (observations != null) ? observations.tryAcquire(this.registry, target, request, parent)
				: this.registry.tryAcquire(target);
	}

	/**
	 * Run an acquisition on a grant thread and deliver its outcome.
	 * @param threadBound whether the grant is bound to the thread that acquires it, which then
	 * parks until the grant is released
	 */
	private CompletableFuture<Attempt> start(Supplier<Attempt> acquisition, boolean threadBound,
			@Nullable BiConsumer<? super Attempt, ? super Throwable> whenDone) {
		CompletableFuture<Attempt> result = new CompletableFuture<>();
		// The thread waiting for the grant, guarded by itself: a cancellation interrupts the wait,
		// never what the thread does after it.
		AtomicReference<@Nullable Thread> waiting = new AtomicReference<>();
		result.whenComplete((attempt, ex) -> {
			if (result.isCancelled()) {
				synchronized (waiting) {
					Thread waiter = waiting.get();
					if (waiter != null) {
						waiter.interrupt();
					}
				}
			}
		});
		if (whenDone != null) {
			result.whenComplete(whenDone);
		}
		Executor grantThreads = this.grantThreads;
		grantThreads.execute(() -> {
			Thread.interrupted();
			if (result.isDone()) {
				return;
			}
			Attempt attempt;
			waiting.set(Thread.currentThread());
			try {
				attempt = acquisition.get();
			}
			catch (Throwable ex) {
				if (deliver(() -> result.completeExceptionally(ex)) != null) {
					result.completeExceptionally(ex);
				}
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
			Grant granted = attempt.grant();
			if (granted == null) {
				if (deliver(() -> result.complete(attempt)) != null) {
					result.complete(attempt);
				}
				return;
			}
			AsyncGrant grant = new AsyncGrant(granted, threadBound ? Thread.currentThread() : null, grantThreads);
			RuntimeException refused = deliver(() -> {
				if (!result.complete(Attempt.granted(grant, granted))) {
					// Cancelled while it was granted.
					grant.releaseAsync();
				}
			});
			if (refused != null) {
				grant.releaseNow();
				result.completeExceptionally(refused);
			}
			else if (threadBound) {
				grant.holdUntilReleased();
			}
		});
		return result;
	}

	/**
	 * Run a completion on the async executor, else here.
	 * @return what the executor threw when it refused the completion (not run), else {@code null}
	 */
	private @Nullable RuntimeException deliver(Runnable completion) {
		Executor executor = this.asyncExecutor;
		if (executor == null) {
			completion.run();
			return null;
		}
		try {
			executor.execute(completion);
			return null;
		}
		catch (RuntimeException ex) {
			// RejectedExecutionException, or what a custom executor throws instead.
			return ex;
		}
	}

}
