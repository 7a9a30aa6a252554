package io.github.zklock;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What to lock and how: a key below the root path, a mode, whether an EXCLUSIVE lock is
 * reentrant, how long to wait, and the name the lock is reported under in metrics and traces.
 * Immutable; build it with {@link #of(String)} and the {@code with...} methods.
 *
 * <p>Wait times have one meaning per value, here as in {@code @DistributedLock} and
 * {@code zk.lock.default-wait-time}: {@code null} (not given) uses the template's default; zero
 * makes one attempt without waiting; {@link #WAIT_FOREVER} waits until the lock is granted;
 * a positive duration waits at most that long. Any other negative duration is rejected.
 *
 * @param path the key to lock, below {@code zk.lock.root-path} and starting with {@code /} (the
 * lock's znode path is the root path joined with it)
 * @param mode the lock mode
 * @param reentrant whether an EXCLUSIVE lock may be re-entered by its holder thread (ignored
 * for READ and WRITE, which are always reentrant)
 * @param waitTime how long to wait: {@code null} for the template's default, zero for a single
 * attempt, {@link #WAIT_FOREVER} to wait without limit
 * @param name the low-cardinality name of the lock in metrics and observations (the
 * {@code name} tag): the {@code @DistributedLock} path template such as {@code /stock/#{#sku}},
 * never a resolved value; defaults to the path, so a caller that builds paths from data should
 * set one
 * @param permits {@code 0} for a lock; a positive number for a permit (lease) of a semaphore
 * that lets at most this many holders in at once (see {@link #withPermits(int)}), which must be
 * the same in every participant
 * @param lockAtLeastFor how long after it was granted the grant is kept at least, even when
 * released earlier ({@link Duration#ZERO}: released when asked; see
 * {@link #withLockAtLeastFor(Duration)})
 */
public record LockRequest(String path, LockMode mode, boolean reentrant, @Nullable Duration waitTime, String name,
		int permits, Duration lockAtLeastFor) {

	/**
	 * The wait time that waits until the lock is granted, without limit: {@code -1 ms}, the same
	 * value as {@code DistributedLock.WAIT_FOREVER} and {@code zk.lock.default-wait-time=-1ms}.
	 * It is the only negative wait time accepted.
	 */
	public static final Duration WAIT_FOREVER = Duration.ofMillis(-1);

	/**
	 * Create a request, checking that key, mode, wait time and permits are valid.
	 * @param path the key
	 * @param mode the lock mode
	 * @param reentrant whether an EXCLUSIVE lock is reentrant
	 * @param waitTime the wait time or {@code null} for the default
	 * @param name the name in metrics, {@code null} for the key
	 * @param permits {@code 0} for a lock, else the semaphore's number of permits
	 * @param lockAtLeastFor the least time a grant is kept after it was granted, zero for none
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER},
	 * if {@code permits} is negative, if a semaphore request ({@code permits > 0}) is not a
	 * non-reentrant EXCLUSIVE one, or if {@code lockAtLeastFor} is negative, or positive on a
	 * request whose grant is bound to a thread (reentrant EXCLUSIVE, READ, WRITE)
	 * @throws NullPointerException if the mode or {@code lockAtLeastFor} is {@code null}
	 */
	public LockRequest {
		if (path == null || path.isEmpty()) {
			throw new InvalidLockPathException("Lock path must not be null or empty");
		}
		Objects.requireNonNull(mode, "mode must not be null");
		if (waitTime != null && waitTime.isNegative() && !waitsForever(waitTime)) {
			throw invalidWaitTime(waitTime, "The wait time of the lock request for '" + path + "'");
		}
		if (permits < 0) {
			throw new IllegalArgumentException("The permits of the request for '" + path + "' are " + permits
					+ ": use 0 for a lock, or a positive number of permits for a semaphore");
		}
		if (permits > 0 && (mode != LockMode.EXCLUSIVE || reentrant)) {
			throw new IllegalArgumentException("The request for '" + path + "' asks for a permit of a semaphore ("
					+ permits + " permits) as a " + (reentrant ? "reentrant " : "") + mode
					+ " lock: a permit is a non-reentrant EXCLUSIVE request (use withPermits)");
		}
		Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor must not be null");
		if (lockAtLeastFor.isNegative()) {
			throw new IllegalArgumentException("lockAtLeastFor of the request for '" + path + "' is " + lockAtLeastFor
					+ ": use zero to release when asked, or a positive duration");
		}
		if (!lockAtLeastFor.isZero() && (mode != LockMode.EXCLUSIVE || reentrant)) {
			throw new IllegalArgumentException("The request for '" + path + "' keeps its grant for at least "
					+ lockAtLeastFor + " as a " + (reentrant && mode == LockMode.EXCLUSIVE ? "reentrant " : "") + mode
					+ " lock, whose grant is bound to the acquiring thread; a grant released later by another thread "
					+ "must be a non-reentrant EXCLUSIVE lock (withReentrant(false)) or a permit");
		}
		if (name == null) {
			name = path;
		}
	}

	/**
	 * Create a request whose grant is released when asked.
	 * @param path the key
	 * @param mode the lock mode
	 * @param reentrant whether an EXCLUSIVE lock is reentrant
	 * @param waitTime the wait time or {@code null} for the default
	 * @param name the name in metrics, {@code null} for the key
	 * @param permits {@code 0} for a lock, else the semaphore's number of permits
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER},
	 * if {@code permits} is negative, or if a semaphore request ({@code permits > 0}) is not a
	 * non-reentrant EXCLUSIVE one
	 * @throws NullPointerException if the mode is {@code null}
	 */
	public LockRequest(String path, LockMode mode, boolean reentrant, @Nullable Duration waitTime,
			@Nullable String name, int permits) {
		this(path, mode, reentrant, waitTime, name, permits, Duration.ZERO);
	}

	/**
	 * Create a lock request (not a semaphore's).
	 * @param path the key
	 * @param mode the lock mode
	 * @param reentrant whether an EXCLUSIVE lock is reentrant
	 * @param waitTime the wait time or {@code null} for the default
	 * @param name the name in metrics, {@code null} for the key
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER}
	 * @throws NullPointerException if the mode is {@code null}
	 */
	public LockRequest(String path, LockMode mode, boolean reentrant, @Nullable Duration waitTime,
			@Nullable String name) {
		this(path, mode, reentrant, waitTime, name, 0);
	}

	/**
	 * Create a request named after its key.
	 * @param path the key to lock
	 * @param mode the lock mode
	 * @param reentrant whether an EXCLUSIVE lock is reentrant
	 * @param waitTime the wait time or {@code null} for the default
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER}
	 */
	public LockRequest(String path, LockMode mode, boolean reentrant, @Nullable Duration waitTime) {
		this(path, mode, reentrant, waitTime, null, 0);
	}

	/**
	 * Create a request for a reentrant EXCLUSIVE lock with the default wait time.
	 * @param path the key to lock, below the root path, starting with {@code /}
	 * @return the request
	 */
	public static LockRequest of(String path) {
		return new LockRequest(path, LockMode.EXCLUSIVE, true, null);
	}

	/**
	 * Return a copy with another mode.
	 * @param mode the lock mode
	 * @return the new request
	 */
	public LockRequest withMode(LockMode mode) {
		return new LockRequest(this.path, mode, this.reentrant, this.waitTime, this.name, this.permits,
				this.lockAtLeastFor);
	}

	/**
	 * Return a copy with another wait time.
	 * @param waitTime the wait time, {@code null} for the default
	 * @return the new request
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER}
	 */
	public LockRequest withWaitTime(@Nullable Duration waitTime) {
		return new LockRequest(this.path, this.mode, this.reentrant, waitTime, this.name, this.permits,
				this.lockAtLeastFor);
	}

	/**
	 * Return a copy with reentrancy switched on or off (EXCLUSIVE only).
	 * @param reentrant whether the lock is reentrant
	 * @return the new request
	 */
	public LockRequest withReentrant(boolean reentrant) {
		return new LockRequest(this.path, this.mode, reentrant, this.waitTime, this.name, this.permits,
				this.lockAtLeastFor);
	}

	/**
	 * Return a copy with another name in metrics and observations.
	 * @param name a low-cardinality name, such as {@code /stock/{sku}}
	 * @return the new request
	 */
	public LockRequest withName(String name) {
		return new LockRequest(this.path, this.mode, this.reentrant, this.waitTime,
				Objects.requireNonNull(name, "name must not be null"), this.permits, this.lockAtLeastFor);
	}

	/**
	 * Return a copy that asks for one permit (lease) of a semaphore on the key instead of a lock:
	 * at most {@code permits} grants of the key are held at once across every application (Curator
	 * {@code InterProcessSemaphoreV2}). A permit is not reentrant and not bound to a thread; the
	 * request becomes a non-reentrant EXCLUSIVE one. Every participant must name the same number
	 * of permits for a key: the first stores it with the key, a participant naming another number
	 * fails with {@link PermitsMismatchException}.
	 * @param permits how many holders the semaphore lets in at once, positive
	 * @return the new request
	 * @throws IllegalArgumentException if {@code permits} is not positive
	 */
	public LockRequest withPermits(int permits) {
		if (permits < 1) {
			throw new IllegalArgumentException("A semaphore needs at least one permit, was " + permits
					+ " for '" + this.path + "'");
		}
		return new LockRequest(this.path, LockMode.EXCLUSIVE, false, this.waitTime, this.name, permits,
				this.lockAtLeastFor);
	}

	/**
	 * Return a copy whose grant is kept for at least the given time after it was granted: a
	 * release asked for earlier (by the caller, or by {@link LockTemplate#execute(LockRequest,
	 * LockCallback)} when the action returns) is carried out by a scheduler thread once that time
	 * has passed since the grant, so that no other owner gets the key before then (ShedLock's
	 * {@code lockAtLeastFor}: a job that finishes quickly is not run again by another application
	 * whose clock or schedule is a little late). The grant must not be bound to a thread: a
	 * non-reentrant EXCLUSIVE lock or a permit. If the application dies meanwhile, the key is
	 * freed with its ZooKeeper session (after the session timeout), not at the end of
	 * {@code lockAtLeastFor}.
	 * @param lockAtLeastFor the least time to keep a grant, zero to release when asked
	 * @return the new request
	 * @throws IllegalArgumentException if the duration is negative, or positive while the request
	 * is a reentrant EXCLUSIVE, READ or WRITE one
	 */
	public LockRequest withLockAtLeastFor(Duration lockAtLeastFor) {
		return new LockRequest(this.path, this.mode, this.reentrant, this.waitTime, this.name, this.permits,
				lockAtLeastFor);
	}

	/**
	 * Return whether this request asks for a permit of a semaphore rather than a lock.
	 * @return whether {@link #permits()} is positive
	 */
	public boolean isPermit() {
		return this.permits > 0;
	}

	/**
	 * Return whether a wait time is {@link #WAIT_FOREVER}.
	 * @param waitTime a wait time
	 * @return whether it waits without limit
	 */
	public static boolean waitsForever(Duration waitTime) {
		return WAIT_FOREVER.equals(waitTime);
	}

	/**
	 * Check a wait time given by a user: zero, positive, or {@link #WAIT_FOREVER}.
	 * @param waitTime the wait time
	 * @param what what it is, for the message (a property, a parameter, a method)
	 * @return the wait time
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER}
	 */
	static Duration checkWaitTime(Duration waitTime, String what) {
		if (waitTime.isNegative() && !waitsForever(waitTime)) {
			throw invalidWaitTime(waitTime, what);
		}
		return waitTime;
	}

	private static IllegalArgumentException invalidWaitTime(Duration waitTime, String what) {
		return new IllegalArgumentException(what + " is " + waitTime + ": use zero for one attempt, a "
				+ "positive duration, or LockRequest.WAIT_FOREVER (-1 ms) to wait without limit");
	}

}
