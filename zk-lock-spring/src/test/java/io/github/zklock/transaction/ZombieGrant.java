package io.github.zklock.transaction;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * A grant as a zombie holder sees it: still {@link LockState#HELD}, with the fencing token it
 * read while it really held the lock, although its session has since expired and another holder
 * was granted. A real zombie is a process paused (GC, SIGSTOP) past its session timeout: it has
 * not yet processed the expiry, so its handle still says HELD and it goes on to write. In a test
 * JVM, Curator processes the expiry within milliseconds and the real handle turns LOST (then
 * {@code fencingToken()} throws, the safe case the lock already covers); this wrapper keeps the
 * zombie's belief so that the write reaches the store, which alone must reject it.
 */
final class ZombieGrant implements LockHandle {

	private final LockHandle lost;

	private final long token;

	/**
	 * @param lost the real grant, lost or about to be
	 * @param token its fencing token, read while it was held
	 */
	ZombieGrant(LockHandle lost, long token) {
		this.lost = lost;
		this.token = token;
	}

	@Override
	public String path() {
		return this.lost.path();
	}

	@Override
	public LockMode mode() {
		return this.lost.mode();
	}

	@Override
	public boolean isHeld() {
		return true;
	}

	@Override
	public LockState state() {
		return LockState.HELD;
	}

	@Override
	public void checkHeld() {
	}

	@Override
	public long fencingToken() {
		return this.token;
	}

	@Override
	public void release() {
		this.lost.release();
	}

}
