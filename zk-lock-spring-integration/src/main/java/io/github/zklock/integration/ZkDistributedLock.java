package io.github.zklock.integration;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.TaskScheduler;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.spi.LockCondition;
import io.github.zklock.spi.LockConditions;
import io.github.zklock.spi.RequestRules;

/**
 * The {@link DistributedLock} of one key of a {@link ZkLockRegistry}: each {@code lock} or
 * successful {@code tryLock} is a reentrant EXCLUSIVE grant of the template, whose time to live
 * is the grant's ceiling ({@link LockRequest#withLockAtMostFor(Duration) lockAtMostFor}; a time to
 * live of zero, none, is {@link LockRequest#NO_CEILING}). The grants a thread took are kept per
 * thread, latest last, so that {@code unlock()} releases the latest and
 * {@link ZkLockRegistry#renewLock} finds them; locks of the same template and key are equal and
 * share them.
 */
final class ZkDistributedLock implements DistributedLock {

	private static final Log logger = LogFactory.getLog(ZkDistributedLock.class);

	/** Each thread's grants per lock, latest last; an entry is removed when its last grant is. */
	private static final ThreadLocal<Map<ZkDistributedLock, ArrayDeque<Grant>>> held = ThreadLocal
		.withInitial(HashMap::new);

	private final ZkLockRegistry registry;

	private final LockTemplate template;

	private final String key;

	/**
	 * Create the lock of a key; sends no request.
	 * @param registry the registry whose default time to live and renewal scheduler apply
	 * @param key the zk-lock key, checked by the caller
	 */
	ZkDistributedLock(ZkLockRegistry registry, String key) {
		this.registry = registry;
		this.template = registry.getTemplate();
		this.key = key;
	}

	@Override
	public void lock() {
		lock(this.registry.getDefaultTtl());
	}

	/**
	 * Wait without limit for the lock, ended {@code ttl} after it is granted unless renewed or
	 * unlocked; not interruptible (an interrupt while waiting is restored once granted).
	 * @param ttl the time to live, zero for none
	 * @throws IllegalArgumentException if {@code ttl} is negative
	 * @throws LockLostException if the thread holds a grant of this lock that is lost or ended
	 * @throws LockException if ZooKeeper cannot serve the attempt
	 */
	@Override
	public void lock(Duration ttl) {
		checkTtl(ttl);
		boolean interrupted = false;
		try {
			while (true) {
				try {
					granted(acquire(LockRequest.WAIT_FOREVER, ttl).orElseThrow(), ttl);
					return;
				}
				catch (LockException ex) {
					// Thread.interrupted() clears the flag, so that the next attempt can wait.
					if (!Thread.interrupted()) {
						throw ex;
					}
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public void lockInterruptibly() throws InterruptedException {
		tryLock(LockRequest.WAIT_FOREVER, this.registry.getDefaultTtl());
	}

	@Override
	public boolean tryLock() {
		// One attempt, which an interrupt must not fail: ZooKeeper requests of an interrupted
		// thread are abandoned. The interrupt is restored afterwards.
		boolean interrupted = Thread.interrupted();
		try {
			Duration ttl = this.registry.getDefaultTtl();
			Optional<LockHandle> handle = acquire(Duration.ZERO, ttl);
			handle.ifPresent((granted) -> granted(granted, ttl));
			return handle.isPresent();
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))), this.registry.getDefaultTtl());
	}

	/**
	 * Wait at most {@code waitTime} for the lock, ended {@code ttl} after it is granted unless
	 * renewed or unlocked.
	 * @param waitTime the longest wait, {@link LockRequest#WAIT_FOREVER} for no limit; another
	 * negative time or zero makes one attempt
	 * @param ttl the time to live, zero for none
	 * @return whether the lock was granted
	 * @throws InterruptedException if the thread is interrupted before or while waiting (no grant
	 * is left behind)
	 * @throws IllegalArgumentException if {@code ttl} is negative
	 * @throws LockLostException if the thread holds a grant of this lock that is lost or ended
	 * @throws LockException if ZooKeeper cannot serve the attempt
	 */
	@Override
	public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
		Objects.requireNonNull(waitTime, "waitTime must not be null");
		checkTtl(ttl);
		Duration wait = (waitTime.isNegative() && !LockRequest.WAIT_FOREVER.equals(waitTime)) ? Duration.ZERO
				: waitTime;
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before acquiring " + this);
		}
		Optional<LockHandle> handle;
		try {
			handle = acquire(wait, ttl);
		}
		catch (LockException ex) {
			if (Thread.interrupted()) {
				InterruptedException interrupted = new InterruptedException("Interrupted while acquiring " + this);
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw ex;
		}
		handle.ifPresent((granted) -> granted(granted, ttl));
		return handle.isPresent();
	}

	/**
	 * Release the calling thread's latest grant of this lock.
	 * @throws IllegalMonitorStateException if the thread holds none
	 * @throws ConcurrentModificationException if its time to live had ended the grant (it is
	 * released all the same)
	 */
	@Override
	public void unlock() {
		Map<ZkDistributedLock, ArrayDeque<Grant>> grants = held.get();
		ArrayDeque<Grant> mine = grants.get(this);
		if (mine == null) {
			throw notHeld();
		}
		Grant grant = mine.pollLast();
		if (mine.isEmpty()) {
			grants.remove(this);
		}
		grant.stopRenewal();
		LockHandle handle = grant.handle();
		boolean expired = handle.state() == LockState.LOST && passed(handle);
		handle.release();
		if (expired) {
			throw new ConcurrentModificationException("Lock was released in the store due to expiration: " + this
					+ " was held longer than its time to live (ended at " + handle.deadline().orElseThrow()
					+ "); the integrity of data protected by this lock may have been compromised");
		}
	}

	/**
	 * Return the distributed condition of this lock's key, a zk-lock addition (Spring Integration's
	 * registries have none): every application's condition of the key is the same one, shared with
	 * {@code LockTemplate.lock(key).newCondition()} (see {@link LockCondition} for the contract). A
	 * wait releases every grant the thread holds on this lock and takes each again, with its time
	 * to live, before it returns. Sends no request.
	 * @throws UnsupportedOperationException if the template's registry has no conditions
	 */
	@Override
	public Condition newCondition() {
		LockConditions conditions = this.template.getRegistry().conditions();
		if (conditions == null) {
			throw new UnsupportedOperationException("The lock registry of " + this + " has no conditions");
		}
		return new LockCondition(conditions, this.key, LockMode.EXCLUSIVE, new Holds());
	}

	/**
	 * Move the ceiling of every grant the calling thread holds on this lock to {@code ttl} from
	 * now (the body of {@link ZkLockRegistry#renewLock(Object, Duration)}).
	 * @param ttl positive
	 * @throws IllegalMonitorStateException if the thread holds no grant of this lock
	 * @throws IllegalStateException if a grant is no longer held: its time to live passed, it
	 * was lost with its session, or it is in doubt
	 */
	void renew(Duration ttl) {
		ArrayDeque<Grant> mine = held.get().get(this);
		if (mine == null) {
			throw notHeld();
		}
		for (Grant grant : List.copyOf(mine)) {
			try {
				// Fails for a grant lost, in doubt, or past its ceiling (also before the ceiling ran).
				grant.handle().extend(ttl);
			}
			catch (LockLostException ex) {
				throw new IllegalStateException("Could not renew " + this + ": " + ex.getMessage(), ex);
			}
		}
	}

	/**
	 * Throw unless the calling thread holds a grant of this lock (held, or lost but not yet
	 * unlocked).
	 * @throws IllegalMonitorStateException if it holds none
	 */
	void checkHeldByCurrentThread() {
		if (!held.get().containsKey(this)) {
			throw notHeld();
		}
	}

	private Optional<LockHandle> acquire(Duration waitTime, Duration ttl) {
		return this.template.tryAcquire(LockRequest.of(this.key)
			.withWaitTime(waitTime)
			.withLockAtMostFor(expires(ttl) ? ttl : LockRequest.NO_CEILING));
	}

	/**
	 * Keep a new grant for the calling thread. A re-entry renews the grants it nests in to its own
	 * time to live, as a re-entry refreshes the expiry of Spring Integration's own registries'
	 * locks: they share the lock znode, which the first ceiling to pass would delete.
	 */
	private void granted(LockHandle handle, Duration ttl) {
		ArrayDeque<Grant> mine = held.get().computeIfAbsent(this, (lock) -> new ArrayDeque<>(2));
		if (expires(ttl)) {
			for (Grant outer : mine) {
				try {
					outer.handle().extend(ttl);
				}
				catch (LockLostException | IllegalStateException ex) {
					// Lost with the znode the new grant shares: its holder learns it from the new grant.
					logger.debug("Could not renew an enclosing grant of " + this, ex);
				}
			}
		}
		mine.addLast(new Grant(handle, ttl, scheduleRenewal(handle, ttl)));
	}

	private @Nullable ScheduledFuture<?> scheduleRenewal(LockHandle handle, Duration ttl) {
		TaskScheduler scheduler = this.registry.getRenewalTaskScheduler();
		if (scheduler == null || !expires(ttl)) {
			return null;
		}
		Renewal renewal = new Renewal(handle, ttl);
		renewal.future = scheduler.scheduleWithFixedDelay(renewal, Instant.now().plus(ttl.dividedBy(3)),
				ttl.dividedBy(3));
		return renewal.future;
	}

	private IllegalMonitorStateException notHeld() {
		return new IllegalMonitorStateException(
				"Thread '" + Thread.currentThread().getName() + "' does not hold " + this);
	}

	private static void checkTtl(Duration ttl) {
		checkTtl(ttl, "The time to live (ttl)");
	}

	/**
	 * Check a time to live: zero (none), positive, or {@link LockRequest#NO_CEILING} (none as
	 * zk-lock spells it).
	 * @param ttl the time to live
	 * @param what what it is, for the message
	 * @throws IllegalArgumentException if it is negative
	 */
	static void checkTtl(Duration ttl, String what) {
		Objects.requireNonNull(ttl, () -> what + " must not be null");
		if (ttl.isNegative()) {
			throw new IllegalArgumentException(what + " is " + ttl + ": use a positive duration, or zero for none");
		}
	}

	/** Whether a checked time to live ends a grant: neither zero nor {@link LockRequest#NO_CEILING}. */
	static boolean expires(Duration ttl) {
		return !ttl.isZero() && !RequestRules.noCeiling(ttl);
	}

	/** Whether the grant's ceiling has passed by the local clock (whether or not it ran yet). */
	private static boolean passed(LockHandle handle) {
		Instant deadline = handle.deadline().orElse(null);
		return deadline != null && !deadline.isAfter(Instant.now());
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof ZkDistributedLock lock && this.template == lock.template && this.key.equals(lock.key);
	}

	@Override
	public int hashCode() {
		return Objects.hash(System.identityHashCode(this.template), this.key);
	}

	@Override
	public String toString() {
		return "lock '" + this.key + "'";
	}

	/** The calling thread's grants of this lock, as its condition releases and takes them again. */
	private final class Holds implements LockCondition.Holder {

		@Override
		public void checkHeld() {
			ArrayDeque<Grant> mine = held.get().get(ZkDistributedLock.this);
			if (mine == null) {
				throw notHeld();
			}
			mine.peekLast().handle().checkHeld();
		}

		@Override
		public LockCondition.Released releaseAll() {
			// Kept as they are, released: their times to live to take again, what abandon() puts back.
			ArrayDeque<Grant> mine = held.get().remove(ZkDistributedLock.this);
			for (Iterator<Grant> latestFirst = mine.descendingIterator(); latestFirst.hasNext();) {
				Grant grant = latestFirst.next();
				grant.stopRenewal();
				grant.handle().release();
			}
			return new LockCondition.Released() {

				@Override
				public void reacquire() {
					int taken = 0;
					try {
						for (Grant grant : mine) {
							lock(grant.ttl());
							taken++;
						}
					}
					catch (RuntimeException ex) {
						for (; taken > 0; taken--) {
							unlock();
						}
						throw ex;
					}
				}

				@Override
				public void abandon() {
					// Released already: unlock() releases them again, which does nothing.
					held.get().put(ZkDistributedLock.this, mine);
				}

			};
		}

	}

	/** A grant the thread holds, its time to live, and its renewal task when the registry renews. */
	private record Grant(LockHandle handle, Duration ttl, @Nullable ScheduledFuture<?> renewal) {

		void stopRenewal() {
			if (this.renewal != null) {
				this.renewal.cancel(false);
			}
		}

	}

	/**
	 * Renews a grant every third of its time to live (as Spring Integration's Redis registry does)
	 * until it is unlocked or lost; skips the turns while the grant is in doubt.
	 */
	private static final class Renewal implements Runnable {

		private final LockHandle handle;

		private final Duration ttl;

		volatile @Nullable ScheduledFuture<?> future;

		Renewal(LockHandle handle, Duration ttl) {
			this.handle = handle;
			this.ttl = ttl;
		}

		@Override
		public void run() {
			if (this.handle.state() == LockState.IN_DOUBT) {
				// The connection may come back in the same session: try again at the next turn.
				return;
			}
			try {
				this.handle.extend(this.ttl);
			}
			catch (LockLostException | IllegalStateException ex) {
				// Lost, ended or released meanwhile: nothing left to renew.
				logger.debug("Stopped renewing " + this.handle.path(), ex);
				ScheduledFuture<?> scheduled = this.future;
				if (scheduled != null) {
					scheduled.cancel(false);
				}
			}
		}

	}

}
