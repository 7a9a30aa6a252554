package io.github.zklock.engine;

import io.micrometer.observation.Observation;

import io.github.zklock.LockHandle;
import io.github.zklock.LockState;

/**
 * A grant whose hold is observed: the {@code zk.lock.held} observation starts when the lock is
 * granted and stops when it is released. Used only when an observation registry is configured.
 */
final class ObservedLockHandle extends ForwardingLockHandle {

	private final Observation held;

	ObservedLockHandle(LockHandle delegate, Observation held) {
		super(delegate);
		this.held = held;
	}

	Observation observation() {
		return this.held;
	}

	@Override
	public void release() {
		boolean wasReleased = this.delegate.state() == LockState.RELEASED;
		this.delegate.release();
		if (!wasReleased) {
			this.held.stop();
		}
	}

}
