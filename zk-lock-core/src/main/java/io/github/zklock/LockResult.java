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
 * <p>Immutable.
 *
 * @param <T> the type of the work's result
 */
public final class LockResult<T> {

	private static final LockResult<?> SKIPPED = new LockResult<>(false, null);

	private final boolean executed;

	private final @Nullable T result;

	private LockResult(boolean executed, @Nullable T result) {
		this.executed = executed;
		this.result = result;
	}

	/**
	 * Return the outcome of work that ran.
	 * @param <T> the result type
	 * @param result what the work returned, may be {@code null}
	 * @return the outcome
	 */
	public static <T> LockResult<T> executed(@Nullable T result) {
		return new LockResult<>(true, result);
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
				&& Objects.equals(this.result, that.result);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.executed, this.result);
	}

	@Override
	public String toString() {
		return this.executed ? "LockResult[executed: " + this.result + "]" : "LockResult[skipped]";
	}

}
