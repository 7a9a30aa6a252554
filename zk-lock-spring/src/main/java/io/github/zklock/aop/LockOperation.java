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
 */
public record LockOperation(Method method, List<LockPathTemplate> paths, LockMode mode, boolean reentrant,
		@Nullable Duration waitTime, int permits, OnBusy onBusy) {

	/**
	 * Create an operation.
	 * @throws IllegalArgumentException if no key template is given, or {@code permits} is negative
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
