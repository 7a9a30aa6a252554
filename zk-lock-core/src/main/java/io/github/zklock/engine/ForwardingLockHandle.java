package io.github.zklock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * A grant wrapped to add behaviour around its release: every method of {@link LockHandle}
 * forwards to the wrapped grant until a subclass overrides it, so that a wrapper answers as the
 * grant it wraps.
 */
abstract class ForwardingLockHandle implements LockHandle {

	/** The wrapped grant. */
	protected final LockHandle delegate;

	ForwardingLockHandle(LockHandle delegate) {
		this.delegate = delegate;
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

	/**
	 * The wrapped grant's parts; a grant of one key is its own part, so this wrapper stands for it.
	 */
	@Override
	public List<LockHandle> parts() {
		List<LockHandle> parts = this.delegate.parts();
		return (parts.size() == 1 && parts.get(0) == this.delegate) ? List.of(this) : parts;
	}

	@Override
	public void release() {
		this.delegate.release();
	}

	/**
	 * Keep this wrapper, so that its own release behaviour runs: the wrapped grant says whether
	 * it may be kept (its check for a zero duration).
	 */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		this.delegate.keepAtLeast(Duration.ZERO);
		return KeptLockHandle.keep(this, lockAtLeastFor);
	}

	/** Move the wrapped grant's ceiling; this wrapper stays the caller's handle. */
	@Override
	public LockHandle extend(Duration lockAtMostFor) {
		this.delegate.extend(lockAtMostFor);
		return this;
	}

	@Override
	public Optional<Instant> deadline() {
		return this.delegate.deadline();
	}

	@Override
	public String toString() {
		return this.delegate.toString();
	}

}
