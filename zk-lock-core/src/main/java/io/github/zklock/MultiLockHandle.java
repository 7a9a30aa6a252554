package io.github.zklock;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The grant of several keys at once ({@link LockTemplate#acquireAll}): held while every part is
 * held, released by releasing every part in reverse order of acquisition.
 */
final class MultiLockHandle implements LockHandle {

	private final List<LockHandle> parts;

	private final LockMode mode;

	private final String path;

	/**
	 * @param parts the grants, in the order they were acquired; at least two
	 * @param mode their common mode
	 */
	MultiLockHandle(List<LockHandle> parts, LockMode mode) {
		this.parts = List.copyOf(parts);
		this.mode = mode;
		this.path = this.parts.stream().map(LockHandle::path).collect(Collectors.joining(","));
	}

	@Override
	public String path() {
		return this.path;
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

	@Override
	public long fencingToken() {
		throw new UnsupportedOperationException("The multi-lock " + this.path
				+ " has one fencing token per key: use parts().get(i).fencingToken()");
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

	@Override
	public String toString() {
		return this.mode + " multi-lock " + this.parts;
	}

}
