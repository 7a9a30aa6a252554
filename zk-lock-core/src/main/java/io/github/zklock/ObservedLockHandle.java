package io.github.zklock;

import io.micrometer.observation.Observation;

/**
 * A grant whose hold is observed: the {@code zk.lock.held} observation starts when the lock is
 * granted and stops when it is released. Used only when an observation registry is configured.
 */
final class ObservedLockHandle implements LockHandle {

	private final LockHandle delegate;

	private final Observation held;

	ObservedLockHandle(LockHandle delegate, Observation held) {
		this.delegate = delegate;
		this.held = held;
	}

	Observation observation() {
		return this.held;
	}

	@Override
	public String path() {
		return this.delegate.path();
	}

	@Override
	public LockMode mode() {
		return this.delegate.mode();
	}

	@Override
	public LockState state() {
		return this.delegate.state();
	}

	@Override
	public boolean isHeld() {
		return this.delegate.isHeld();
	}

	@Override
	public void checkHeld() {
		this.delegate.checkHeld();
	}

	@Override
	public long fencingToken() {
		return this.delegate.fencingToken();
	}

	@Override
	public void release() {
		boolean wasReleased = this.delegate.state() == LockState.RELEASED;
		this.delegate.release();
		if (!wasReleased) {
			this.held.stop();
		}
	}

	@Override
	public String toString() {
		return this.delegate.toString();
	}

}
