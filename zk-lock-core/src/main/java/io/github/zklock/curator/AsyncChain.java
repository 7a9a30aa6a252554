package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.curator.ZnodeQueue.LockZnode;

/**
 * The asynchronous grants of one EXCLUSIVE (reentrant) or WRITE key in this application, made
 * without a thread: the waiters queue here in FIFO order, each a future; the application queues
 * one znode for them in ZooKeeper through {@link ZnodeQueue} (InterProcessMutex's protocol, or the
 * write side of InterProcessReadWriteLock's, so raw Curator code, the synchronous grants of the key
 * and other applications exclude them), and
 * while it holds that znode (a link) each release hands the lock to the next waiter without a
 * request, as {@link LocalChain} does for threads. A link ends after {@link LocalHandoff#maxGrants()}
 * grants or {@link LocalHandoff#maxTime()}, whichever comes first (so that other participants,
 * among them this application's synchronous waiters, which queue a znode of their own, get their
 * turn), half a negotiated session timeout after the requests that granted it, when the session
 * is not connected or changed, when its znode is revoked, and when nobody waits; its znode is then
 * deleted (guaranteed delete, in the background) and the next waiter, if any, queues a new one.
 * Without local hand-off, each grant has a znode of its own.
 *
 * <p>Thread-safe; nothing blocks while the monitor is held, and futures are completed outside it.
 */
final class AsyncChain implements AsyncRelease {

	private final CuratorLockRegistry registry;

	private final String lockPath;

	/** MUTEX (EXCLUSIVE) or WRITE. */
	private final ZnodeQueue.Protocol protocol;

	private final LockMode mode;

	private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

	/** The znode this application holds for the key's asynchronous grants, if any. */
	private @Nullable Link link;

	/** The grant riding the link now. */
	private @Nullable CuratorLockHandle holder;

	/** The acquisition of a znode in progress, if any. */
	private @Nullable CompletableFuture<@Nullable LockZnode> acquiring;

	/** The lock path: the key of the registry's map of chains. */
	String lockPath() {
		return this.lockPath;
	}

	AsyncChain(CuratorLockRegistry registry, String lockPath, ZnodeQueue.Protocol protocol) {
		this.registry = registry;
		this.lockPath = lockPath;
		this.protocol = protocol;
		this.mode = (protocol == ZnodeQueue.Protocol.WRITE) ? LockMode.WRITE : LockMode.EXCLUSIVE;
	}

	ZnodeQueue.Protocol protocol() {
		return this.protocol;
	}

	/**
	 * Queue for a grant.
	 * @param waitMs milliseconds to wait; zero for one attempt; negative without limit
	 * @param lockAtMostFor the grant's ceiling, zero for none
	 * @return the grant, or empty when not granted within the wait; exceptionally with a
	 * {@link io.github.zklock.LockException} when ZooKeeper failed; cancelling it gives the wait up
	 */
	CompletableFuture<Optional<LockHandle>> acquire(long waitMs, Duration lockAtMostFor) {
		Waiter waiter = new Waiter(waitMs == 0, lockAtMostFor);
		List<Runnable> after;
		synchronized (this) {
			if (waiter.oneAttempt && (this.holder != null || !this.waiters.isEmpty())) {
				// Held or queued for in this application: busy, with no request.
				after = List.of(() -> waiter.complete(Optional.empty()));
			}
			else {
				this.waiters.add(waiter);
				after = pump();
			}
		}
		if (waitMs > 0) {
			waiter.deadline = this.registry.timer().schedule(() -> giveUp(waiter), waitMs, TimeUnit.MILLISECONDS);
		}
		run(after);
		return waiter;
	}

	/** Whether the chain keeps nothing: no waiter, grant, znode or acquisition. */
	synchronized boolean idle() {
		return this.waiters.isEmpty() && this.holder == null && this.link == null && this.acquiring == null;
	}

	/** The waiters, for the operators' view. */
	synchronized List<WaitingLock> waiting() {
		List<WaitingLock> waiting = new ArrayList<>(this.waiters.size());
		for (Waiter waiter : this.waiters) {
			waiting.add(new WaitingLock(this.lockPath, this.mode, "async", Instant.ofEpochMilli(waiter.since)));
		}
		return waiting;
	}

	/**
	 * Hand no further grant on the znode if it is the link's (see {@link Revocations}): it was
	 * revoked, deleted by another client, or its holder's ceiling (lockAtMostFor) passed. The grant
	 * riding it no longer counts as the chain's holder, so that the next waiter queues a znode of
	 * its own at once instead of waiting for a holder that may never release (a stuck one); that
	 * grant's later release changes nothing here.
	 * @return whether the link was on that znode
	 */
	boolean endLink(String node, String reason) {
		List<Runnable> after;
		synchronized (this) {
			Link current = this.link;
			if (current == null || !current.znode.nodePath().equals(node)) {
				return false;
			}
			current.revokedReason = reason;
			if (this.holder == null) {
				return true;
			}
			// The link's znode is deleted by whoever ended it: drop it without a release of our own.
			this.holder = null;
			this.link = null;
			after = pump();
		}
		run(after);
		this.registry.dropIfIdle(this);
		return true;
	}

	/** A waiter's wait ran out, or its future was cancelled. */
	private void giveUp(Waiter waiter) {
		List<Runnable> after;
		synchronized (this) {
			if (!this.waiters.remove(waiter)) {
				return;
			}
			after = new ArrayList<>(pump());
			after.add(() -> waiter.complete(Optional.empty()));
		}
		run(after);
		this.registry.dropIfIdle(this);
	}

	/** The grant riding the link was released: hand the link on, or let it go. */
	@Override
	public void released(CuratorLockHandle handle) {
		List<Runnable> after;
		synchronized (this) {
			if (this.holder != handle) {
				return;
			}
			this.holder = null;
			after = pump();
		}
		run(after);
		this.registry.dropIfIdle(this);
	}

	/**
	 * Move the chain on, under the monitor: grant the head waiter on a usable link, else let the
	 * link go and queue a znode for the waiters, or end the acquisition nobody waits for.
	 * @return what to run once the monitor is released (completions, deletes)
	 */
	private List<Runnable> pump() {
		List<Runnable> after = new ArrayList<>(2);
		if (this.holder != null) {
			return after;
		}
		Link current = this.link;
		if (current != null && (this.waiters.isEmpty() || !usable(current, current.grants > 0))) {
			this.link = null;
			LockZnode ended = current.znode;
			after.add(() -> this.registry.znodeQueue().release(ended));
			current = null;
		}
		if (this.waiters.isEmpty()) {
			CompletableFuture<@Nullable LockZnode> pending = this.acquiring;
			if (pending != null) {
				this.acquiring = null;
				after.add(() -> pending.cancel(false));
			}
			return after;
		}
		if (current != null) {
			grant(this.waiters.poll(), current, after);
			return after;
		}
		if (this.acquiring == null) {
			boolean oneAttempt = this.waiters.peek().oneAttempt;
			long sessionBefore = CuratorLockRegistry.sessionInstance(this.registry.client());
			long requestedAt = System.nanoTime();
			CompletableFuture<@Nullable LockZnode> acquisition = this.registry.znodeQueue()
				.acquire(this.lockPath, this.protocol, oneAttempt ? 0 : -1);
			this.acquiring = acquisition;
			after.add(() -> acquisition.whenComplete((znode, ex) -> acquired(acquisition, znode, ex, sessionBefore,
					requestedAt)));
		}
		return after;
	}

	private void acquired(CompletableFuture<@Nullable LockZnode> acquisition, @Nullable LockZnode znode,
			@Nullable Throwable ex, long sessionBefore, long requestedAt) {
		List<Runnable> after = new ArrayList<>();
		synchronized (this) {
			if (this.acquiring != acquisition) {
				// Given up (nobody waits any more): ZnodeQueue deletes what it created, unless it was
				// granted just before the cancellation.
				if (znode != null) {
					after.add(() -> this.registry.znodeQueue().release(znode));
				}
			}
			else {
				this.acquiring = null;
				if (ex != null) {
					// ZooKeeper failed every waiter's attempt: the session ended, or retries ran out.
					RuntimeException failure = ZooKeeperFailures.translateAcquisition(ex, this.lockPath, this.mode,
							this.registry.client());
					for (Waiter waiter : this.waiters) {
						after.add(() -> waiter.completeExceptionally(failure));
					}
					this.waiters.clear();
				}
				else if (znode == null) {
					// One attempt, not granted: the head waiter asked for no more.
					Waiter head = this.waiters.poll();
					if (head != null) {
						after.add(() -> head.complete(Optional.empty()));
					}
					after.addAll(pump());
				}
				else {
					long session = CuratorLockRegistry.sessionInstance(this.registry.client());
					this.link = new Link(znode, session, requestedAt, sessionBefore != session);
					after.addAll(pump());
				}
			}
		}
		run(after);
		this.registry.dropIfIdle(this);
	}

	private void grant(Waiter waiter, Link current, List<Runnable> after) {
		current.grants++;
		CuratorLockHandle handle = this.registry.asyncGrant(this, current.grant(), this.lockPath, this.mode,
				current.sessionInstance, current.grants > 1);
		this.holder = handle;
		after.add(() -> this.registry.handOut(handle, waiter, waiter.lockAtMostFor));
	}

	/**
	 * Whether the link may carry one more grant: its first, when its session is the client's and
	 * connected and it was not revoked; a hand-over, besides, within the hand-off bounds and half a
	 * negotiated session timeout after the requests that granted the znode.
	 */
	private boolean usable(Link current, boolean handOver) {
		CuratorFramework client = this.registry.client();
		boolean sound = current.revokedReason == null && !current.sessionChanged
				&& client.getZookeeperClient().isConnected()
				&& CuratorLockRegistry.sessionInstance(client) == current.sessionInstance;
		if (!sound || !handOver) {
			return sound;
		}
		LocalHandoff handoff = this.registry.getLocalHandoff();
		long sessionTimeoutNanos = TimeUnit.MILLISECONDS
			.toNanos(client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs());
		long now = System.nanoTime();
		return handoff.enabled() && current.grants < handoff.maxGrants()
				&& now - current.grantedAt < handoff.maxTime().toNanos()
				&& (sessionTimeoutNanos <= 0 || now - current.requestedAt < sessionTimeoutNanos / 2);
	}

	private static void run(List<Runnable> actions) {
		for (Runnable action : actions) {
			action.run();
		}
	}

	/**
	 * One asynchronous request waiting for the key: the future its caller gets (a subclass, so that
	 * a queued request costs one object and its cancellation needs no callback).
	 */
	private final class Waiter extends CompletableFuture<Optional<LockHandle>> {

		final boolean oneAttempt;

		final Duration lockAtMostFor;

		/** Since when it waits, in epoch milliseconds. */
		final long since = System.currentTimeMillis();

		volatile @Nullable ScheduledFuture<?> deadline;

		Waiter(boolean oneAttempt, Duration lockAtMostFor) {
			this.oneAttempt = oneAttempt;
			this.lockAtMostFor = lockAtMostFor;
		}

		@Override
		public boolean complete(Optional<LockHandle> value) {
			boolean completed = super.complete(value);
			if (completed) {
				endDeadline();
			}
			return completed;
		}

		@Override
		public boolean completeExceptionally(Throwable ex) {
			boolean completed = super.completeExceptionally(ex);
			if (completed) {
				endDeadline();
			}
			return completed;
		}

		/** Cancelling gives the wait up: the waiter leaves the queue. */
		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			boolean cancelled = super.cancel(mayInterruptIfRunning);
			if (cancelled) {
				endDeadline();
				giveUp(this);
			}
			return cancelled;
		}

		private void endDeadline() {
			ScheduledFuture<?> timeout = this.deadline;
			if (timeout != null) {
				timeout.cancel(false);
			}
		}

	}

	/** The znode this application holds for the key's asynchronous grants. */
	private final class Link {

		final LockZnode znode;

		final long sessionInstance;

		/** When the requests that granted the znode were sent, in {@link System#nanoTime()}. */
		final long requestedAt;

		/** When the znode was granted, in {@link System#nanoTime()}. */
		final long grantedAt = System.nanoTime();

		/** Whether the session changed while the znode was acquired: then it is not handed on. */
		final boolean sessionChanged;

		int grants;

		volatile @Nullable String revokedReason;

		Link(LockZnode znode, long sessionInstance, long requestedAt, boolean sessionChanged) {
			this.znode = znode;
			this.sessionInstance = sessionInstance;
			this.requestedAt = requestedAt;
			this.sessionChanged = sessionChanged;
		}

		/** The grant of the link's current holder: releasing it hands the link on. */
		LinkGrant grant() {
			return new LinkGrant(this, this.grants);
		}

	}

	/** A grant riding a link: its znode, token and age are the link's. */
	final class LinkGrant implements LockRecipe.Grant {

		private final Link link;

		private final int position;

		LinkGrant(Link link, int position) {
			this.link = link;
			this.position = position;
		}

		@Override
		public String nodePath() {
			return this.link.znode.nodePath();
		}

		@Override
		public long czxid() {
			return this.link.znode.czxid();
		}

		/** Nothing to do here: the handle's release hands the link on (see {@link #released}). */
		@Override
		public void release() {
		}

		/** Which grant of the link this is, from 1. */
		int position() {
			return this.position;
		}

		/** Since when the application holds the link's znode, in {@link System#nanoTime()}. */
		long znodeHeldSinceNanos() {
			return this.link.grantedAt;
		}

		/** Why the link's znode was revoked, if it was. */
		@Nullable String revokedReason() {
			return this.link.revokedReason;
		}

	}

}
