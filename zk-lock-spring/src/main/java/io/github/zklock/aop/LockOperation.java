package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockMode;
import io.github.zklock.annotation.OnBusy;
import io.github.zklock.expression.LockPathTemplate;

/**
 * A validated {@code @DistributedLock} or {@code @DistributedSemaphore} declaration, built once
 * per method.
 *
 * @param method the most specific method, whose parameter names the key templates use
 * @param paths the parsed key templates, in declaration order: one for a lock or a semaphore,
 * several for a multi-lock
 * @param mode the lock mode ({@link LockMode#EXCLUSIVE} for a semaphore)
 * @param reentrant whether an EXCLUSIVE lock is reentrant ({@code false} for a semaphore)
 * @param waitTime the wait time, {@code null} for the default, {@code LockRequest.WAIT_FOREVER} for no
 * limit
 * @param permits {@code 0} for a lock, else the number of permits of the semaphore
 * @param onBusy what a busy lock does to the call
 * @param lockAtLeastFor how long the lock is kept at least after its grant, zero for none (then
 * the operation is a non-reentrant EXCLUSIVE one)
 */
public record LockOperation(Method method, List<LockPathTemplate> paths, LockMode mode, boolean reentrant,
		@Nullable Duration waitTime, int permits, OnBusy onBusy, Duration lockAtLeastFor) {

	/**
	 * Create an operation.
	 * @throws IllegalArgumentException if no key template is given, {@code permits} or
	 * {@code lockAtLeastFor} is negative, or {@code lockAtLeastFor} is positive on a reentrant,
	 * READ or WRITE operation
	 */
	public LockOperation {
		Objects.requireNonNull(method, "method must not be null");
		paths = List.copyOf(paths);
		if (paths.isEmpty()) {
			throw new IllegalArgumentException("A lock operation needs at least one key template");
		}
		Objects.requireNonNull(mode, "mode must not be null");
		if (permits < 0) {
			throw new IllegalArgumentException("permits must not be negative, was " + permits);
		}
		Objects.requireNonNull(onBusy, "onBusy must not be null");
		Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor must not be null");
		if (lockAtLeastFor.isNegative()
				|| (!lockAtLeastFor.isZero() && (mode != LockMode.EXCLUSIVE || reentrant))) {
			throw new IllegalArgumentException("lockAtLeastFor " + lockAtLeastFor
					+ " needs a non-negative duration on a non-reentrant EXCLUSIVE operation");
		}
	}

	/**
	 * Create an operation whose lock is released when the method returns.
	 * @param method the most specific method
	 * @param paths the parsed key templates
	 * @param mode the lock mode
	 * @param reentrant whether an EXCLUSIVE lock is reentrant
	 * @param waitTime the wait time, {@code null} for the default
	 * @param permits {@code 0} for a lock, else the number of permits
	 * @param onBusy what a busy lock does to the call
	 * @throws IllegalArgumentException if no key template is given, or {@code permits} is negative
	 */
	public LockOperation(Method method, List<LockPathTemplate> paths, LockMode mode, boolean reentrant,
			@Nullable Duration waitTime, int permits, OnBusy onBusy) {
		this(method, paths, mode, reentrant, waitTime, permits, onBusy, Duration.ZERO);
	}

	/**
	 * Return this operation with its lock released when the method returns.
	 * @return an operation without {@code lockAtLeastFor}, this one if it has none
	 */
	LockOperation withoutLockAtLeastFor() {
		return this.lockAtLeastFor.isZero() ? this
				: new LockOperation(this.method, this.paths, this.mode, this.reentrant, this.waitTime, this.permits,
						this.onBusy);
	}

	/**
	 * Return whether the operation takes a permit of a semaphore rather than a lock.
	 * @return whether {@link #permits()} is positive
	 */
	public boolean isSemaphore() {
		return this.permits > 0;
	}

	/**
	 * Return whether the operation locks several keys at once.
	 * @return whether more than one key template is declared
	 */
	public boolean isMultiLock() {
		return this.paths.size() > 1;
	}

}
