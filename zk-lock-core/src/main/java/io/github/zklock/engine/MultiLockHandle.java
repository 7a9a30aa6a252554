package io.github.zklock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * The grant of several keys at once (a multi-lock): held while every part is held, released by
 * releasing every part in reverse order of acquisition. Its {@link #path()} and
 * {@link #fencingToken()} are its first part's; its {@link #parts()} answer for each key.
 */
final class MultiLockHandle implements LockHandle {

	private final List<LockHandle> parts;

	private final LockMode mode;

	/**
	 * @param parts the grants, in the order they were acquired (canonical order); at least two
	 * @param mode their common mode
	 */
	MultiLockHandle(List<LockHandle> parts, LockMode mode) {
		this.parts = List.copyOf(parts);
		this.mode = mode;
	}

	@Override
	public String path() {
		return this.parts.get(0).path();
	}

	@Override
	public LockMode mode() {
		return this.mode;
	}

	@Override
	public List<LockHandle> parts() {
		return this.parts;
	}

	/**
	 * The state of the set: {@link LockState#RELEASED} once released, else the worst of its parts'
	 * (LOST over IN_DOUBT over HELD).
	 */
	@Override
	public LockState state() {
		LockState worst = LockState.HELD;
		for (LockHandle part : this.parts) {
			LockState state = part.state();
			if (state == LockState.RELEASED) {
				return LockState.RELEASED;
			}
			if (state == LockState.LOST || (state == LockState.IN_DOUBT && worst == LockState.HELD)) {
				worst = state;
			}
		}
		return worst;
	}

	@Override
	public boolean isHeld() {
		for (LockHandle part : this.parts) {
			if (!part.isHeld()) {
				return false;
			}
		}
		return true;
	}

	@Override
	public void checkHeld() {
		for (LockHandle part : this.parts) {
			part.checkHeld();
		}
	}

	/** The first part's token: the token of {@link #path()}. */
	@Override
	public long fencingToken() {
		checkHeld();
		return this.parts.get(0).fencingToken();
	}

	/**
	 * Release every part, the last acquired first. A part that fails to release is logged by its
	 * registry, and the others are still released; a thread-bound part released from another
	 * thread fails before any part is released.
	 */
	@Override
	public void release() {
		RuntimeException failure = null;
		for (int i = this.parts.size() - 1; i >= 0; i--) {
			try {
				this.parts.get(i).release();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/** Every part says whether it may be kept; the set is kept as a whole. */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		for (LockHandle part : this.parts) {
			part.keepAtLeast(Duration.ZERO);
		}
		return KeptLockHandle.keep(this, lockAtLeastFor);
	}

	/** Every part's ceiling moves; the first part that cannot be extended fails the call. */
	@Override
	public LockHandle extend(Duration lockAtMostFor) {
		checkHeld();
		for (LockHandle part : this.parts) {
			part.extend(lockAtMostFor);
		}
		return this;
	}

	/** The earliest of the parts' deadlines. */
	@Override
	public Optional<Instant> deadline() {
		Instant earliest = null;
		for (LockHandle part : this.parts) {
			Instant deadline = part.deadline().orElse(null);
			if (deadline != null && (earliest == null || deadline.isBefore(earliest))) {
				earliest = deadline;
			}
		}
		return Optional.ofNullable(earliest);
	}

	@Override
	public String toString() {
		return this.mode + " multi-lock " + this.parts;
	}

}
