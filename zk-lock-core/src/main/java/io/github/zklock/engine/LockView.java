package io.github.zklock.engine;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;

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
	 * Not supported: a ZooKeeper lock has no condition queue.
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException("A ZooKeeper lock (" + this + ") has no conditions");
	}

	private Optional<LockHandle> acquire(Duration waitTime) {
		return Optional.ofNullable(this.engine.acquire(LockEngine.request(this.path, this.mode, waitTime)).granted());
	}

	private void granted(LockHandle handle) {
		held.get().computeIfAbsent(this, (view) -> new ArrayDeque<>(2)).addLast(handle);
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
