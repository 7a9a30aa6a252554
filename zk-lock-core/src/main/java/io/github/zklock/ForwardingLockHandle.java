package io.github.zklock;

import java.util.List;

/**
 * A grant wrapped to add behaviour around its release: every method forwards to the wrapped
 * grant until a subclass overrides it.
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

	@Override
	public boolean isLocalHandoff() {
		return this.delegate.isLocalHandoff();
	}

	@Override
	public void release() {
		this.delegate.release();
	}

	@Override
	public String toString() {
		return this.delegate.toString();
	}

}
