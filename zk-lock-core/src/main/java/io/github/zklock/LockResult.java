package io.github.zklock;

import java.util.Objects;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of work run under a lock by {@link LockTemplate#execute(LockRequest, LockCallback)}
 * (and its asynchronous form): either the work ran and returned a value, possibly {@code null},
 * or it was skipped because the lock stayed busy and the request's
 * {@linkplain LockRequest#onBusy() on-busy policy} is {@link OnBusy#SKIP}. The two are told apart
 * by {@link #wasExecuted()}, never by the value, as ShedLock's {@code TaskResult}.
 *
 * <p>Work that ran to its end may have lost its grant afterwards, before the release: the
 * asynchronous {@link AsyncLockTemplate#execute execute} says so with
 * {@link #lockLostAfterWork()}, and keeps the work's value, so that a caller never takes work that
 * completed for work that did not run. A loss signalled while the work was still running is not a
 * result but a {@link LockLostException}.
 *
 * <p>Immutable.
 *
 * @param <T> the type of the work's result
 */
public final class LockResult<T> {

	private static final LockResult<?> SKIPPED = new LockResult<>(false, null, false);

	private final boolean executed;

	private final @Nullable T result;

	private final boolean lockLostAfterWork;

	private LockResult(boolean executed, @Nullable T result, boolean lockLostAfterWork) {
		this.executed = executed;
		this.result = result;
		this.lockLostAfterWork = lockLostAfterWork;
	}

	/**
	 * Return the outcome of work that ran.
	 * @param <T> the result type
	 * @param result what the work returned, may be {@code null}
	 * @return the outcome
	 */
	public static <T> LockResult<T> executed(@Nullable T result) {
		return new LockResult<>(true, result, false);
	}

	/**
	 * Return the outcome of work that ran to its end under the lock, whose grant's loss was
	 * signalled afterwards, before its release had completed: {@link #wasExecuted()} and
	 * {@link #lockLostAfterWork()} are {@code true}, {@link #result()} is the work's value.
	 * @param <T> the result type
	 * @param result what the work returned, may be {@code null}
	 * @return the outcome
	 */
	public static <T> LockResult<T> executedThenLost(@Nullable T result) {
		return new LockResult<>(true, result, true);
	}

	/**
	 * Return the outcome of work skipped because the lock was busy.
	 * @param <T> the result type
	 * @return the outcome (a shared instance)
	 */
	@SuppressWarnings("unchecked")
	public static <T> LockResult<T> skipped() {
		return (LockResult<T>) SKIPPED;
	}

	/**
	 * Return whether the work ran.
	 * @return {@code true} if it ran under the lock, {@code false} if it was skipped
	 */
	public boolean wasExecuted() {
		return this.executed;
	}

	/**
	 * Return whether the grant's loss was signalled after the work had completed, while its release
	 * was on its way (its session expired, it was revoked or its {@code lockAtMostFor} ceiling
	 * fell): the work ran to its end and its value stands; do not run it again. The loss was known
	 * only after the work, but it may have happened earlier (a client learns that its session
	 * expired only once it reaches a server again): where that matters, have the store check the
	 * grant's {@linkplain LockHandle#fencingToken() fencing token}.
	 * <p>Only the asynchronous {@link AsyncLockTemplate#execute execute} tells it; the synchronous
	 * {@link LockTemplate#execute(LockRequest, LockCallback) execute} does not look at the grant
	 * after its callback (see {@link LockHandle#state()}).
	 * @return {@code true} for {@link #executedThenLost}, {@code false} for a run whose grant was
	 * released as held, and for a skipped run
	 */
	public boolean lockLostAfterWork() {
		return this.lockLostAfterWork;
	}

	/**
	 * Return what the work returned.
	 * @return the work's result, {@code null} if it returned {@code null}
	 * @throws IllegalStateException if the work was skipped
	 */
	public @Nullable T result() {
		if (!this.executed) {
			throw new IllegalStateException("The work was skipped: its lock was busy; ask wasExecuted() first, or use "
					+ "orElse");
		}
		return this.result;
	}

	/**
	 * Return what the work returned, or a value when it was skipped.
	 * @param whenSkipped the value of a skipped run
	 * @return the work's result, or {@code whenSkipped}
	 */
	public @Nullable T orElse(@Nullable T whenSkipped) {
		return this.executed ? this.result : whenSkipped;
	}

	/**
	 * Return what the work returned, or a supplied value when it was skipped.
	 * @param whenSkipped supplies the value of a skipped run; called only then
	 * @return the work's result, or the supplied value
	 */
	public @Nullable T orElseGet(Supplier<? extends @Nullable T> whenSkipped) {
		return this.executed ? this.result : whenSkipped.get();
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof LockResult<?> that && this.executed == that.executed
				&& this.lockLostAfterWork == that.lockLostAfterWork && Objects.equals(this.result, that.result);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.executed, this.result, this.lockLostAfterWork);
	}

	@Override
	public String toString() {
		if (!this.executed) {
			return "LockResult[skipped]";
		}
		return "LockResult[executed: " + this.result + (this.lockLostAfterWork ? ", lock lost after the work]" : "]");
	}

}
