package io.github.zklock.spi;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockMode;

/**
 * One key of a {@link io.github.zklock.LockRequest}, resolved for the backend: what {@link io.github.zklock.LockTemplate} asks a
 * {@link LockRegistry} for, once per key (a multi-lock is taken key by key, in canonical order,
 * each with what is left of the wait budget). It carries no metric name, no on-busy policy and no
 * {@code lockAtLeastFor}: those are the template's business. It carries the resolved
 * {@code lockAtMostFor}, which only the registry can enforce (it ends the grant as lost and frees
 * the key).
 *
 * @param key the key below the registry's root path, starting with {@code /}
 * @param mode the lock mode
 * @param reentrant whether the holder thread may re-enter the lock, and so whether the grant is
 * bound to that thread (see {@link io.github.zklock.LockRequest}): {@code true} for READ and WRITE, {@code false}
 * for a permit
 * @param permits {@code 0} for a lock, else the number of permits of the key's semaphore
 * @param waitTime how long to wait, always given: zero for one attempt,
 * {@link io.github.zklock.LockRequest#WAIT_FOREVER} to wait without limit, or a positive duration
 * @param lockAtMostFor how long the grant may be held before the registry ends it (see
 * {@link io.github.zklock.LockRequest#withLockAtMostFor(Duration)}), always given: {@link io.github.zklock.LockRequest#NO_CEILING}
 * for no ceiling
 * @param keep whether the grant's znode may stay with the application after its release (a kept
 * lock, see {@link io.github.zklock.LockRequest#withKeep(Boolean)}): {@code null} for the
 * registry's default; a registry that keeps no znodes ignores it
 */
public record LockTarget(String key, LockMode mode, boolean reentrant, int permits, Duration waitTime,
		Duration lockAtMostFor, @Nullable Boolean keep) {

	/**
	 * Create a target without a ceiling.
	 * @param key the key
	 * @param mode the lock mode
	 * @param reentrant whether the grant is bound to its thread
	 * @param permits {@code 0} for a lock, else the number of permits
	 * @param waitTime how long to wait
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the components break a rule of {@link io.github.zklock.LockRequest}
	 */
	public LockTarget(String key, LockMode mode, boolean reentrant, int permits, Duration waitTime) {
		this(key, mode, reentrant, permits, waitTime, RequestRules.NO_CEILING, null);
	}

	/**
	 * Create a target with the registry's default for kept locks.
	 * @param key the key
	 * @param mode the lock mode
	 * @param reentrant whether the grant is bound to its thread
	 * @param permits {@code 0} for a lock, else the number of permits
	 * @param waitTime how long to wait
	 * @param lockAtMostFor the ceiling, {@link io.github.zklock.LockRequest#NO_CEILING} for none
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the components break a rule of {@link io.github.zklock.LockRequest}
	 */
	public LockTarget(String key, LockMode mode, boolean reentrant, int permits, Duration waitTime,
			Duration lockAtMostFor) {
		this(key, mode, reentrant, permits, waitTime, lockAtMostFor, null);
	}

	/**
	 * Create a target, checking the rules of {@link io.github.zklock.LockRequest} that apply to one key.
	 * @throws InvalidLockPathException if the key is {@code null} or empty
	 * @throws IllegalArgumentException if the components break a rule of {@link io.github.zklock.LockRequest}
	 * @throws NullPointerException if the mode, the wait time or {@code lockAtMostFor} is {@code null}
	 */
	public LockTarget {
		if (key == null || key.isEmpty()) {
			throw new InvalidLockPathException("Lock path must not be null or empty");
		}
		RequestRules.checkKind("The lock target '" + key + "'", mode, reentrant, permits);
		RequestRules.checkWaitTime(Objects.requireNonNull(waitTime, "waitTime must not be null"),
				"The wait time of the lock target '" + key + "'");
		RequestRules.checkLockAtMostFor(lockAtMostFor, "The lockAtMostFor of the lock target '" + key + "'");
	}

	/**
	 * Return whether this target asks for a permit of a semaphore rather than a lock.
	 * @return whether {@link #permits()} is positive
	 */
	public boolean isPermit() {
		return this.permits > 0;
	}

}
