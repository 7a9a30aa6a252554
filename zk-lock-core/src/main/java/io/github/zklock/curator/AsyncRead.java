package io.github.zklock.curator;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.curator.ZnodeQueue.LockZnode;

/**
 * One asynchronous READ request made without a thread, and its grant: a znode of its own on the
 * read side of {@code InterProcessReadWriteLock}'s protocol (see {@link ZnodeQueue}); readers hold
 * together, so requests do not queue locally. The request is the future its caller gets:
 * cancelling it gives the wait up (the znode is deleted). Released, the grant's znode is deleted
 * with Curator's guaranteed delete, in the background.
 */
final class AsyncRead extends CompletableFuture<Optional<LockHandle>> implements AsyncRelease {

	private final CuratorLockRegistry registry;

	private final String lockPath;

	private final long since = System.currentTimeMillis();

	private volatile @Nullable CompletableFuture<@Nullable LockZnode> acquisition;

	private volatile @Nullable LockZnode znode;

	private AsyncRead(CuratorLockRegistry registry, String lockPath) {
		this.registry = registry;
		this.lockPath = lockPath;
	}

	/**
	 * Ask for a READ grant.
	 * @param waitMs milliseconds to wait; zero for one attempt; negative without limit
	 * @return the request, completing as {@link CuratorLockRegistry#submit} says
	 */
	static AsyncRead start(CuratorLockRegistry registry, String lockPath, long waitMs) {
		AsyncRead read = new AsyncRead(registry, lockPath);
		registry.reading(read, true);
		long sessionBefore = CuratorLockRegistry.sessionInstance(registry.client());
		CompletableFuture<@Nullable LockZnode> acquisition = registry.znodeQueue()
			.acquire(lockPath, ZnodeQueue.Protocol.READ, waitMs);
		read.acquisition = acquisition;
		acquisition.whenComplete((znode, ex) -> read.acquired(znode, ex, sessionBefore));
		if (read.isCancelled()) {
			acquisition.cancel(false);
		}
		return read;
	}

	private void acquired(@Nullable LockZnode granted, @Nullable Throwable ex, long sessionBefore) {
		this.registry.reading(this, false);
		if (ex != null) {
			// Cancelled: this request was, and is done already.
			if (!(ex instanceof CancellationException)) {
				completeExceptionally(
						ZooKeeperFailures.translateAcquisition(ex, this.lockPath, LockMode.READ, this.registry.client()));
			}
			return;
		}
		if (granted == null) {
			complete(Optional.empty());
			return;
		}
		this.znode = granted;
		long session = CuratorLockRegistry.sessionInstance(this.registry.client());
		CuratorLockHandle handle = this.registry.asyncGrant(this, grant(granted), this.lockPath, LockMode.READ,
				(session == sessionBefore) ? session : sessionBefore, false);
		this.registry.handOut(handle, this);
	}

	/** Cancelling gives the wait up: the acquisition deletes its znode. */
	@Override
	public boolean cancel(boolean mayInterruptIfRunning) {
		boolean cancelled = super.cancel(mayInterruptIfRunning);
		if (cancelled) {
			this.registry.reading(this, false);
			CompletableFuture<@Nullable LockZnode> pending = this.acquisition;
			if (pending != null) {
				pending.cancel(false);
			}
		}
		return cancelled;
	}

	@Override
	public void released(CuratorLockHandle handle) {
		LockZnode granted = this.znode;
		if (granted != null) {
			this.registry.znodeQueue().release(granted);
		}
	}

	/** The request while it waits, for the operators' view. */
	WaitingLock waiting() {
		return new WaitingLock(this.lockPath, LockMode.READ, "async", Instant.ofEpochMilli(this.since));
	}

	private static LockRecipe.Grant grant(LockZnode znode) {
		return new LockRecipe.Grant() {

			@Override
			public String nodePath() {
				return znode.nodePath();
			}

			@Override
			public long czxid() {
				return znode.czxid();
			}

			@Override
			public void release() {
				// The handle's release deletes the znode: see released(handle).
			}

		};
	}

}
