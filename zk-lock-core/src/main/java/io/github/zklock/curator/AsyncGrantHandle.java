package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * A grant made without a thread, as {@link CuratorLockRegistry#submit} hands it out: owned by no
 * thread, released from any thread without waiting for ZooKeeper (an {@link AsyncChain} hands the
 * key on or deletes its znode in the background; an {@link AsyncSingle} deletes its znode so).
 */
final class AsyncGrantHandle implements AsyncLockHandle {

	private final CuratorLockHandle grant;

	AsyncGrantHandle(CuratorLockHandle grant) {
		this.grant = grant;
	}

	@Override
	public String path() {
		return this.grant.path();
	}

	@Override
	public LockMode mode() {
		return this.grant.mode();
	}

	@Override
	public boolean isHeld() {
		return this.grant.isHeld();
	}

	@Override
	public LockState state() {
		return this.grant.state();
	}

	@Override
	public void checkHeld() {
		this.grant.checkHeld();
	}

	@Override
	public long fencingToken() {
		return this.grant.fencingToken();
	}

	@Override
	public boolean isLocalHandoff() {
		return this.grant.isLocalHandoff();
	}

	@Override
	public LockHandle extend(Duration lockAtMostFor) {
		this.grant.extend(lockAtMostFor);
		return this;
	}

	@Override
	public Optional<Instant> deadline() {
		return this.grant.deadline();
	}

	@Override
	public void release() {
		this.grant.release();
	}

	@Override
	public CompletableFuture<Void> releaseAsync() {
		this.grant.release();
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> whenLost() {
		return this.grant.whenLost();
	}

	@Override
	public String toString() {
		return "async " + this.grant;
	}

}
