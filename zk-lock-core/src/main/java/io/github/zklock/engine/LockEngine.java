package io.github.zklock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockRegistry;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTarget;

/**
 * Turns a {@link LockRequest} into grants of the {@link LockRegistry}, for the template facade:
 * the default wait time, multi-locks (several keys, validated before any request, taken in
 * canonical order within one wait budget, all or nothing), observations, {@code lockAtLeastFor},
 * and asynchronous acquisitions on grant threads. The template decides what a busy lock does
 * (fail, skip, or an empty result); the engine only reports it, as an {@link Attempt}.
 *
 * <p>Curator's {@code InterProcessMultiLock} is not used for multi-locks: it takes the locks in the
 * order given, waits up to the full wait time for each key (so up to n times the wait in all), and
 * works on fixed recipe instances, which would bypass the registry's per-thread instances and
 * local queue. Here each key is an ordinary grant of the registry (reentrant, queued and observed
 * like a single key).
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
	 * @param defaultLockAtMostFor the ceiling of requests that give none, zero for none (checked
	 * by the caller)
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
		if (!request.isMultiLock()) {
			return acquireOne(request, request.keys().get(0), waitTime, null);
		}
		return acquireKeys(request, byLockPath(request), waitTime, null);
	}

	/**
	 * Acquire without blocking the calling thread, which only validates the request (an illegal key
	 * throws here, nothing requested): through the registry's own asynchronous acquisition, with
	 * no thread waiting, when it has one for the request's kind (a multi-lock's keys one after the
	 * other); else on a grant thread, where a grant bound to its thread keeps that thread, parked,
	 * until released (see {@link GrantThreads}). The returned future, and {@code whenDone}
	 * (registered before the acquisition starts, so never run on the calling thread), complete on
	 * the async executor when there is one, else on a grant thread; a
	 * granted attempt holds an {@link io.github.zklock.AsyncLockHandle}. Cancelling the future
	 * gives up the wait; a grant made meanwhile is released at once.
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
		TreeMap<String, String> byLockPath = request.isMultiLock() ? byLockPath(request) : null;
		List<String> keys;
		if (byLockPath != null) {
			keys = List.copyOf(byLockPath.values());
		}
		else {
			keys = request.keys();
			this.registry.lockPath(keys.get(0));
		}
		CompletableFuture<Attempt> direct = submitToRegistry(request, keys, waitTime, parent, whenDone);
		if (direct != null) {
			return direct;
		}
		Supplier<Attempt> acquisition = (byLockPath != null)
				? () -> acquireKeys(request, byLockPath, waitTime, parent)
				: () -> acquireOne(request, keys.get(0), waitTime, parent);
		return start(acquisition, request.reentrant(), whenDone);
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
		Function<LockTarget, @Nullable CompletableFuture<Optional<LockHandle>>> submit = (observations != null)
				? (target) -> observations.submit(this.registry, target, request, parent) : this.registry::submit;
		AsyncKeys multi = null;
		CompletableFuture<Optional<LockHandle>> pending;
		if (keys.size() == 1) {
			pending = submit.apply(new LockTarget(keys.get(0), request.mode(), request.reentrant(), request.permits(),
					waitTime, lockAtMostFor(request)));
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
		pending.whenComplete((handle, ex) -> {
			AsyncGrant grant = (handle != null && handle.isPresent())
					? new AsyncGrant(KeptLockHandle.keep(handle.get(), request.lockAtLeastFor()), null, this.grantThreads)
					: null;
			Runnable completion = () -> {
				if (ex != null) {
					result.completeExceptionally((ex instanceof CompletionException && ex.getCause() != null)
							? ex.getCause() : ex);
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
			return Attempt.busy(this.registry.lockPath(keys.get(0)), request.mode(), waitTime,
					request.isPermit() ? "all " + request.permits() + " permits are held" : "held by another owner");
		}
		return Attempt.busy(this.registry.lockPath(busyKey), request.mode(), waitTime,
				multiBusyReason(multi.acquiredBeforeBusy(), keys.size()));
	}

	private static String multiBusyReason(int acquiredBefore, int keys) {
		return "held by another owner; the multi-lock's keys acquired before it (" + acquiredBefore + " of " + keys
				+ ") were released";
	}

	/**
	 * Open the hold observations' scopes of a grant on this thread, for the duration of a callback.
	 * @param handle the grant
	 * @return what closes them, or {@code null} when nothing is observed
	 */
	public @Nullable Runnable openScope(LockHandle handle) {
		LockObservations observations = this.observations;
		return (observations != null) ? observations.openScope(handle) : null;
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

	private Attempt acquireOne(LockRequest request, String key, Duration waitTime,
			LockObservations.@Nullable Parent parent) {
		LockTarget target = new LockTarget(key, request.mode(), request.reentrant(), request.permits(), waitTime,
				lockAtMostFor(request));
		Optional<LockHandle> handle = tryAcquire(target, request, parent);
		if (handle.isEmpty()) {
			return Attempt.busy(this.registry.lockPath(key), request.mode(), waitTime,
					request.isPermit() ? "all " + request.permits() + " permits are held" : "held by another owner");
		}
		Duration lockAtLeastFor = request.lockAtLeastFor();
		return new Attempt(lockAtLeastFor.isZero() ? handle.get() : KeptLockHandle.keep(handle.get(), lockAtLeastFor));
	}

	/** Every key's lock path, validated before any request (an illegal key acquires nothing), sorted, merged. */
	private TreeMap<String, String> byLockPath(LockRequest request) {
		TreeMap<String, String> byLockPath = new TreeMap<>();
		for (String key : request.keys()) {
			byLockPath.putIfAbsent(this.registry.lockPath(key), key);
		}
		return byLockPath;
	}

	/**
	 * Acquire the keys of a multi-lock one after the other in canonical order, each with what is
	 * left of the wait budget; when a key stays busy or a request fails, release the keys taken
	 * so far, last first. Merged to one key, it is that key's ordinary grant.
	 */
	private Attempt acquireKeys(LockRequest request, TreeMap<String, String> byLockPath, Duration waitTime,
			LockObservations.@Nullable Parent parent) {
		if (byLockPath.size() == 1) {
			return acquireOne(request, byLockPath.firstEntry().getValue(), waitTime, parent);
		}
		boolean timed = !waitTime.isNegative() && !waitTime.isZero();
		long deadline = System.nanoTime() + (timed ? waitTime.toNanos() : 0);
		List<LockHandle> acquired = new ArrayList<>(byLockPath.size());
		Duration lockAtMostFor = lockAtMostFor(request);
		try {
			for (Map.Entry<String, String> entry : byLockPath.entrySet()) {
				Duration remaining = timed ? Duration.ofNanos(Math.max(0, deadline - System.nanoTime())) : waitTime;
				LockTarget target = new LockTarget(entry.getValue(), request.mode(), request.reentrant(), 0, remaining,
						lockAtMostFor);
				Optional<LockHandle> handle = tryAcquire(target, request, parent);
				if (handle.isEmpty()) {
					releaseAll(acquired);
					return Attempt.busy(entry.getKey(), request.mode(), waitTime,
							multiBusyReason(acquired.size(), byLockPath.size()));
				}
				acquired.add(handle.get());
			}
		}
		catch (RuntimeException | Error ex) {
			releaseAll(acquired);
			throw ex;
		}
		return Attempt.granted(
				KeptLockHandle.keep(new MultiLockHandle(acquired, request.mode()), request.lockAtLeastFor()));
	}

	private static void releaseAll(List<LockHandle> acquired) {
		for (int i = acquired.size() - 1; i >= 0; i--) {
			releaseQuietly(acquired.get(i));
		}
	}

	private Optional<LockHandle> tryAcquire(LockTarget target, LockRequest request,
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
			LockHandle granted = attempt.granted();
			if (granted == null) {
				if (deliver(() -> result.complete(attempt)) != null) {
					result.complete(attempt);
				}
				return;
			}
			AsyncGrant grant = new AsyncGrant(granted, threadBound ? Thread.currentThread() : null, grantThreads);
			RuntimeException refused = deliver(() -> {
				if (!result.complete(Attempt.granted(grant))) {
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
