package io.github.zklock.spi;

import java.util.Date;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;

/**
 * A {@link Condition} of a distributed lock, shared by every application: the condition of a lock
 * view's key ({@code LockTemplate.lock(key).newCondition()}, the write lock of
 * {@code readWriteLock(key)}, a {@code ZkLockRegistry} lock). Each call of {@code newCondition()}
 * on one key, in any application, returns the same condition: one queue of waiters per key
 * ({@link LockConditions}).
 *
 * <p>The contract of {@link Condition} across applications:
 * <ul>
 * <li>{@code await} checks the calling thread holds the lock ({@link IllegalMonitorStateException}
 * otherwise), puts the thread's waiter znode in the key's queue <em>before</em> releasing the lock,
 * so that no signal sent after the release is missed, checks the hold again (a lock lost before the
 * waiter queued fails the wait, rather than leave it waiting in a later session for a signal sent
 * before it queued), releases every hold of the thread on the lock (its reentrant count), waits,
 * and takes the holds again before it returns or throws;</li>
 * <li>{@code signal} wakes the longest waiter of any application, {@code signalAll} every waiter
 * there is; both need the lock held;</li>
 * <li>interrupts and timeouts as {@link java.util.concurrent.locks.AbstractQueuedSynchronizer}'s
 * conditions: an interrupt before the signal throws {@link InterruptedException}, one after it is
 * kept in the thread's flag; a time that runs out leaves the queue, a signal that came first
 * counts; spurious wake-ups may occur (a waiter whose znode could no longer be watched wakes), so
 * wait in a loop on the state you wait for;</li>
 * <li>a waiter whose session ends (its znode went with it, and a signal may have gone to it) fails
 * with {@link LockLostException}, without the lock: the thread's holds are given up, and its later
 * {@code unlock()} calls for them do nothing. The lock is never reported held when it is not. The
 * lost waiter passes a signal on to the longest other waiter, since one may have gone to its
 * znode: a signal is never lost to a dead waiter, another waiter may wake spuriously.</li>
 * </ul>
 *
 * <p>Cost: an {@code await} sends a create and a watching {@code getData} (one write, one read) on
 * top of the lock's release and grant (and the create of the waiters' container when the key has
 * none), and a delete when its time runs out; a {@code signal} a
 * {@code getChildren} and a delete, {@code signalAll} one delete per waiter. Each call blocks its
 * thread while ZooKeeper answers (at most the client's connection timeout per request); an
 * {@code await} also while it waits and takes the lock again.
 *
 * <p>Thread-safe: one instance serves every thread; the holds are the calling thread's.
 */
public final class LockCondition implements Condition {

	private final LockConditions conditions;

	private final String key;

	private final LockMode mode;

	private final Holder holder;

	/**
	 * Create the condition of a lock; sends no request.
	 * @param conditions the registry's condition queues
	 * @param key the lock's key below the root path
	 * @param mode the lock's mode: EXCLUSIVE or WRITE
	 * @param holder the lock view whose holds the calling thread releases and takes again
	 * @throws IllegalArgumentException if the mode is READ: a shared lock has no condition
	 */
	public LockCondition(LockConditions conditions, String key, LockMode mode, Holder holder) {
		if (mode == LockMode.READ) {
			throw new IllegalArgumentException("A READ lock is shared: it has no condition");
		}
		this.conditions = Objects.requireNonNull(conditions, "conditions must not be null");
		this.key = Objects.requireNonNull(key, "key must not be null");
		this.mode = mode;
		this.holder = Objects.requireNonNull(holder, "holder must not be null");
	}

	/**
	 * Wait until signalled or interrupted, with the lock released meanwhile and held again on return.
	 * @throws InterruptedException if interrupted before a signal (the lock is held again)
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException if the lock's grant or the waiter's session was lost (the lock is
	 * not held then)
	 * @throws LockException if ZooKeeper cannot serve the waiter's create (the lock is still held)
	 * or the lock cannot be taken again (not held then)
	 */
	@Override
	public void await() throws InterruptedException {
		await(Long.MAX_VALUE, true);
	}

	/**
	 * Wait until signalled, not interruptibly: an interrupt is kept in the thread's flag.
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException as {@link #await()} says
	 * @throws LockException as {@link #await()} says
	 */
	@Override
	public void awaitUninterruptibly() {
		try {
			await(Long.MAX_VALUE, false);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
		}
	}

	/**
	 * Wait until signalled, interrupted or the time runs out.
	 * @param nanosTimeout the longest wait, in nanoseconds; 0 or less returns it at once, sending
	 * nothing and keeping the lock
	 * @return an estimate of {@code nanosTimeout} less the time spent waiting (and taking the lock
	 * again), 0 or less when the time ran out
	 * @throws InterruptedException as {@link #await()} says
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException as {@link #await()} says
	 * @throws LockException as {@link #await()} says
	 */
	@Override
	public long awaitNanos(long nanosTimeout) throws InterruptedException {
		if (nanosTimeout <= 0) {
			checkBeforeWait();
			return nanosTimeout;
		}
		long left = await(nanosTimeout, true);
		return (left == TIMED_OUT) ? 0 : left;
	}

	/**
	 * Wait until signalled, interrupted or the time runs out.
	 * @param time the longest wait
	 * @param unit its unit
	 * @return {@code false} if the time ran out before a signal, else {@code true}
	 * @throws InterruptedException as {@link #await()} says
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException as {@link #await()} says
	 * @throws LockException as {@link #await()} says
	 */
	@Override
	public boolean await(long time, TimeUnit unit) throws InterruptedException {
		long nanos = unit.toNanos(time);
		if (nanos <= 0) {
			checkBeforeWait();
			return false;
		}
		return await(nanos, true) != TIMED_OUT;
	}

	/**
	 * Wait until signalled, interrupted or the deadline passes (by this JVM's wall clock).
	 * @param deadline when to stop waiting
	 * @return {@code false} if the deadline passed before a signal, else {@code true}
	 * @throws InterruptedException as {@link #await()} says
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException as {@link #await()} says
	 * @throws LockException as {@link #await()} says
	 */
	@Override
	public boolean awaitUntil(Date deadline) throws InterruptedException {
		return await(TimeUnit.MILLISECONDS.toNanos(deadline.getTime() - System.currentTimeMillis()), TimeUnit.NANOSECONDS);
	}

	/**
	 * Wake the longest waiter of this condition, of any application, if there is one.
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException if the lock's grant was lost
	 * @throws LockException if ZooKeeper cannot serve the signal (it may or may not have reached a
	 * waiter)
	 */
	@Override
	public void signal() {
		this.holder.checkHeld();
		this.conditions.signal(this.key);
	}

	/**
	 * Wake every waiter of this condition there is now, of any application.
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws LockLostException if the lock's grant was lost
	 * @throws LockException as {@link #signal()} says
	 */
	@Override
	public void signalAll() {
		this.holder.checkHeld();
		this.conditions.signalAll(this.key);
	}

	/** What {@link #await(long, boolean)} returns when the time ran out before a signal. */
	private static final long TIMED_OUT = Long.MIN_VALUE;

	private void checkBeforeWait() throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before waiting on " + this);
		}
		this.holder.checkHeld();
	}

	/**
	 * Wait: queue, release, wait, leave when not signalled, take the lock again.
	 * @param nanos the longest wait, {@link Long#MAX_VALUE} for none
	 * @param interruptible whether an interrupt before the signal ends the wait
	 * @return the time left, at most 0 when it ran out ({@link #TIMED_OUT} for a wait that ran out
	 * before a signal)
	 */
	private long await(long nanos, boolean interruptible) throws InterruptedException {
		if (interruptible) {
			checkBeforeWait();
		}
		else {
			this.holder.checkHeld();
		}
		long start = System.nanoTime();
		// Queued before the lock is let go: a signal sent once it is finds this waiter.
		LockConditions.Waiter waiter = this.conditions.enqueue(this.key, this.mode);
		try {
			// Still held once queued: a lock lost meanwhile (its session ended, and the waiter went
			// into the next session) is told here, or else its waiter is lost with the session
			// (the registry loses the grants first, then the waiters).
			this.holder.checkHeld();
		}
		catch (LockLostException ex) {
			leaveUnwaited(waiter, ex);
			// Lost: given up, as a lost waiter's holds are.
			this.holder.releaseAll().abandon();
			throw ex;
		}
		Released released;
		try {
			released = this.holder.releaseAll();
		}
		catch (RuntimeException ex) {
			leaveUnwaited(waiter, ex);
			throw ex;
		}
		boolean signalled;
		boolean interruptedBeforeSignal = false;
		boolean interruptedAfter = false;
		try {
			while (true) {
				try {
					long left = (nanos == Long.MAX_VALUE) ? Long.MAX_VALUE : nanos - (System.nanoTime() - start);
					signalled = waiter.await(left) || !waiter.leave();
					break;
				}
				catch (InterruptedException ex) {
					if (interruptible) {
						signalled = !waiter.leave();
						interruptedBeforeSignal = !signalled;
						interruptedAfter = signalled;
						break;
					}
					interruptedAfter = true;
				}
			}
		}
		catch (RuntimeException ex) {
			released.abandon();
			if (interruptedAfter) {
				Thread.currentThread().interrupt();
			}
			throw ex;
		}
		try {
			released.reacquire();
		}
		catch (RuntimeException ex) {
			released.abandon();
			if (interruptedAfter || interruptedBeforeSignal) {
				Thread.currentThread().interrupt();
			}
			throw ex;
		}
		if (interruptedBeforeSignal) {
			throw new InterruptedException("Interrupted while waiting on " + this);
		}
		if (interruptedAfter) {
			Thread.currentThread().interrupt();
		}
		if (!signalled) {
			return TIMED_OUT;
		}
		return (nanos == Long.MAX_VALUE) ? Long.MAX_VALUE : nanos - (System.nanoTime() - start);
	}

	/**
	 * Leave the queue for a wait that ends before it waited; a signal that reached the waiter
	 * meanwhile goes on to the next waiter, since this one will not act on it.
	 * @param waiter the waiter
	 * @param cause what ends the wait: a failure to leave is added to it, suppressed
	 */
	private void leaveUnwaited(LockConditions.Waiter waiter, RuntimeException cause) {
		try {
			if (!waiter.leave()) {
				this.conditions.signal(this.key);
			}
		}
		catch (RuntimeException notLeft) {
			// Lost with its session, say: gone already.
			cause.addSuppressed(notLeft);
		}
	}

	@Override
	public String toString() {
		return "condition of " + this.mode + " lock '" + this.key + "'";
	}

	/**
	 * The lock view a condition belongs to, as the calling thread holds it. Each view keeps its
	 * thread's holds its own way; the condition asks it to check, release and take them again.
	 */
	public interface Holder {

		/**
		 * Throw unless the calling thread holds the lock, through this view and only through it
		 * (holds of the key taken otherwise would stay while the thread waits, and nobody could
		 * signal it). Local state.
		 * @throws IllegalMonitorStateException if the thread does not hold the lock through this view,
		 * or holds the key otherwise too
		 * @throws LockLostException if the thread's grant was lost or is in doubt
		 */
		void checkHeld();

		/**
		 * Release every hold of the calling thread on the lock.
		 * @return the released holds, to be taken again
		 */
		Released releaseAll();

	}

	/** The holds of a thread that {@link Holder#releaseAll()} released. */
	public interface Released {

		/**
		 * Take the holds again, waiting without limit and not interruptibly (an interrupt is kept in
		 * the flag); on failure none is held.
		 * @throws LockException if ZooKeeper cannot serve the grant
		 */
		void reacquire();

		/**
		 * Leave the holds released for good: the thread's {@code unlock()} calls for them do
		 * nothing. Called when the wait ends without the lock ({@link LockLostException}, or a
		 * failed {@link #reacquire()}).
		 */
		void abandon();

	}

}
