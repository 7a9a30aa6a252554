package io.github.zklock.engine;

import java.time.Instant;

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

	/**
	 * Release the grant and stop the hold observation, with its {@code outcome}: {@code released}
	 * for a grant held until then, {@code expired} for one its ceiling ended (lockAtMostFor), or
	 * {@code lost} for one lost otherwise (session, revocation).
	 */
	@Override
	public void release() {
		LockState before = this.delegate.state();
		boolean wasReleased = before == LockState.RELEASED;
		String outcome = holdOutcome(this.delegate, before);
		this.delegate.release();
		if (!wasReleased) {
			this.held.lowCardinalityKeyValue(LockObservations.OUTCOME, outcome);
			this.held.stop();
		}
	}

	/** How a hold ended, for the {@code outcome} key of {@value LockObservations#HELD}. */
	static String holdOutcome(LockHandle handle, LockState state) {
		if (state != LockState.LOST) {
			return LockObservations.HOLD_RELEASED;
		}
		Instant deadline = handle.deadline().orElse(null);
		return (deadline != null && !Instant.now().isBefore(deadline)) ? LockObservations.HOLD_EXPIRED
				: LockObservations.HOLD_LOST;
	}

}
