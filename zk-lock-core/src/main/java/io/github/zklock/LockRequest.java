package io.github.zklock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.zklock.spi.RequestRules;

/**
 * What to lock and how: the one options object of {@link LockTemplate}, its asynchronous form
 * ({@link LockTemplate#async()}), the reactive operator and {@code @DistributedLock}. Immutable;
 * build it with {@link #of(String)}, {@link #of(Collection)} or {@link #permit(String, int)} and the
 * {@code with...} methods:
 * <pre class="code">
 * LockRequest request = LockRequest.of("/jobs/report")
 * 	.withReentrant(false)
 * 	.withWaitTime(Duration.ZERO)
 * 	.withOnBusy(OnBusy.SKIP)
 * 	.withLockAtLeastFor(Duration.ofMinutes(1));
 * </pre>
 *
 * <p>Every rule between the components is checked here, when a request is built, and nowhere
 * else (the annotations are turned into requests and report these rules' messages, naming the
 * method):
 * <ul>
 * <li><b>Keys</b>: one or more, each below the registry's root path and starting with {@code /};
 * a {@code null} or empty key is an {@link InvalidLockPathException} (the registry checks the
 * rest of a key's syntax before any request). Several keys make a <em>multi-lock</em>: all or
 * nothing, taken in one canonical order (sorted by full lock path, duplicates merged) within one
 * wait budget, so that two requests naming the same keys in other orders never deadlock.</li>
 * <li><b>Thread binding</b>: a <em>reentrant</em> grant is bound to the thread that acquired it,
 * which alone may release it (Curator's reentrant recipes track their owner thread); a
 * non-reentrant one may be released by any thread. READ and WRITE are always reentrant; a
 * non-reentrant EXCLUSIVE lock, a permit of a semaphore and an EXCLUSIVE lock kept for a
 * {@code lockAtLeastFor} are not. This is the one definition of thread binding:
 * {@link #reentrant()} says it.</li>
 * <li><b>Permits</b>: {@code 0} asks for a lock; a positive number asks for one permit (lease)
 * of a semaphore of that many, which is a non-reentrant EXCLUSIVE request of one key.</li>
 * <li><b>Wait time</b>, one meaning per value: {@code null} (not given) uses the template's
 * default ({@code zk.lock.default-wait-time}); zero makes one attempt without waiting;
 * {@link #WAIT_FOREVER} waits until granted; a positive duration waits at most that long. Any other
 * negative duration is rejected. For a multi-lock it is one budget for all keys.</li>
 * <li><b>lockAtLeastFor</b>: zero, or a positive duration; a kept grant is released later by
 * another thread, so an EXCLUSIVE request that keeps its grant is non-reentrant (not bound to a
 * thread) whatever was asked, the same for {@code @DistributedLock}; READ and WRITE grants, bound
 * to their thread, cannot be kept.</li>
 * <li><b>lockAtMostFor</b>: {@code null} (not given) uses the template's default
 * ({@code zk.lock.default-lock-at-most-for}); {@link #NO_CEILING} sets no ceiling; a positive
 * duration ends the grant once it was held that long. It must not be shorter than a positive
 * {@code lockAtLeastFor}. Zero and negative durations are rejected.</li>
 * </ul>
 *
 * @param keys the keys to lock, at least one, each below the root path and starting with
 * {@code /} (the lock's znode path is the root path joined with the key); several make a
 * multi-lock
 * @param mode the lock mode, the same for every key
 * @param reentrant whether the holder thread may re-enter the lock, and so whether the grant is
 * bound to that thread: always {@code true} for READ and WRITE, always {@code false} for a permit
 * and for an EXCLUSIVE request with a positive {@code lockAtLeastFor}
 * @param permits {@code 0} for a lock; a positive number for one permit (lease) of a semaphore
 * that lets at most this many holders in at once, which every participant must name alike
 * (see {@link PermitsMismatchException})
 * @param waitTime how long to wait: {@code null} for the template's default, zero for one attempt,
 * {@link #WAIT_FOREVER} to wait without limit, or a positive duration
 * @param onBusy what {@code execute} does when the lock stays busy for the whole wait time
 * ({@link LockTemplate#acquire(LockRequest) acquire} always throws, {@code tryAcquire} returns
 * empty); also the outcome a busy wait is observed with
 * @param lockAtLeastFor how long after the grant the lock is kept at least, even when released
 * earlier ({@link Duration#ZERO}: released when asked; see {@link #withLockAtLeastFor(Duration)})
 * @param lockAtMostFor how long a grant may be held before this application ends it as lost and
 * deletes its znode (see {@link #withLockAtMostFor(Duration)}): {@code null} for the template's
 * default ({@code zk.lock.default-lock-at-most-for}, none unless set), {@link #NO_CEILING} for
 * none, or a positive duration
 * @param name the low-cardinality name of the lock in metrics and observations (the {@code name}
 * tag), such as the {@code @DistributedLock} key template {@code /stock/#{#sku}}, never a resolved
 * value; defaults to the keys (joined with {@code ,}), so a caller that builds keys from data
 * should set one
 * @param keep whether the grant's znode may stay with this application after its release, until
 * another participant asks for the key (a kept lock, see {@link #withKeep(Boolean)}): {@code null}
 * for the registry's default ({@code zk.lock.keep.enabled}), {@code true} or {@code false}
 */
public record LockRequest(List<String> keys, LockMode mode, boolean reentrant, int permits,
		@Nullable Duration waitTime, OnBusy onBusy, Duration lockAtLeastFor, @Nullable Duration lockAtMostFor,
		String name, @Nullable Boolean keep) {

	/**
	 * The wait time that waits until the lock is granted, without limit: {@code -1 ms}, the same
	 * value as {@code DistributedLock.WAIT_FOREVER} ({@code "-1ms"}) and
	 * {@code zk.lock.default-wait-time=-1ms}. It is the only negative wait time accepted.
	 */
	public static final Duration WAIT_FOREVER = RequestRules.WAIT_FOREVER;

	/**
	 * The {@code lockAtMostFor} that sets no ceiling on a grant, whatever the template's default:
	 * the longest duration there is ({@link java.time.temporal.ChronoUnit#FOREVER}), also spelled
	 * {@code "none"} in {@code @DistributedLock(lockAtMostFor)}. A grant then lasts until it is
	 * released, revoked or lost with its session. (Zero is no ceiling value: as a wait time it means
	 * one attempt, so it is rejected here.)
	 */
	public static final Duration NO_CEILING = RequestRules.NO_CEILING;

	/**
	 * Create a request without a {@code lockAtMostFor} of its own (the template's default
	 * applies), checking every rule (see the type's description).
	 * @param keys the keys to lock
	 * @param mode the lock mode
	 * @param reentrant whether the lock is reentrant
	 * @param permits {@code 0} for a lock, else the number of permits
	 * @param waitTime the wait time, {@code null} for the default
	 * @param onBusy what {@code execute} does when busy
	 * @param lockAtLeastFor the least time to keep a grant
	 * @param name the name in metrics, {@code null} for the keys
	 * @throws InvalidLockPathException if a key is {@code null} or empty
	 * @throws IllegalArgumentException if the components break a rule
	 */
	public LockRequest(List<String> keys, LockMode mode, boolean reentrant, int permits, @Nullable Duration waitTime,
			OnBusy onBusy, Duration lockAtLeastFor, @Nullable String name) {
		this(keys, mode, reentrant, permits, waitTime, onBusy, lockAtLeastFor, null, name, null);
	}

	/**
	 * Create a request with the registry's default for kept locks, checking every rule (see the
	 * type's description).
	 * @param keys the keys to lock
	 * @param mode the lock mode
	 * @param reentrant whether the lock is reentrant
	 * @param permits {@code 0} for a lock, else the number of permits
	 * @param waitTime the wait time, {@code null} for the default
	 * @param onBusy what {@code execute} does when busy
	 * @param lockAtLeastFor the least time to keep a grant
	 * @param lockAtMostFor the ceiling, {@code null} for the default
	 * @param name the name in metrics, {@code null} for the keys
	 * @throws InvalidLockPathException if a key is {@code null} or empty
	 * @throws IllegalArgumentException if the components break a rule
	 */
	public LockRequest(List<String> keys, LockMode mode, boolean reentrant, int permits, @Nullable Duration waitTime,
			OnBusy onBusy, Duration lockAtLeastFor, @Nullable Duration lockAtMostFor, @Nullable String name) {
		this(keys, mode, reentrant, permits, waitTime, onBusy, lockAtLeastFor, lockAtMostFor, name, null);
	}

	/**
	 * Create a request, checking every rule (see the type's description).
	 * @throws InvalidLockPathException if a key is {@code null} or empty
	 * @throws IllegalArgumentException if no key is given; if the wait time is negative but not
	 * {@link #WAIT_FOREVER}; if a READ or WRITE request is not reentrant; if {@code permits} is
	 * negative, or positive on a request that is not a non-reentrant EXCLUSIVE request of one key;
	 * if {@code lockAtLeastFor} is negative, or positive on a READ or WRITE request; if
	 * {@code lockAtMostFor} is zero, negative, or shorter than a positive {@code lockAtLeastFor}
	 * @throws NullPointerException if the keys, the mode, the on-busy policy or
	 * {@code lockAtLeastFor} is {@code null}
	 */
	public LockRequest {
		Objects.requireNonNull(keys, "keys must not be null");
		for (String key : keys) {
			if (key == null || key.isEmpty()) {
				throw new InvalidLockPathException("Lock path must not be null or empty");
			}
		}
		keys = List.copyOf(keys);
		if (keys.isEmpty()) {
			throw new IllegalArgumentException("A lock request needs at least one key");
		}
		String subject = "The request for " + describe(keys);
		String of = "of the request for " + describe(keys);
		RequestRules.checkKind(subject, mode, reentrant, permits);
		if (permits > 0 && keys.size() > 1) {
			throw new IllegalArgumentException(subject + " asks for a permit of " + keys.size()
					+ " semaphores at once: a permit is a request of one key");
		}
		if (waitTime != null) {
			RequestRules.checkWaitTime(waitTime, "The wait time " + of);
		}
		Objects.requireNonNull(onBusy, "onBusy must not be null");
		Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor must not be null");
		if (lockAtLeastFor.isNegative()) {
			throw new IllegalArgumentException("lockAtLeastFor " + of + " is " + lockAtLeastFor
					+ ": use zero to release when asked, or a positive duration");
		}
		if (!lockAtLeastFor.isZero() && mode != LockMode.EXCLUSIVE) {
			throw new IllegalArgumentException(subject + " keeps its " + mode + " grant for at least " + lockAtLeastFor
					+ ", which another thread would release later; a " + mode + " grant is bound to the thread that "
					+ "acquired it: keep an EXCLUSIVE lock or a permit instead");
		}
		if (!lockAtLeastFor.isZero()) {
			// A kept grant is released later by another thread: it is bound to none (see withLockAtLeastFor).
			reentrant = false;
		}
		if (lockAtMostFor != null) {
			RequestRules.checkLockAtMostFor(lockAtMostFor, "lockAtMostFor " + of);
			if (!lockAtLeastFor.isZero() && lockAtMostFor.compareTo(lockAtLeastFor) < 0) {
				throw new IllegalArgumentException(subject + " keeps its grant for at least " + lockAtLeastFor
						+ " but at most " + lockAtMostFor + ": lockAtMostFor must not be shorter than lockAtLeastFor");
			}
		}
		if (Boolean.TRUE.equals(keep) && (permits > 0 || !reentrant || mode == LockMode.READ)) {
			throw new IllegalArgumentException(subject + " asks to keep its znode, but only reentrant EXCLUSIVE and "
					+ "WRITE grants are kept (" + ((permits > 0) ? "a permit" : (mode == LockMode.READ) ? "a READ grant"
							: "a non-reentrant grant") + " has a znode of its own per grant)");
		}
		if (name == null) {
			name = String.join(",", keys);
		}
	}

	/**
	 * Create a request for a reentrant EXCLUSIVE lock of one key, with the default wait time,
	 * failing when busy, named after its key.
	 * @param key the key below the root path, starting with {@code /}
	 * @return the request
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 */
	public static LockRequest of(String key) {
		return new LockRequest(List.of(requireKey(key)), LockMode.EXCLUSIVE, true, 0, null, OnBusy.FAIL,
				Duration.ZERO, null, null, null);
	}

	/**
	 * Create a request for a multi-lock: a reentrant EXCLUSIVE lock of every key, all or nothing
	 * (see the type's description), with the default wait time, failing when busy. One key makes
	 * an ordinary request.
	 * @param keys the keys below the root path, in any order; duplicates are merged
	 * @return the request
	 * @throws InvalidLockPathException if a key is {@code null} or empty
	 * @throws IllegalArgumentException if no key is given
	 */
	public static LockRequest of(Collection<String> keys) {
		Objects.requireNonNull(keys, "keys must not be null");
		// Copied by the constructor once each key is checked (List.copyOf refuses a null key).
		return new LockRequest(new ArrayList<>(keys), LockMode.EXCLUSIVE, true, 0, null, OnBusy.FAIL, Duration.ZERO,
				null, null);
	}

	/**
	 * Create a request for one permit (lease) of a semaphore on a key: at most {@code permits}
	 * grants of the key are held at once across every application (Curator
	 * {@code InterProcessSemaphoreV2}). A permit is a non-reentrant EXCLUSIVE request, not bound to
	 * a thread. Every participant must name the same number of permits for a key: the first stores
	 * it with the key, a participant naming another number fails with
	 * {@link PermitsMismatchException}.
	 * @param key the key below the root path, starting with {@code /}
	 * @param permits how many holders the semaphore lets in at once, positive
	 * @return the request, with the default wait time, failing when busy
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if {@code permits} is not positive
	 */
	public static LockRequest permit(String key, int permits) {
		if (permits < 1) {
			throw new IllegalArgumentException("A semaphore needs at least one permit, was " + permits + " for '"
					+ key + "'");
		}
		return new LockRequest(List.of(requireKey(key)), LockMode.EXCLUSIVE, false, permits, null, OnBusy.FAIL,
				Duration.ZERO, null, null, null);
	}

	/**
	 * Return a copy with other keys, named as before (the {@code @DistributedLock} advice fills in
	 * the keys of each call this way, keeping the template's name).
	 * @param keys the keys, at least one
	 * @return the new request
	 * @throws InvalidLockPathException if a key is {@code null} or empty
	 * @throws IllegalArgumentException if no key is given, or several for a permit
	 */
	public LockRequest withKeys(List<String> keys) {
		return new LockRequest(keys, this.mode, this.reentrant, this.permits, this.waitTime, this.onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, this.name, this.keep);
	}

	/**
	 * Return a copy with another mode.
	 * @param mode the lock mode
	 * @return the new request
	 * @throws IllegalArgumentException if the copy breaks a rule (READ or WRITE not reentrant, a
	 * permit not EXCLUSIVE)
	 */
	public LockRequest withMode(LockMode mode) {
		return new LockRequest(this.keys, mode, this.reentrant, this.permits, this.waitTime, this.onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, this.name, this.keep);
	}

	/**
	 * Return a copy that is reentrant or not (see the type's description: this is also whether
	 * the grant is bound to its thread).
	 * @param reentrant whether the lock is reentrant
	 * @return the new request
	 * @throws IllegalArgumentException if the copy breaks a rule (READ or WRITE not reentrant, a
	 * reentrant permit); an EXCLUSIVE request with a positive lockAtLeastFor stays non-reentrant
	 */
	public LockRequest withReentrant(boolean reentrant) {
		return new LockRequest(this.keys, this.mode, reentrant, this.permits, this.waitTime, this.onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, this.name, this.keep);
	}

	/**
	 * Return a copy with another wait time.
	 * @param waitTime the wait time, {@code null} for the default
	 * @return the new request
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER}
	 */
	public LockRequest withWaitTime(@Nullable Duration waitTime) {
		return new LockRequest(this.keys, this.mode, this.reentrant, this.permits, waitTime, this.onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, this.name, this.keep);
	}

	/**
	 * Return a copy with another on-busy policy.
	 * @param onBusy what {@code execute} does when the lock stays busy
	 * @return the new request
	 */
	public LockRequest withOnBusy(OnBusy onBusy) {
		return new LockRequest(this.keys, this.mode, this.reentrant, this.permits, this.waitTime, onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, this.name, this.keep);
	}

	/**
	 * Return a copy whose grant is kept for at least the given time after it was granted: a
	 * release asked for earlier (by the caller, or by {@code execute} when the action returns) is
	 * carried out by a scheduler thread once that time has passed since the grant, so that no
	 * other owner gets the key before then (ShedLock's {@code lockAtLeastFor}: a job that finishes
	 * quickly is not run again by another application whose clock or schedule is a little late).
	 * The kept grant is released by another thread, so it is bound to none: an EXCLUSIVE request
	 * becomes non-reentrant with a positive duration (as {@code @DistributedLock(lockAtLeastFor)}
	 * makes it); a permit already is. If the application dies meanwhile, the key is freed with its
	 * ZooKeeper session (after the session timeout), not at the end of {@code lockAtLeastFor}. A
	 * multi-lock keeps all its keys together.
	 * @param lockAtLeastFor the least time to keep a grant, zero to release when asked
	 * @return the new request
	 * @throws IllegalArgumentException if the duration is negative, or positive on a READ or WRITE
	 * request (bound to its thread)
	 */
	public LockRequest withLockAtLeastFor(Duration lockAtLeastFor) {
		return new LockRequest(this.keys, this.mode, this.reentrant, this.permits, this.waitTime, this.onBusy,
				lockAtLeastFor, this.lockAtMostFor, this.name, this.keep);
	}

	/**
	 * Return a copy whose grant is held at most the given time: once it has been held that long
	 * (counted from its grant, or from the last {@link LockHandle#extend(Duration)}), the holder's
	 * own application ends it as a revocation does, even when the holder is stuck (a hung call, a
	 * deadlocked thread): the grant becomes {@link LockState#LOST} with the reason "held longer
	 * than lockAtMostFor", lock-state listeners and events are told, the commit guards roll back a
	 * transaction that commits after it, {@code interrupt-on-lost} interrupts a thread-bound holder,
	 * the work of an asynchronous grant is told through {@link AsyncLockHandle#whenLost()}, and its
	 * znode is deleted so that the next waiter is granted, with a higher fencing token that a store
	 * fence uses to reject the stuck holder's late writes. Works for every kind (reentrant or not,
	 * READ, WRITE, permits, asynchronous grants); a multi-lock applies it to each key's grant. No
	 * request is sent until the ceiling is reached; then one delete.
	 * <p>A holder whose whole process is frozen (a long GC pause, a stopped VM) cannot run its
	 * ceiling: its session timeout frees the key instead, as without one.
	 * @param lockAtMostFor the longest hold, {@link #NO_CEILING} for none, {@code null} for the
	 * template's default
	 * @return the new request
	 * @throws IllegalArgumentException if the duration is zero or negative, or shorter than a
	 * positive {@code lockAtLeastFor}
	 */
	public LockRequest withLockAtMostFor(@Nullable Duration lockAtMostFor) {
		return new LockRequest(this.keys, this.mode, this.reentrant, this.permits, this.waitTime, this.onBusy,
				this.lockAtLeastFor, lockAtMostFor, this.name, this.keep);
	}


	/**
	 * Return a copy with another name in metrics and observations.
	 * @param name a low-cardinality name, such as {@code /stock/{sku}}
	 * @return the new request
	 */
	public LockRequest withName(String name) {
		return new LockRequest(this.keys, this.mode, this.reentrant, this.permits, this.waitTime, this.onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, Objects.requireNonNull(name, "name must not be null"), this.keep);
	}

	/**
	 * Return a copy that keeps its znode after its release, or not: a <em>kept lock</em>. The key's
	 * znode then stays with this application, held by nobody, until another participant queues for
	 * the key, it has been idle for {@code zk.lock.keep.max-idle}, more than
	 * {@code zk.lock.keep.max-keys} keys are kept, it is revoked, the session is lost or the
	 * registry closes; a later request of this application for the key is granted on it without a
	 * ZooKeeper write (see {@code io.github.zklock.curator.KeptLocks}). Another zk-lock application's
	 * one-attempt request waits briefly for a kept znode to be given up rather than answer busy; raw
	 * Curator sees the lock held while it is kept. The fencing token stays equal while one znode is
	 * kept, and is higher after any other holder. Applies to reentrant EXCLUSIVE and WRITE requests.
	 * @param keep {@code true} to keep, {@code false} never to keep, {@code null} for the registry's
	 * default ({@code zk.lock.keep.enabled})
	 * @return the new request
	 * @throws IllegalArgumentException if {@code keep} is {@code true} on a READ request, a permit
	 * or a non-reentrant EXCLUSIVE request
	 */
	public LockRequest withKeep(@Nullable Boolean keep) {
		return new LockRequest(this.keys, this.mode, this.reentrant, this.permits, this.waitTime, this.onBusy,
				this.lockAtLeastFor, this.lockAtMostFor, this.name, keep);
	}

	/**
	 * Return whether this request names several keys: a multi-lock.
	 * @return whether there is more than one key
	 */
	public boolean isMultiLock() {
		return this.keys.size() > 1;
	}

	/**
	 * Return whether this request asks for a permit of a semaphore rather than a lock.
	 * @return whether {@link #permits()} is positive
	 */
	public boolean isPermit() {
		return this.permits > 0;
	}




	private static String describe(List<String> keys) {
		return (keys.size() == 1) ? "'" + keys.get(0) + "'" : keys.toString();
	}

	private static String requireKey(@Nullable String key) {
		if (key == null || key.isEmpty()) {
			throw new InvalidLockPathException("Lock path must not be null or empty");
		}
		return key;
	}

}
