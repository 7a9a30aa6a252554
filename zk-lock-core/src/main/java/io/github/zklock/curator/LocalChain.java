package io.github.zklock.curator;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockMode;
import io.github.zklock.LockUpgradeException;

/**
 * Local hand-off of one key's exclusive lock (EXCLUSIVE reentrant, or the WRITE side of a
 * read/write lock) between the threads of this application: see {@link LocalHandoff}.
 *
 * <p>The threads of the application take <em>turns</em> on the key through a fair (FIFO), reentrant
 * {@link Turn}. The thread whose turn it is owns, for the application, the key's lock
 * znode (a {@link Link}): the first turn acquires one through the Curator recipe (create of an
 * ephemeral sequential znode with a protected name, getChildren, a watch on the predecessor while
 * waiting: the lock recipe of the ZooKeeper recipes page); when the turn ends while another local
 * thread waits for one, the znode stays at the head of ZooKeeper's queue and the next turn rides
 * it without a request. Mutual exclusion across applications is ZooKeeper's: the znode never
 * leaves the head of the queue while a local thread runs. Re-entry, and READ under WRITE, by the
 * thread whose turn it is are further holds of the turn.
 *
 * <p>Bound: while another participant (another application, or a READ of this one) queues
 * behind the znode, the link ends after {@link LocalHandoff#maxGrants()} grants or
 * {@link LocalHandoff#maxTime()} since its grant. Whether one queues: for EXCLUSIVE, the listing of
 * the queue by which Curator granted the znode tells at no cost when one already did; otherwise
 * (and for WRITE) one background {@code getChildren} with a watch on the lock path at the first
 * hand-off of the link, and one more per change of the children while nobody else queues. The
 * answer comes on Curator's event thread: until it does, the link counts nobody else as
 * queued. A link also ends when no local thread waits, when its session is no longer connected
 * (a grant that is not held is never handed on), and half a negotiated session timeout after the
 * requests that granted its znode: a process paused longer than the session timeout (a long GC, a
 * SIGSTOP) runs its threads again before its client hears that the server expired the session, and
 * must not hand a znode that may be gone to a new grant then. Nor does a link whose znode was
 * revoked (see {@link Revocations}).
 *
 * <p>Releasing a link's znode: on the thread that acquired it through Curator, the recipe's own
 * release (which leaves the recipe instance clean, kept for the next link); on any other thread,
 * the same guaranteed delete that the recipe sends, and the recipe instance, which still records
 * the znode as its acquirer's, is dropped.
 *
 * <p>A turn whose znode is revoked, deleted by another client, or whose grant's ceiling
 * (lockAtMostFor) passed is taken away from its thread ({@link #endLink}), which may be stuck and
 * never release: the next local thread then queues a znode of its own at once, and the stuck
 * thread's later release changes nothing here.
 *
 * <p>Thread-safe. {@link #link}, {@link #writeHolds} and the turn's ownership change under
 * {@link #guard} (never held across a ZooKeeper request); {@link #spare} is written only by the
 * thread whose turn it is.
 */
final class LocalChain {

	private static final Log logger = LogFactory.getLog(LocalChain.class);

	private final Turn turn = new Turn();

	/** Guards the link and the turn's ownership against {@link #endLink} from another thread. */
	private final Object guard = new Object();

	private final CuratorFramework client;

	private final String lockPath;

	private final Supplier<LockRecipe> recipes;

	/** One object per key, so that the watches left by listings of the children stay one. */
	private final Watcher childrenWatcher = this::childrenChanged;

	private volatile @Nullable Link link;

	/** A recipe instance holding no znode, for the next link. */
	private @Nullable LockRecipe spare;

	/** WRITE grants of the current turn not yet released (written by the thread whose turn it is). */
	private int writeHolds;

	LocalChain(CuratorFramework client, String lockPath, Supplier<LockRecipe> recipes) {
		this.client = client;
		this.lockPath = lockPath;
		this.recipes = recipes;
	}

	/** Whether the current thread has the turn: its requests of the key are nested. */
	boolean heldByCurrentThread() {
		return this.turn.isHeldByCurrentThread();
	}

	/** Whether the chain keeps no znode and nobody has or waits for a turn. */
	boolean idle() {
		return this.link == null && !this.turn.isLocked() && !this.turn.hasQueuedThreads();
	}

	/**
	 * Hand no further grant on the kept znode if it is {@code node}: it was revoked, deleted by
	 * another client, or its grant's ceiling passed (see {@link Revocations}). The next turn queues
	 * in ZooKeeper again; a turn riding the znode now is taken away from its thread, which may be
	 * stuck, so that the next local thread need not wait for its release (whoever ended the znode
	 * deletes it).
	 * @param node the znode's full path
	 * @param reason why, for the grants that already ride it
	 * @return whether this chain keeps that znode
	 */
	boolean endLink(String node, String reason) {
		synchronized (this.guard) {
			Link current = this.link;
			if (current == null || !current.grant.nodePath().equals(node)) {
				return false;
			}
			current.revokedReason = reason;
			if (this.turn.takeAway()) {
				this.link = null;
				this.writeHolds = 0;
			}
			return true;
		}
	}

	/**
	 * Grant the key to the current thread: nested in its own turn, handed over on the link the
	 * previous turn kept, or through ZooKeeper.
	 * @param mode EXCLUSIVE or WRITE; READ only nested in the current thread's WRITE turn
	 * @param waitMs milliseconds to wait; zero for one attempt; negative to wait without limit
	 * @param settings the hand-off bounds for a new link
	 * @return the grant, or {@code null} when not granted within the wait
	 */
	@Nullable ChainGrant acquire(LockMode mode, long waitMs, LocalHandoff settings) throws Exception {
		if (this.turn.isHeldByCurrentThread()) {
			Link current = this.link;
			if (current == null) {
				// Cannot happen: a turn with a grant keeps its link until the turn ends.
				throw new IllegalStateException("No lock znode for the nested grant of " + this.lockPath);
			}
			if (mode == LockMode.WRITE && this.writeHolds == 0) {
				// The turn holds READ only (its WRITE was released first): as without hand-off, no
				// read-to-write upgrade.
				throw new LockUpgradeException(this.lockPath);
			}
			synchronized (this.guard) {
				this.turn.hold();
				return new ChainGrant(current, Kind.NESTED, mode);
			}
		}
		long start = System.nanoTime();
		boolean turnTaken;
		try {
			turnTaken = this.turn.take(waitMs);
		}
		catch (InterruptedException ex) {
			// As for a wait that ended: the previous turn may have kept the link for this thread.
			settle();
			throw ex;
		}
		if (!turnTaken) {
			// The previous turn may have kept the link for this thread, which no longer comes.
			settle();
			return null;
		}
		boolean granted = false;
		try {
			Link current = this.link;
			if (current != null) {
				synchronized (this.guard) {
					if (current.usable(this.client) && this.link == current) {
						current.grants++;
						granted = true;
						return new ChainGrant(current, Kind.HANDED_OVER, mode);
					}
				}
				// The session is not connected, or was replaced: the znode may be gone. Let it go
				// (a guaranteed delete, finished by Curator after reconnection) and queue again.
				this.link = null;
				try {
					end(current);
				}
				catch (Exception ex) {
					if (ex instanceof InterruptedException) {
						throw ex;
					}
					logger.debug("Could not release lock znode " + current.grant.nodePath() + " at once; Curator "
							+ "retries the delete, or ZooKeeper removes the znode with its session", ex);
				}
			}
			long remainingMs = (waitMs <= 0) ? waitMs
					: Math.max(0, waitMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			LockRecipe recipe = (this.spare != null) ? this.spare : this.recipes.get();
			this.spare = null;
			// Before the requests that grant the znode: the server heard from the session after this.
			long requested = System.nanoTime();
			LockRecipe.Grant grant = recipe.acquire(mode, remainingMs);
			if (grant == null) {
				this.spare = recipe;
				return null;
			}
			Link fresh = new Link(recipe, grant, settings, requested,
					this.client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs());
			synchronized (this.guard) {
				this.link = fresh;
				granted = true;
				return new ChainGrant(fresh, Kind.ACQUIRED, mode);
			}
		}
		finally {
			if (!granted) {
				synchronized (this.guard) {
					this.turn.release();
				}
				settle();
			}
		}
	}

	/**
	 * End one hold of the current thread's turn. At the end of the turn, keep the link for the
	 * next local thread, or release its znode. Nothing when the turn was taken away
	 * ({@link #endLink}).
	 */
	private void leave(LockMode mode) throws Exception {
		Link ended;
		boolean handOver = false;
		synchronized (this.guard) {
			if (!this.turn.isHeldByCurrentThread()) {
				// Taken away: its znode was ended by whoever took it.
				return;
			}
			if (mode == LockMode.WRITE) {
				this.writeHolds--;
			}
			Link current = this.link;
			if (this.turn.getHoldCount() > 1 || current == null) {
				this.turn.release();
				return;
			}
			handOver = this.turn.hasQueuedThreads() && current.usable(this.client) && !current.bounded();
			if (handOver) {
				if (!current.watching) {
					current.watching = true;
					// In the background: no request is waited for under the guard.
					listChildren(current);
				}
				this.turn.release();
				ended = null;
			}
			else {
				this.link = null;
				ended = current;
			}
		}
		if (ended != null) {
			try {
				end(ended);
			}
			finally {
				synchronized (this.guard) {
					this.turn.release();
				}
			}
		}
		if (handOver && !this.turn.hasQueuedThreads()) {
			// The waiter left (its wait ended) between the check and the release.
			settle();
		}
	}

	/**
	 * Release the kept link if nobody has or waits for a turn. Called by whoever may have left the
	 * link without a next turn: a thread whose wait for a turn ended, and a turn that kept the
	 * link for a waiter that left since; one of them sees the other's change.
	 */
	private void settle() {
		if (this.link == null || !this.turn.tryTake()) {
			return;
		}
		try {
			Link current;
			synchronized (this.guard) {
				current = this.link;
				if (current != null && !this.turn.hasQueuedThreads()) {
					this.link = null;
				}
				else {
					current = null;
				}
			}
			if (current != null) {
				end(current);
			}
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.warn("Failed to release lock znode of " + this.lockPath
					+ "; Curator deletes it once reconnected (guaranteed delete), or ZooKeeper when the session ends",
					ex);
		}
		finally {
			synchronized (this.guard) {
				this.turn.release();
			}
		}
	}

	/** Release a link's znode, with the recipe when this thread acquired it. */
	private void end(Link ended) throws Exception {
		if (ended.acquirer == Thread.currentThread()) {
			ended.grant.release();
			this.spare = ended.recipe;
		}
		else {
			// What the recipe's release sends (Curator's LockInternals.releaseLock); the recipe
			// instance still counts the znode as its acquirer's and is dropped.
			// Quietly: a znode gone with its session is released already.
			this.client.delete().quietly().guaranteed().forPath(ended.grant.nodePath());
		}
	}

	private void listChildren(Link listed) {
		try {
			this.client.getChildren()
				.usingWatcher(this.childrenWatcher)
				.inBackground((client, event) -> childrenListed(listed, event))
				.forPath(this.lockPath);
		}
		catch (Exception ex) {
			// Not known: count someone as waiting, so that the bounds apply.
			listed.othersWaiting = true;
		}
	}

	private void childrenListed(Link listed, CuratorEvent event) {
		if (event.getResultCode() != KeeperException.Code.OK.intValue() || event.getChildren().size() > 1) {
			listed.othersWaiting = true;
		}
	}

	private void childrenChanged(WatchedEvent event) {
		Link current = this.link;
		if (event.getType() == Watcher.Event.EventType.NodeChildrenChanged && current != null && current.watching
				&& !current.othersWaiting) {
			listChildren(current);
		}
	}

	/**
	 * The turn of the key's threads: fair (FIFO) and reentrant like a fair {@code ReentrantLock},
	 * but it can be taken away from its thread ({@link #takeAway()}), for a holder that may never
	 * release. A fair {@link Semaphore} of one permit queues the threads; the owner and its hold
	 * count are one object, replaced when the turn changes hands, so that exactly one of the owner's
	 * last release and a take-away returns the permit.
	 */
	static final class Turn {

		private final Semaphore permit = new Semaphore(1, true);

		private final AtomicReference<@Nullable Owner> owner = new AtomicReference<>();

		/**
		 * Wait for the turn.
		 * @param waitMs milliseconds to wait; zero for one attempt; negative without limit
		 * @return whether the turn was taken
		 */
		boolean take(long waitMs) throws InterruptedException {
			if (waitMs < 0) {
				this.permit.acquire();
			}
			else if (!this.permit.tryAcquire(waitMs, TimeUnit.MILLISECONDS)) {
				return false;
			}
			this.owner.set(new Owner(Thread.currentThread()));
			return true;
		}

		/** Take the turn if it is free now, before any queued thread (as {@code ReentrantLock.tryLock()}). */
		boolean tryTake() {
			if (!this.permit.tryAcquire()) {
				return false;
			}
			this.owner.set(new Owner(Thread.currentThread()));
			return true;
		}

		/** One more hold of the current thread's turn. */
		void hold() {
			Owner current = this.owner.get();
			if (current != null && current.thread == Thread.currentThread()) {
				current.holds++;
			}
		}

		/** End one hold of the current thread's turn; the last one frees it. Nothing if it was taken away. */
		void release() {
			Owner current = this.owner.get();
			if (current == null || current.thread != Thread.currentThread()) {
				return;
			}
			if (--current.holds == 0 && this.owner.compareAndSet(current, null)) {
				this.permit.release();
			}
		}

		/**
		 * Take the turn away from its thread, if a thread has it.
		 * @return whether it was taken away
		 */
		boolean takeAway() {
			Owner current = this.owner.get();
			if (current == null || !this.owner.compareAndSet(current, null)) {
				return false;
			}
			this.permit.release();
			return true;
		}

		boolean isHeldByCurrentThread() {
			Owner current = this.owner.get();
			return current != null && current.thread == Thread.currentThread();
		}

		int getHoldCount() {
			Owner current = this.owner.get();
			return (current != null && current.thread == Thread.currentThread()) ? current.holds : 0;
		}

		boolean isLocked() {
			return this.permit.availablePermits() == 0;
		}

		boolean hasQueuedThreads() {
			return this.permit.hasQueuedThreads();
		}

		/** The thread whose turn it is, and its holds (written by that thread only). */
		private static final class Owner {

			final Thread thread;

			int holds = 1;

			Owner(Thread thread) {
				this.thread = thread;
			}

		}

	}

	/** How a grant came to the thread. */
	enum Kind {

		/** Through ZooKeeper: the first grant of a link. */
		ACQUIRED,

		/** Handed over from the previous turn, on its link. */
		HANDED_OVER,

		/** A further hold of the thread's own turn (re-entry, READ under WRITE). */
		NESTED

	}

	/** A lock znode this application holds for the key, ridden by consecutive turns. */
	static final class Link {

		final LockRecipe recipe;

		final LockRecipe.Grant grant;

		/** The thread that acquired the znode through the recipe. */
		final Thread acquirer = Thread.currentThread();

		final long grantedAt = System.nanoTime();

		final int maxGrants;

		final long maxTimeNanos;

		/** The session the znode belongs to (see {@link CuratorLockRegistry#sessionInstance}). */
		volatile long sessionInstance;

		/** The czxid of the znode, 0 until known. */
		volatile long czxid;

		/** Turns granted on this link so far (written by the thread whose turn it is). */
		volatile int grants = 1;

		/** Whether the children of the lock path are listed (at the first hand-off). */
		volatile boolean watching;

		/** Whether another participant queues behind the znode. */
		volatile boolean othersWaiting;

		/**
		 * Why the znode may no longer be ridden, when it was revoked or deleted under the chain
		 * (see {@link Revocations}); {@code null} while it may.
		 */
		volatile @Nullable String revokedReason;

		/**
		 * {@link System#nanoTime()} before the requests that granted the znode: the server heard
		 * from the session after it, so it cannot expire the session before it plus the session
		 * timeout.
		 */
		private final long requestedAt;

		/**
		 * How long after {@link #requestedAt} the link may be handed over: half the negotiated
		 * session timeout (0 if unknown: never).
		 */
		private final long safeNanos;

		Link(LockRecipe recipe, LockRecipe.Grant grant, LocalHandoff settings, long requestedAt,
				int sessionTimeoutMs) {
			this.recipe = recipe;
			this.grant = grant;
			this.maxGrants = settings.maxGrants();
			this.maxTimeNanos = settings.maxTime().toNanos();
			this.czxid = grant.czxid();
			// Known from the grant (EXCLUSIVE): no listing needed, and none is sent.
			this.othersWaiting = grant.othersQueuedAtGrant();
			this.watching = this.othersWaiting;
			this.requestedAt = requestedAt;
			this.safeNanos = TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs) / 2;
		}

		/**
		 * Whether the znode may be ridden by another grant: the client is connected in the session
		 * that created it, and, since a client learns of its session's expiry only from the server
		 * (after a long pause of the process, its threads run before its connection notices), the
		 * session was heard of by the server less than half a session timeout ago, so that it
		 * cannot have expired.
		 */
		boolean usable(CuratorFramework client) {
			return this.revokedReason == null && this.sessionInstance == CuratorLockRegistry.sessionInstance(client)
					&& client.getZookeeperClient().isConnected()
					&& System.nanoTime() - this.requestedAt < this.safeNanos;
		}

		/** Whether the link must end because another participant waits and a bound is reached. */
		boolean bounded() {
			return this.othersWaiting
					&& (this.grants >= this.maxGrants || System.nanoTime() - this.grantedAt >= this.maxTimeNanos);
		}

	}

	/** A grant on a link: its release ends one hold of the turn. */
	final class ChainGrant implements LockRecipe.Grant {

		private final Link link;

		private final Kind kind;

		private final int position;

		private final LockMode mode;

		ChainGrant(Link link, Kind kind, LockMode mode) {
			this.link = link;
			this.kind = kind;
			this.mode = mode;
			this.position = link.grants;
			if (mode == LockMode.WRITE) {
				LocalChain.this.writeHolds++;
			}
		}

		Kind kind() {
			return this.kind;
		}

		Link link() {
			return this.link;
		}

		/** Which grant of its link this is, 1 for the one made through ZooKeeper. */
		int position() {
			return this.position;
		}

		@Override
		public String nodePath() {
			return this.link.grant.nodePath();
		}

		@Override
		public long czxid() {
			return this.link.czxid;
		}

		@Override
		public void czxid(long czxid) {
			this.link.czxid = czxid;
		}

		@Override
		public void release() throws Exception {
			leave(this.mode);
		}

	}

}
