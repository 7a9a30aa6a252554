package io.github.zklock.curator;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
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
 * <p>The threads of the application take <em>turns</em> on the key through a fair (FIFO)
 * {@link ReentrantLock}. The thread whose turn it is owns, for the application, the key's lock
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
 * <p>Thread-safe. {@link #link} and {@link #spare} are written only by the thread whose turn it
 * is.
 */
final class LocalChain {

	private static final Log logger = LogFactory.getLog(LocalChain.class);

	private final ReentrantLock turn = new ReentrantLock(true);

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
	 * Hand no further grant on the kept znode if it is {@code node}: it was revoked, or deleted by
	 * another client (see {@link Revocations}). The next turn queues in ZooKeeper again.
	 * @param node the znode's full path
	 * @param reason why, for the grants that already ride it
	 * @return whether this chain keeps that znode
	 */
	boolean endLink(String node, String reason) {
		Link current = this.link;
		if (current == null || !current.grant.nodePath().equals(node)) {
			return false;
		}
		current.revokedReason = reason;
		return true;
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
			this.turn.lock();
			return new ChainGrant(current, Kind.NESTED, mode);
		}
		long start = System.nanoTime();
		boolean turnTaken;
		try {
			turnTaken = (waitMs < 0) ? lockInterruptibly() : this.turn.tryLock(waitMs, TimeUnit.MILLISECONDS);
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
				if (current.usable(this.client)) {
					current.grants++;
					granted = true;
					return new ChainGrant(current, Kind.HANDED_OVER, mode);
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
			this.link = fresh;
			granted = true;
			return new ChainGrant(fresh, Kind.ACQUIRED, mode);
		}
		finally {
			if (!granted) {
				this.turn.unlock();
				settle();
			}
		}
	}

	private boolean lockInterruptibly() throws InterruptedException {
		this.turn.lockInterruptibly();
		return true;
	}

	/**
	 * End one hold of the current thread's turn. At the end of the turn, keep the link for the
	 * next local thread, or release its znode.
	 */
	private void leave(LockMode mode) throws Exception {
		if (mode == LockMode.WRITE) {
			this.writeHolds--;
		}
		Link current = this.link;
		if (this.turn.getHoldCount() > 1 || current == null) {
			this.turn.unlock();
			return;
		}
		boolean handOver = false;
		try {
			handOver = this.turn.hasQueuedThreads() && current.usable(this.client) && !current.bounded();
			if (handOver) {
				if (!current.watching) {
					current.watching = true;
					listChildren(current);
				}
			}
			else {
				this.link = null;
				end(current);
			}
		}
		finally {
			this.turn.unlock();
		}
		if (handOver && !this.turn.hasQueuedThreads()) {
			// The waiter left (its wait ended) between the check and the unlock.
			settle();
		}
	}

	/**
	 * Release the kept link if nobody has or waits for a turn. Called by whoever may have left the
	 * link without a next turn: a thread whose wait for a turn ended, and a turn that kept the
	 * link for a waiter that left since; one of them sees the other's change.
	 */
	private void settle() {
		if (this.link == null || !this.turn.tryLock()) {
			return;
		}
		try {
			Link current = this.link;
			if (current != null && !this.turn.hasQueuedThreads()) {
				this.link = null;
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
			this.turn.unlock();
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
