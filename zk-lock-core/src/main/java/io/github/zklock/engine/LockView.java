package io.github.zklock.engine;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.github.zklock.LockContext;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.spi.LockCondition;
import io.github.zklock.spi.LockConditions;

/**
 * A {@link Lock} over the grants of one key and mode of a template (see
 * {@code LockTemplate.lock(String)}). The grants a thread took through views of the key are kept
 * per thread, so that {@code unlock()} releases the latest of them; equal views share them.
 */
final class LockView implements Lock {

	/** Each thread's grants per view, latest last; an entry is removed when its last grant is. */
	private static final ThreadLocal<Map<LockView, ArrayDeque<LockHandle>>> held = ThreadLocal.withInitial(HashMap::new);

	private final LockEngine engine;

	private final String path;

	private final LockMode mode;

	/**
	 * Create a view; sends no request.
	 * @param engine the engine that grants
	 * @param path the key
	 * @param mode the lock mode of the view's grants
	 */
	LockView(LockEngine engine, String path, LockMode mode) {
		this.engine = engine;
		this.path = path;
		this.mode = mode;
	}

	@Override
	public void lock() {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					granted(acquire(LockRequest.WAIT_FOREVER).orElseThrow());
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
		tryLock(LockRequest.WAIT_FOREVER);
	}

	@Override
	public boolean tryLock() {
		// One attempt, which an interrupt must not fail: ZooKeeper requests of an interrupted
		// thread are abandoned. The interrupt is restored afterwards.
		boolean interrupted = Thread.interrupted();
		try {
			Optional<LockHandle> handle = acquire(Duration.ZERO);
			handle.ifPresent(this::granted);
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
		return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
	}

	private boolean tryLock(Duration waitTime) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before acquiring " + this);
		}
		Optional<LockHandle> handle;
		try {
			handle = acquire(waitTime);
		}
		catch (LockException ex) {
			if (Thread.interrupted()) {
				InterruptedException interrupted = new InterruptedException("Interrupted while acquiring " + this);
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw ex;
		}
		handle.ifPresent(this::granted);
		return handle.isPresent();
	}

	@Override
	public void unlock() {
		Map<LockView, ArrayDeque<LockHandle>> grants = held.get();
		ArrayDeque<LockHandle> handles = grants.get(this);
		if (handles == null) {
			throw new IllegalMonitorStateException(
					"Thread '" + Thread.currentThread().getName() + "' does not hold " + this);
		}
		LockHandle handle = handles.pollLast();
		if (handles.isEmpty()) {
			grants.remove(this);
		}
		handle.release();
	}

	/**
	 * Return the distributed condition of this lock's key (see {@link LockCondition}): every
	 * application's condition of the key is the same one. Sends no request.
	 * @throws UnsupportedOperationException for a READ lock (shared, as {@code ReentrantReadWriteLock}'s
	 * read lock has none), or a registry without conditions
	 */
	@Override
	public Condition newCondition() {
		LockConditions conditions = this.engine.registry().conditions();
		if (this.mode == LockMode.READ || conditions == null) {
			throw new UnsupportedOperationException((this.mode == LockMode.READ) ? "A READ lock (" + this + ") is shared: it has no condition"
					: "The lock registry of " + this + " has no conditions");
		}
		return new LockCondition(conditions, this.path, this.mode, new Holds());
	}

	private Optional<LockHandle> acquire(Duration waitTime) {
		return Optional.ofNullable(this.engine.acquire(LockEngine.request(this.path, this.mode, waitTime)).granted());
	}

	private void granted(LockHandle handle) {
		held.get().computeIfAbsent(this, (view) -> new ArrayDeque<>(2)).addLast(handle);
	}

	/** The calling thread's grants of this view, as its condition releases and takes them again. */
	private final class Holds implements LockCondition.Holder {

		@Override
		public void checkHeld() {
			ArrayDeque<LockHandle> handles = held.get().get(LockView.this);
			if (handles == null) {
				throw new IllegalMonitorStateException(
						"Thread '" + Thread.currentThread().getName() + "' does not hold " + LockView.this);
			}
			handles.peekLast().checkHeld();
			String lockPath = LockView.this.engine.registry().lockPath(LockView.this.path);
			for (LockHandle other : LockContext.held()) {
				if (other.path().equals(lockPath)) {
					throw new IllegalMonitorStateException("Thread '" + Thread.currentThread().getName() + "' holds "
							+ LockView.this + " through a locked callback too, which a wait on its condition would not release");
				}
			}
		}

		@Override
		public LockCondition.Released releaseAll() {
			// Kept as they are, released: the count to take again, and what abandon() puts back.
			ArrayDeque<LockHandle> handles = held.get().remove(LockView.this);
			for (Iterator<LockHandle> latestFirst = handles.descendingIterator(); latestFirst.hasNext();) {
				latestFirst.next().release();
			}
			return new LockCondition.Released() {

				@Override
				public void reacquire() {
					int taken = 0;
					try {
						for (; taken < handles.size(); taken++) {
							lock();
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
					// Released already: release() again does nothing, so unlock() for them does nothing.
					held.get().put(LockView.this, handles);
				}

			};
		}

	}

	@Override
	public boolean equals(Object other) {
		return other instanceof LockView view && this.engine == view.engine && this.path.equals(view.path)
				&& this.mode == view.mode;
	}

	@Override
	public int hashCode() {
		return Objects.hash(System.identityHashCode(this.engine), this.path, this.mode);
	}

	@Override
	public String toString() {
		return this.mode + " lock '" + this.path + "'";
	}

}
