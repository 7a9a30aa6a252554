package io.github.zklock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.zklock.LockHandle;
import io.github.zklock.LockState;

/**
 * A view of a grant kept for at least some time ({@link LockHandle#keepAtLeast(Duration)}): a
 * release asked for before that time has passed is carried out later by a scheduler thread, so the
 * key stays taken in ZooKeeper until then. Only grants that are not bound to a thread are kept,
 * since the release runs on another thread. Views compose: the grant is released once every view's
 * time has passed.
 *
 * <p>The one scheduler thread is a daemon shared by every template, which also carries out the
 * delayed release of a request's own {@code lockAtLeastFor} (see {@link Grant}): the delayed
 * release sends the same requests as an immediate one, and a JVM that exits meanwhile frees the key
 * with its session.
 */
final class KeptLockHandle extends ForwardingLockHandle {

	private static final Log logger = LogFactory.getLog(KeptLockHandle.class);

	/** How long after a delayed release a ceiling comes at the earliest (see {@link #keepCeilingsPast}). */
	private static final Duration CEILING_AFTER_KEPT_RELEASE = Duration.ofSeconds(1);

	private final long releasableAt;

	private final Duration lockAtLeastFor;

	private final AtomicBoolean releaseAsked = new AtomicBoolean();

	private KeptLockHandle(LockHandle delegate, Duration lockAtLeastFor) {
		super(delegate);
		this.releasableAt = System.nanoTime() + lockAtLeastFor.toNanos();
		this.lockAtLeastFor = lockAtLeastFor;
	}

	/**
	 * Keep a grant for at least {@code lockAtLeastFor} from now.
	 * @param handle the grant, not bound to a thread
	 * @param lockAtLeastFor how long from now a release is carried out at the earliest
	 * @return the kept view, or the grant itself for zero
	 * @throws IllegalArgumentException if {@code lockAtLeastFor} is negative
	 */
	static LockHandle keep(LockHandle handle, Duration lockAtLeastFor) {
		Objects.requireNonNull(handle, "handle must not be null");
		Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor must not be null");
		if (lockAtLeastFor.isNegative()) {
			throw new IllegalArgumentException("lockAtLeastFor must not be negative, was " + lockAtLeastFor);
		}
		return lockAtLeastFor.isZero() ? handle : new KeptLockHandle(handle, lockAtLeastFor);
	}

	/**
	 * Release the grant now if {@code lockAtLeastFor} has passed (or it is no longer held), else
	 * schedule the release for when it has. Only the first call counts.
	 */
	@Override
	public void release() {
		if (!this.releaseAsked.compareAndSet(false, true)) {
			return;
		}
		long delay = this.releasableAt - System.nanoTime();
		if (delay <= 0 || this.delegate.state() == LockState.LOST) {
			this.delegate.release();
			return;
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Keeping " + mode() + " lock '" + path() + "' for " + Duration.ofNanos(delay)
					+ " more (lockAtLeastFor " + this.lockAtLeastFor + ")");
		}
		keepCeilingsPast(this.delegate, delay);
		later(this.delegate::release, delay);
	}

	/**
	 * Move the ceiling of the grant unless this view's release was asked for: the grant then
	 * counts as released for its user, even while it is kept.
	 * @throws IllegalStateException if this view was released
	 */
	@Override
	public LockHandle extend(Duration lockAtMostFor) {
		if (this.releaseAsked.get()) {
			throw new IllegalStateException(mode() + " lock '" + path() + "' was already released (kept until "
					+ "its lockAtLeastFor has passed); a released grant cannot be extended");
		}
		return super.extend(lockAtMostFor);
	}

	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		return keep(this, lockAtLeastFor);
	}

	/**
	 * Move a ceiling (lockAtMostFor) that would fall before a delayed release to a second after
	 * it: the work is done, and the ceiling is there for a stuck holder, not for a grant kept on
	 * purpose, which would otherwise end as lost rather than released (with both times equal, as
	 * ShedLock's examples set them). A grant that can no longer be extended is left as it is.
	 * @param delayNanos how long from now the release comes
	 */
	static void keepCeilingsPast(LockHandle handle, long delayNanos) {
		Duration keptFor = Duration.ofNanos(delayNanos).plus(CEILING_AFTER_KEPT_RELEASE);
		Instant deadline = handle.deadline().orElse(null);
		if (deadline == null || !deadline.isBefore(Instant.now().plus(keptFor))) {
			return;
		}
		try {
			handle.extend(keptFor);
		}
		catch (RuntimeException ex) {
			// Lost, in doubt or ending: the delayed release still comes, and is harmless.
			logger.debug("Could not move the ceiling of " + handle + " past its delayed release", ex);
		}
	}

	/**
	 * Run a delayed release on the scheduler thread; a failure is logged (nobody to throw to: the
	 * znode dies with the session if the delete did not go through).
	 */
	static void later(Runnable release, long delayNanos) {
		Scheduler.INSTANCE.schedule(() -> {
			try {
				release.run();
			}
			catch (RuntimeException ex) {
				logger.warn("Failed to release a lock kept for its lockAtLeastFor", ex);
			}
		}, delayNanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public String toString() {
		return this.delegate + " (kept at least " + this.lockAtLeastFor + ")";
	}

	/** Holder of the scheduler, created on the first delayed release. */
	private static final class Scheduler {

		static final ScheduledExecutorService INSTANCE = create();

		private static ScheduledExecutorService create() {
			ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
				Thread thread = new Thread(task, "zk-lock-release");
				thread.setDaemon(true);
				return thread;
			});
			executor.setRemoveOnCancelPolicy(true);
			return executor;
		}

	}

}
