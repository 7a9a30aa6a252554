package io.github.zklock.spi;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

import io.github.zklock.LockMode;

/**
 * The rules of a lock request's values, in one place: {@code io.github.zklock.LockRequest} and
 * {@link LockTarget} check them as they are built, and the adapters (annotations, properties, the
 * Spring Integration and ShedLock registries) check the values users give them with the same
 * methods, naming where the value came from. Every message says what is wrong and what would be
 * right.
 *
 * <p>Wait time, one meaning per value: zero makes one attempt; {@link #WAIT_FOREVER} waits without
 * limit; a positive duration up to {@link #LONGEST_WAIT} waits at most that long; any other
 * duration is rejected.
 *
 * <p>lockAtMostFor (a grant's ceiling): a positive duration ends a grant held that long;
 * {@link #NO_CEILING}, the longest duration there is, sets none. Zero is rejected rather than read
 * as "none" or as "at once": as a wait time zero means one attempt, so it means nothing here.
 */
public final class RequestRules {

	/** The wait time that waits until the lock is granted: {@code -1 ms}, the only negative one accepted. */
	public static final Duration WAIT_FOREVER = Duration.ofMillis(-1);

	/**
	 * The {@code lockAtMostFor} that sets no ceiling: {@link ChronoUnit#FOREVER}'s duration, so
	 * that no arithmetic reads it as a short one.
	 */
	public static final Duration NO_CEILING = ChronoUnit.FOREVER.getDuration();

	/**
	 * The longest finite wait time, 2<sup>61</sup> ns (about 73 years), so that a deadline on
	 * {@link System#nanoTime()} never overflows: wait longer with {@link #WAIT_FOREVER}.
	 */
	public static final Duration LONGEST_WAIT = Duration.ofNanos(Long.MAX_VALUE >> 2);

	private RequestRules() {
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
	 * Return whether a {@code lockAtMostFor} is {@link #NO_CEILING}.
	 * @param lockAtMostFor a checked ceiling
	 * @return whether it sets none
	 */
	public static boolean noCeiling(Duration lockAtMostFor) {
		return NO_CEILING.equals(lockAtMostFor);
	}

	/**
	 * Check a wait time: zero, positive up to {@link #LONGEST_WAIT}, or {@link #WAIT_FOREVER}.
	 * @param waitTime the wait time
	 * @param what what it is, for the message (a property, a parameter, a method)
	 * @return the wait time
	 * @throws IllegalArgumentException if the wait time is negative but not {@link #WAIT_FOREVER},
	 * or longer than {@link #LONGEST_WAIT}
	 * @throws NullPointerException if the wait time is {@code null}
	 */
	public static Duration checkWaitTime(Duration waitTime, String what) {
		Objects.requireNonNull(waitTime, () -> what + " must not be null");
		if ((waitTime.isNegative() && !waitsForever(waitTime)) || waitTime.compareTo(LONGEST_WAIT) > 0) {
			throw new IllegalArgumentException(what + " is " + waitTime + ": use zero for one attempt, a positive "
					+ "duration up to " + LONGEST_WAIT + ", or -1 ms to wait without limit (WAIT_FOREVER)");
		}
		return waitTime;
	}

	/**
	 * Check a {@code lockAtMostFor}: positive, or {@link #NO_CEILING}.
	 * @param lockAtMostFor the ceiling
	 * @param what what it is, for the message (a property, a parameter, a method)
	 * @return the ceiling
	 * @throws IllegalArgumentException if the ceiling is zero or negative
	 * @throws NullPointerException if the ceiling is {@code null}
	 */
	public static Duration checkLockAtMostFor(Duration lockAtMostFor, String what) {
		Objects.requireNonNull(lockAtMostFor, () -> what + " must not be null");
		if (lockAtMostFor.isNegative() || lockAtMostFor.isZero()) {
			throw new IllegalArgumentException(what + " is " + lockAtMostFor + ": use a positive duration, or "
					+ "NO_CEILING for none");
		}
		return lockAtMostFor;
	}

	/**
	 * Check the rules between mode, reentrancy and permits: a non-reentrant lock is EXCLUSIVE, and
	 * a permit of a semaphore is a non-reentrant EXCLUSIVE request.
	 * @param subject what is checked, for the message
	 * @throws IllegalArgumentException if they break a rule
	 * @throws NullPointerException if the mode is {@code null}
	 */
	public static void checkKind(String subject, LockMode mode, boolean reentrant, int permits) {
		Objects.requireNonNull(mode, "mode must not be null");
		if (!reentrant && mode != LockMode.EXCLUSIVE) {
			throw new IllegalArgumentException(subject + " asks for a non-reentrant " + mode + " lock: reentrant = "
					+ "false applies to EXCLUSIVE only; READ and WRITE locks are always reentrant");
		}
		if (permits < 0) {
			throw new IllegalArgumentException(subject + " asks for " + permits + " permits: use 0 for a lock, or a "
					+ "positive number of permits for a semaphore");
		}
		if (permits > 0 && (mode != LockMode.EXCLUSIVE || reentrant)) {
			throw new IllegalArgumentException(subject + " asks for a permit of a semaphore (" + permits
					+ " permits) as a " + (reentrant ? "reentrant " : "") + mode + " lock: a permit is a non-reentrant "
					+ "EXCLUSIVE request (LockRequest.permit)");
		}
	}

}
