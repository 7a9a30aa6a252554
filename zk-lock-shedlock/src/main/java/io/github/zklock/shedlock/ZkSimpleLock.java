package io.github.zklock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;

/**
 * A ShedLock lock on one zk-lock grant: {@link #unlock()} releases the grant (kept until
 * {@code lockAtLeastFor} has passed, see {@link ZkLockProvider}), {@link #extend} moves the
 * grant's ceiling ({@code lockAtMostFor}) and hands the grant on to a new lock. Each lock is used
 * once: after {@code unlock} or {@code extend}, both throw {@link IllegalStateException}, as
 * ShedLock's contract says.
 *
 * <p>Thread-safe; the grant is not bound to a thread.
 */
final class ZkSimpleLock implements SimpleLock {

	/**
	 * How long after the end of {@code lockAtLeastFor} the ceiling of an unlocked grant comes, at
	 * the earliest: the delayed release, not the ceiling, ends a grant whose job finished in time,
	 * also when both times are equal ({@code lockAtMostFor = lockAtLeastFor}, as ShedLock's own
	 * example has them). The ceiling stays as the fallback should that release not come.
	 */
	static final Duration CEILING_AFTER_KEPT_RELEASE = Duration.ofSeconds(1);

	private static final Log logger = LogFactory.getLog(ZkSimpleLock.class);

	/**
	 * The grant, kept for the {@code lockAtLeastFor} of the lock and of each extension
	 * ({@link LockHandle#keepAtLeast(Duration)} views).
	 */
	private final LockHandle handle;

	private final String name;

	/**
	 * Until when, in {@link System#nanoTime()}, the grant is kept after an unlock: the latest end
	 * of the {@code lockAtLeastFor} of the lock and of its extensions, each counted from when this
	 * side saw it start (a little after the grant's own count starts).
	 */
	private final long keptUntilNanos;

	private final AtomicBoolean used = new AtomicBoolean();

	/**
	 * Create a lock of a grant.
	 * @param handle the grant, not bound to a thread
	 * @param name the ShedLock lock name
	 * @param keptUntilNanos until when (by {@link System#nanoTime()}) the grant is kept after an
	 * unlock, a time already passed for none
	 */
	ZkSimpleLock(LockHandle handle, String name, long keptUntilNanos) {
		this.handle = handle;
		this.name = name;
		this.keptUntilNanos = keptUntilNanos;
	}

	/**
	 * Release the grant: now, or once the {@code lockAtLeastFor} of the lock and of its
	 * extensions has passed (then by a scheduler thread; this call returns at once). A grant that
	 * is kept has its ceiling moved to a second ({@link #CEILING_AFTER_KEPT_RELEASE}) after that
	 * time, so that it ends as released, not as expired. A grant already ended by its ceiling or lost
	 * with its session is let go without an error.
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 */
	@Override
	public void unlock() {
		markUsed();
		long keptFor = this.keptUntilNanos - System.nanoTime();
		if (keptFor > 0 && this.handle.isHeld() && this.handle.deadline().isPresent()) {
			try {
				this.handle.extend(Duration.ofNanos(keptFor).plus(CEILING_AFTER_KEPT_RELEASE));
			}
			catch (LockLostException ex) {
				// Ended by its ceiling, or in doubt, just now: released below as it stands.
				if (logger.isDebugEnabled()) {
					logger.debug("ShedLock lock '" + this.name + "' (" + this.handle.path() + ") ended while it was "
							+ "unlocked: " + ex.getMessage());
				}
			}
		}
		this.handle.release();
	}

	/**
	 * Move the grant's ceiling to {@code lockAtMostFor} from now and hand the grant on to a new
	 * lock, if the grant is still held and its {@code lockAtMostFor} has not passed (an expired
	 * lock cannot be extended, as in ShedLock's providers). {@code lockAtLeastFor}, counted from
	 * now, is added to what the grant already keeps: the new lock's unlock releases it once both
	 * have passed. Sends no request.
	 * @param lockAtMostFor how long from now the grant may still be held, positive (zero, which
	 * ShedLock allows, is refused: a zero ceiling would end the grant at once)
	 * @param lockAtLeastFor how long from now the grant is kept at least, even when unlocked
	 * earlier; not longer than {@code lockAtMostFor}
	 * @return the new lock; empty when the grant is no longer held (its {@code lockAtMostFor}
	 * passed, lost with its ZooKeeper session, or in doubt while the connection is suspended), in
	 * which case the grant is let go and this lock is used up, like one that was extended
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 * @throws IllegalArgumentException if the durations are refused by ShedLock's
	 * {@link LockConfiguration} (negative, or {@code lockAtLeastFor} longer than
	 * {@code lockAtMostFor}) or {@code lockAtMostFor} is zero; this lock is then not used up
	 */
	@Override
	public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
		if (this.used.get()) {
			throw alreadyUsed();
		}
		// ShedLock's own checks of the two durations, before the lock is used up.
		new LockConfiguration(Instant.now(), this.name, lockAtMostFor, lockAtLeastFor);
		if (lockAtMostFor.isZero()) {
			throw new IllegalArgumentException("ShedLock lock '" + this.name + "' cannot be extended by a zero "
					+ "lockAtMostFor: give a positive one");
		}
		markUsed();
		String notExtended = expiredOrNotHeld();
		if (notExtended == null) {
			try {
				this.handle.extend(lockAtMostFor);
			}
			catch (LockLostException ex) {
				// Ended by its ceiling, lost or in doubt since the check.
				notExtended = ex.getMessage();
			}
		}
		if (notExtended != null) {
			if (logger.isDebugEnabled()) {
				logger.debug("Cannot extend ShedLock lock '" + this.name + "' (" + this.handle.path() + "): "
						+ notExtended);
			}
			this.handle.release();
			return Optional.empty();
		}
		long now = System.nanoTime();
		long keptUntil = (this.keptUntilNanos - now > lockAtLeastFor.toNanos()) ? this.keptUntilNanos
				: now + lockAtLeastFor.toNanos();
		return Optional.of(new ZkSimpleLock(this.handle.keepAtLeast(lockAtLeastFor), this.name, keptUntil));
	}

	/** Why the grant cannot be extended, {@code null} if it can. */
	private @Nullable String expiredOrNotHeld() {
		if (!this.handle.isHeld()) {
			return "it is " + this.handle.state();
		}
		// Its ceiling may not have run yet: past lockAtMostFor, the lock has expired all the same.
		Instant deadline = this.handle.deadline().orElse(null);
		if (deadline != null && !deadline.isAfter(Instant.now())) {
			return "its lockAtMostFor passed at " + deadline;
		}
		return null;
	}

	private void markUsed() {
		if (!this.used.compareAndSet(false, true)) {
			throw alreadyUsed();
		}
	}

	private IllegalStateException alreadyUsed() {
		return new IllegalStateException("ShedLock lock '" + this.name + "' (" + this.handle.path()
				+ ") was already unlocked or extended");
	}

	@Override
	public String toString() {
		return "ZkSimpleLock[" + this.name + ", " + this.handle + "]";
	}

}
