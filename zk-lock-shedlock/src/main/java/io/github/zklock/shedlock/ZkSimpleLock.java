package io.github.zklock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

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

	private static final Log logger = LogFactory.getLog(ZkSimpleLock.class);

	/**
	 * The grant, kept for the {@code lockAtLeastFor} of the lock and of each extension
	 * ({@link LockHandle#keepAtLeast(Duration)} views).
	 */
	private final LockHandle handle;

	private final String name;

	private final AtomicBoolean used = new AtomicBoolean();

	/**
	 * Create a lock of a grant.
	 * @param handle the grant, not bound to a thread
	 * @param name the ShedLock lock name
	 */
	ZkSimpleLock(LockHandle handle, String name) {
		this.handle = handle;
		this.name = name;
	}

	/**
	 * Release the grant: now, or once the {@code lockAtLeastFor} of the lock and of its
	 * extensions has passed (then by a scheduler thread; this call returns at once; the grant's
	 * ceiling is moved past that release, see {@link LockHandle#keepAtLeast(Duration)}, so that it
	 * ends as released, not as expired). A grant already ended by its ceiling or lost with its
	 * session is let go without an error.
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 */
	@Override
	public void unlock() {
		markUsed();
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
		try {
			// Fails for a grant lost, in doubt, or past its ceiling (also before the ceiling ran).
			this.handle.extend(lockAtMostFor);
		}
		catch (LockLostException ex) {
			if (logger.isDebugEnabled()) {
				logger.debug("Cannot extend ShedLock lock '" + this.name + "' (" + this.handle.path() + "): "
						+ ex.getMessage());
			}
			this.handle.release();
			return Optional.empty();
		}
		return Optional.of(new ZkSimpleLock(this.handle.keepAtLeast(lockAtLeastFor), this.name));
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
