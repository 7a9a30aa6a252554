package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.curator.ZnodeQueue.LockZnode;

/**
 * One asynchronous request made without a thread that has a znode of its own, and its grant:
 * a READ request (the read side of {@code InterProcessReadWriteLock}'s protocol; readers hold
 * together, so they do not queue locally), a non-reentrant EXCLUSIVE request (a one-lease
 * {@code InterProcessSemaphoreV2}) or a permit (a lease of the semaphore with the key's number of
 * permits, checked first against the number stored with the key, see {@link CheckedPermits}); see
 * {@link ZnodeQueue}. Leases are not handed over locally: like the recipe, each is a znode of its
 * own that any thread may return. The request is the future its caller gets: cancelling it gives
 * the wait up (the znode is deleted). Released, the grant's znode is deleted with Curator's
 * guaranteed delete, in the background.
 */
final class AsyncSingle extends CompletableFuture<Optional<LockHandle>> implements AsyncRelease {

	private final CuratorLockRegistry registry;

	private final String lockPath;

	private final LockMode mode;

	private final long since = System.currentTimeMillis();

	private final long sessionBefore;

	private final Duration lockAtMostFor;

	private volatile @Nullable CompletableFuture<@Nullable LockZnode> acquisition;

	private volatile @Nullable LockZnode znode;

	private AsyncSingle(CuratorLockRegistry registry, String lockPath, LockMode mode, Duration lockAtMostFor) {
		this.registry = registry;
		this.lockAtMostFor = lockAtMostFor;
		this.lockPath = lockPath;
		this.mode = mode;
		this.sessionBefore = CuratorLockRegistry.sessionInstance(registry.client());
	}

	/**
	 * Ask for a READ grant, a non-reentrant EXCLUSIVE grant or a permit.
	 * @param mode READ, or EXCLUSIVE for a lease
	 * @param permits the semaphore's number of permits; 0 for READ and for a non-reentrant
	 * EXCLUSIVE lock (one lease, nothing stored)
	 * @param waitMs milliseconds to wait, the permits check included; zero for one attempt;
	 * negative without limit
	 * @param lockAtMostFor the grant's ceiling, zero for none
	 * @return the request, completing as {@link CuratorLockRegistry#submit} says
	 */
	static AsyncSingle start(CuratorLockRegistry registry, String lockPath, LockMode mode, int permits, long waitMs,
			Duration lockAtMostFor) {
		AsyncSingle request = new AsyncSingle(registry, lockPath, mode, lockAtMostFor);
		registry.waiting(request, true);
		ZnodeQueue queue = registry.znodeQueue();
		if (mode == LockMode.READ) {
			request.acquire(() -> queue.acquire(lockPath, ZnodeQueue.Protocol.READ, waitMs));
		}
		else if (permits == 0) {
			request.acquire(() -> queue.acquireLease(lockPath, 1, waitMs));
		}
		else {
			long start = System.nanoTime();
			registry.checkedPermits().check(lockPath, permits).whenComplete((checked, ex) -> {
				if (ex != null) {
					request.acquired(null, ex);
					return;
				}
				long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
				long remainingMs = (waitMs <= 0) ? waitMs : Math.max(0, waitMs - elapsedMs);
				request.acquire(() -> queue.acquireLease(lockPath, permits, remainingMs));
			});
		}
		return request;
	}

	private void acquire(Supplier<CompletableFuture<@Nullable LockZnode>> start) {
		if (isDone()) {
			// Cancelled while the permits were checked.
			return;
		}
		CompletableFuture<@Nullable LockZnode> pending = start.get();
		this.acquisition = pending;
		pending.whenComplete(this::acquired);
		if (isCancelled()) {
			pending.cancel(false);
		}
	}

	private void acquired(@Nullable LockZnode granted, @Nullable Throwable ex) {
		this.registry.waiting(this, false);
		if (ex != null) {
			// Cancelled: this request was, and is done already.
			if (!(ex instanceof CancellationException)) {
				completeExceptionally(
						ZooKeeperFailures.translateAcquisition(ex, this.lockPath, this.mode, this.registry.client()));
			}
			return;
		}
		if (granted == null) {
			complete(Optional.empty());
			return;
		}
		this.znode = granted;
		long session = CuratorLockRegistry.sessionInstance(this.registry.client());
		CuratorLockHandle handle = this.registry.asyncGrant(this, grant(granted), this.lockPath, this.mode,
				(session == this.sessionBefore) ? session : this.sessionBefore, false);
		this.registry.handOut(handle, this, this.lockAtMostFor);
	}

	/** Cancelling gives the wait up: the acquisition deletes its znode. */
	@Override
	public boolean cancel(boolean mayInterruptIfRunning) {
		boolean cancelled = super.cancel(mayInterruptIfRunning);
		if (cancelled) {
			this.registry.waiting(this, false);
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
		return new WaitingLock(this.lockPath, this.mode, "async", Instant.ofEpochMilli(this.since));
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
