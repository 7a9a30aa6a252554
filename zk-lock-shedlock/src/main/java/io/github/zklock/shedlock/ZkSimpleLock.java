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

/**
 * A ShedLock lock on one zk-lock grant: {@link #unlock()} releases the grant (kept until
 * {@code lockAtLeastFor} has passed, see {@link ZkLockProvider}), {@link #extend} hands the grant
 * on to a new lock. Each lock is used once: after {@code unlock} or {@code extend}, both throw
 * {@link IllegalStateException}, as ShedLock's contract says.
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
	 * extensions has passed (then by a scheduler thread; this call returns at once).
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 */
	@Override
	public void unlock() {
		markUsed();
		this.handle.release();
	}

	/**
	 * Hand the grant on to a new lock if it is still held. {@code lockAtMostFor} changes nothing
	 * (the grant lasts until unlocked or until its session ends); {@code lockAtLeastFor}, counted
	 * from now, is added to what the grant already keeps: the new lock's unlock releases it once
	 * both have passed. Sends no request.
	 * @param lockAtMostFor checked as ShedLock checks it (not negative, not shorter than
	 * {@code lockAtLeastFor}), otherwise ignored
	 * @param lockAtLeastFor how long from now the grant is kept at least, even when unlocked
	 * earlier
	 * @return the new lock; empty when the grant is no longer held (lost with its ZooKeeper
	 * session, or in doubt while the connection is suspended), in which case the grant is released
	 * and this lock is used up, like one that was extended
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 * @throws IllegalArgumentException if the durations are refused by ShedLock's
	 * {@link LockConfiguration}
	 */
	@Override
	public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
		if (this.used.get()) {
			throw alreadyUsed();
		}
		// ShedLock's own checks of the two durations, before the lock is used up.
		new LockConfiguration(Instant.now(), this.name, lockAtMostFor, lockAtLeastFor);
		markUsed();
		if (!this.handle.isHeld()) {
			if (logger.isDebugEnabled()) {
				logger.debug("Cannot extend ShedLock lock '" + this.name + "' (" + this.handle.path() + "): it is "
						+ this.handle.state());
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
