package io.github.zklock.curator;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Non-blocking acquisition of a lock znode in the protocols of Curator's lock recipes (the lock
 * recipe and the shared lock recipe of the ZooKeeper recipes page), driven by Curator's background
 * callbacks and one watch, with no thread waiting: create an ephemeral sequential znode below the
 * lock path (parents as containers, Curator's protected name so that a create cut by a connection
 * loss is found again rather than left behind, the process's {@link LockNodeData}); list the
 * children; granted when the {@link Protocol} says so for the listing, else watch the one znode it
 * names (no herd effect) and list again when that one changes. Raw Curator code on the same path
 * and these acquisitions therefore queue in one FIFO order and exclude each other:
 * <ul>
 * <li>{@link Protocol#MUTEX}: {@code InterProcessMutex}'s {@code lock-} znodes, granted when first
 * by sequence (as {@code StandardLockInternalsDriver} sorts), watching the one just before;</li>
 * <li>{@link Protocol#WRITE}: the write side of {@code InterProcessReadWriteLock}
 * ({@code __WRIT__} znodes), granted when first among readers and writers, watching the one just
 * before;</li>
 * <li>{@link Protocol#READ}: its read side ({@code __READ__}), granted when no writer's znode
 * comes before it, watching the first writer's that does;</li>
 * <li>{@link Protocol#LEASE}: a lease of {@code InterProcessSemaphoreV2} ({@link #acquireLease}):
 * its internal mutex ({@code lock-} znodes below {@code locks}, as {@link Protocol#MUTEX}) first,
 * then a {@code lease-} znode below {@code leases}, granted when the leases number at most the
 * semaphore's; otherwise the children of {@code leases} are watched while the internal mutex is
 * kept, so that only the first waiter of all participants watches them. The internal mutex is
 * released once the lease is granted or given up, as the recipe does.</li>
 * </ul>
 *
 * <p>Requests per uncontended acquisition: create (create2, which returns the czxid, the fencing
 * token) and getChildren, sent back to back without waiting for the create's answer (ZooKeeper
 * serves a session's requests in order, so the listing sees the new znode; the first create of a
 * key, whose parents are still missing, is listed again once created); a lease adds the internal
 * mutex's create, getChildren and delete before it. The release is one delete, guaranteed (Curator
 * retries it in the background after a connection loss), that the caller need not wait for.
 *
 * <p>Giving up (the wait time ran out, or the returned future was cancelled) deletes the znode,
 * also when the create answers only afterwards. A failure of ZooKeeper (the session expired while
 * waiting, retries exhausted) fails the future with the {@link KeeperException} and deletes the
 * znode if there is one. Keeps no state beyond each acquisition.
 */
final class ZnodeQueue {

	private static final Log logger = LogFactory.getLog(ZnodeQueue.class);

	/** The znode protocol of a Curator lock recipe. */
	enum Protocol {

		/** {@code InterProcessMutex}. */
		MUTEX("lock-"),

		/** The write side of {@code InterProcessReadWriteLock}. */
		WRITE(Protocol.WRITE_NAME),

		/** The read side of {@code InterProcessReadWriteLock}. */
		READ(Protocol.READ_NAME),

		/**
		 * A lease of {@code InterProcessSemaphoreV2} (below its {@code leases} child): granted by
		 * counting the leases, not by order (see {@link ZnodeQueue#acquireLease}).
		 */
		LEASE("lease-");

		private static final String READ_NAME = "__READ__";

		private static final String WRITE_NAME = "__WRIT__";

		/** Sorts a read/write lock's children by their sequence, whichever side they are of. */
		private static final LockInternalsSorter READ_WRITE_SORTER = (name, lockName) -> StandardLockInternalsDriver
			.standardFixForSorting(StandardLockInternalsDriver.standardFixForSorting(name, READ_NAME), WRITE_NAME);

		private final String lockName;

		Protocol(String lockName) {
			this.lockName = lockName;
		}

		/** The name the sequence number follows in the znode's name. */
		String lockName() {
			return this.lockName;
		}

		List<String> sorted(List<String> children) {
			return LockInternals.getSortedChildren(this.lockName, (this == MUTEX) ? DRIVER : READ_WRITE_SORTER,
					children);
		}

		/**
		 * Whether the znode gets the lock in the sorted listing, and otherwise which znode to watch.
		 * @throws KeeperException.NoNodeException if the znode is not in the listing
		 */
		PredicateResults getsTheLock(CuratorFramework client, List<String> sorted, String ourName) throws Exception {
			if (this != READ) {
				// First of all, one lease: the write side's rule too, readers counted.
				return DRIVER.getsTheLock(client, sorted, ourName, 1);
			}
			int firstWrite = Integer.MAX_VALUE;
			int ours = -1;
			for (int i = 0; i < sorted.size(); i++) {
				String node = sorted.get(i);
				if (node.contains(WRITE_NAME)) {
					firstWrite = Math.min(firstWrite, i);
				}
				else if (node.startsWith(ourName)) {
					ours = i;
					break;
				}
			}
			if (ours < 0) {
				throw new KeeperException.NoNodeException("Sequential path not found: " + ourName);
			}
			return (ours < firstWrite) ? new PredicateResults(null, true)
					: new PredicateResults(sorted.get(firstWrite), false);
		}

	}

	private static final StandardLockInternalsDriver DRIVER = new StandardLockInternalsDriver();

	private final CuratorFramework client;

	private final ScheduledExecutorService timer;

	/**
	 * @param client a started Curator client
	 * @param timer ends the wait of acquisitions whose wait time runs out (one task per such
	 * acquisition, run once; never blocks)
	 */
	ZnodeQueue(CuratorFramework client, ScheduledExecutorService timer) {
		this.client = Objects.requireNonNull(client, "client must not be null");
		this.timer = Objects.requireNonNull(timer, "timer must not be null");
	}

	/**
	 * Queue for a lock of a path in the given protocol. Returns at once; sends the create in the
	 * background.
	 * @param lockPath the lock path (the znode whose children queue)
	 * @param protocol which recipe's znodes, and which side of a read/write lock
	 * @param waitMs milliseconds to wait; zero for one look at the queue; negative without limit
	 * @return completes with the granted znode on Curator's event thread, with {@code null} when
	 * not granted within the wait, or exceptionally with the {@link KeeperException} (or other
	 * failure) that ended the attempt; cancelling it gives the wait up
	 */
	CompletableFuture<@Nullable LockZnode> acquire(String lockPath, Protocol protocol, long waitMs) {
		if (protocol == Protocol.LEASE) {
			throw new IllegalArgumentException("A lease is acquired with acquireLease");
		}
		Acquisition acquisition = new Acquisition(lockPath, protocol, 1);
		acquisition.start(waitMs);
		return acquisition.result;
	}

	/**
	 * Queue for a lease of a semaphore in {@code InterProcessSemaphoreV2}'s protocol: its internal
	 * mutex, then a lease znode. Returns at once; sends the first create in the background.
	 * @param semaphorePath the semaphore's znode (parent of {@code locks} and {@code leases})
	 * @param maxLeases how many leases the semaphore has, at least 1
	 * @param waitMs milliseconds to wait, for the internal mutex and the lease together; zero for one
	 * look at each; negative without limit
	 * @return as {@link #acquire}: the granted lease znode, {@code null}, or the failure
	 */
	CompletableFuture<@Nullable LockZnode> acquireLease(String semaphorePath, int maxLeases, long waitMs) {
		if (maxLeases < 1) {
			throw new IllegalArgumentException("maxLeases must be at least 1, was " + maxLeases);
		}
		Acquisition acquisition = new Acquisition(semaphorePath, Protocol.LEASE, maxLeases);
		acquisition.start(waitMs);
		return acquisition.result;
	}

	/**
	 * A granted lock znode.
	 * @param nodePath the znode's full path
	 * @param czxid the zxid of its create: the fencing token; 0 when the create's answer did not
	 * carry it (Curator found the znode again after a connection loss)
	 */
	record LockZnode(String nodePath, long czxid) {
	}

	/**
	 * Release a granted znode: a guaranteed delete in the background.
	 * @param znode the grant
	 * @return completes when ZooKeeper has deleted the znode (or it was gone); exceptionally when
	 * the delete failed for good (Curator keeps retrying a guaranteed delete after a connection
	 * loss until the session ends, which deletes the ephemeral znode anyway)
	 */
	CompletableFuture<Void> release(LockZnode znode) {
		return delete(znode.nodePath());
	}

	private CompletableFuture<Void> delete(String nodePath) {
		CompletableFuture<Void> deleted = new CompletableFuture<>();
		try {
			this.client.delete().guaranteed().inBackground((client, event) -> {
				int code = event.getResultCode();
				if (code == KeeperException.Code.OK.intValue() || code == KeeperException.Code.NONODE.intValue()) {
					deleted.complete(null);
				}
				else {
					deleted.completeExceptionally(KeeperException.create(KeeperException.Code.get(code), nodePath));
				}
			}).forPath(nodePath);
		}
		catch (Exception ex) {
			deleted.completeExceptionally(ex);
		}
		return deleted;
	}

	/**
	 * One acquisition; its steps run on Curator's event thread, one at a time, except the ending
	 * ({@link #finish}, {@link #fail}, a cancellation), which any thread may do once.
	 */
	private final class Acquisition implements Watcher {

		/** The lock path, or for a lease the semaphore's path. */
		private final String lockPath;

		private final Protocol protocol;

		/** Where the znode is created and listed: the lock path, or the semaphore's leases. */
		private final String queuePath;

		private final int maxLeases;

		private final CompletableFuture<@Nullable LockZnode> result = new CompletableFuture<>();

		private final Stat createStat = new Stat();

		/** The created znode, once the create answered. */
		private final AtomicReference<@Nullable String> ourPath = new AtomicReference<>();

		/** A lease's internal mutex: its acquisition, then its znode while held. */
		private final AtomicReference<@Nullable CompletableFuture<@Nullable LockZnode>> internalMutex = new AtomicReference<>();

		private volatile @Nullable ScheduledFuture<?> deadline;

		/** For a zero wait: give up after the first listing that does not grant. */
		private volatile boolean oneLook;

		/**
		 * The listing sent with the create: {@code true} until it answered. Read and written on
		 * the event thread only (guarded by this acquisition).
		 */
		private boolean firstListingPending;

		/**
		 * Whether {@link #finish} or {@link #fail} has begun to end the acquisition (guarded by this
		 * acquisition): the first to begin ends it, so that a wait given up never deletes a znode
		 * that another thread is handing out as granted.
		 */
		private boolean ending;

		Acquisition(String lockPath, Protocol protocol, int maxLeases) {
			this.lockPath = lockPath;
			this.protocol = protocol;
			this.queuePath = (protocol == Protocol.LEASE) ? ZKPaths.makePath(lockPath, LockRecipe.Leases.LEASES)
					: lockPath;
			this.maxLeases = maxLeases;
		}

		void start(long waitMs) {
			this.oneLook = waitMs == 0;
			if (waitMs > 0) {
				this.deadline = ZnodeQueue.this.timer.schedule(() -> finish(null), waitMs, TimeUnit.MILLISECONDS);
			}
			// Given up by the caller (cancelled) or the deadline: drop the znode.
			this.result.whenComplete((znode, ex) -> {
				ScheduledFuture<?> timeout = this.deadline;
				if (timeout != null) {
					timeout.cancel(false);
				}
				if (znode == null) {
					dropZnode();
				}
				releaseInternalMutex();
			});
			if (this.protocol != Protocol.LEASE) {
				create();
				return;
			}
			// The semaphore's internal mutex first; the deadline above bounds both waits.
			CompletableFuture<@Nullable LockZnode> mutex = acquire(ZKPaths.makePath(this.lockPath,
					LockRecipe.Leases.LOCKS), Protocol.MUTEX, this.oneLook ? 0 : -1);
			this.internalMutex.set(mutex);
			if (this.result.isDone()) {
				releaseInternalMutex();
				return;
			}
			mutex.whenComplete((granted, ex) -> {
				if (ex != null) {
					fail(ex);
				}
				else if (granted == null) {
					finish(null);
				}
				else if (!this.result.isDone()) {
					create();
				}
			});
		}

		/** Create the znode and, without waiting for the answer, list the queue. */
		private void create() {
			try {
				synchronized (this) {
					this.firstListingPending = true;
				}
				ZnodeQueue.this.client.create()
					.storingStatIn(this.createStat)
					.creatingParentContainersIfNeeded()
					.withProtection()
					.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
					.inBackground(this::created)
					.forPath(ZKPaths.makePath(this.queuePath, this.protocol.lockName()), LockNodeData.bytes());
				list(true);
			}
			catch (Exception ex) {
				fail(ex);
			}
		}

		private void created(CuratorFramework client, CuratorEvent event) {
			if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
				fail(KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath()));
				return;
			}
			this.ourPath.set(event.getName());
			if (this.result.isDone()) {
				// Given up while the create was on its way.
				dropZnode();
				return;
			}
			boolean listAgain;
			synchronized (this) {
				// The first listing answered before the znode existed (its parents were created
				// first, or the create was retried): list again. Else that listing answers next.
				listAgain = !this.firstListingPending;
			}
			if (listAgain) {
				list(false);
			}
		}

		private void list(boolean first) {
			try {
				if (this.protocol == Protocol.LEASE) {
					// The recipe watches the leases' children, while it keeps the internal mutex.
					ZnodeQueue.this.client.getChildren()
						.usingWatcher(this)
						.inBackground((client, event) -> listed(event, first))
						.forPath(this.queuePath);
				}
				else {
					ZnodeQueue.this.client.getChildren()
						.inBackground((client, event) -> listed(event, first))
						.forPath(this.queuePath);
				}
			}
			catch (Exception ex) {
				fail(ex);
			}
		}

		private void listed(CuratorEvent event, boolean first) {
			String path;
			synchronized (this) {
				path = this.ourPath.get();
				if (first) {
					this.firstListingPending = false;
				}
			}
			if (this.result.isDone() || path == null) {
				// Not created yet (its parents first, or a retry): the create's answer lists again.
				return;
			}
			boolean ok = event.getResultCode() == KeeperException.Code.OK.intValue();
			if (first && (!ok || !event.getChildren().contains(ZKPaths.getNodeFromPath(path)))) {
				// Sent before the znode existed: look again.
				list(false);
				return;
			}
			if (!ok) {
				fail(KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath()));
				return;
			}
			String ourName = ZKPaths.getNodeFromPath(path);
			if (this.protocol == Protocol.LEASE) {
				leasesListed(event.getChildren(), path, ourName);
				return;
			}
			List<String> children = this.protocol.sorted(event.getChildren());
			PredicateResults predicate;
			try {
				predicate = this.protocol.getsTheLock(ZnodeQueue.this.client, children, ourName);
			}
			catch (Exception ex) {
				// Our znode is not among the children: gone with the session, or deleted by another client.
				fail(ex);
				return;
			}
			if (predicate.getsTheLock()) {
				finish(new LockZnode(path, this.createStat.getCzxid()));
				return;
			}
			if (this.oneLook) {
				finish(null);
				return;
			}
			try {
				ZnodeQueue.this.client.getData()
					.usingWatcher(this)
					.inBackground(this::watched)
					.forPath(ZKPaths.makePath(this.lockPath, predicate.getPathToWatch()));
			}
			catch (Exception ex) {
				fail(ex);
			}
		}

		/** The recipe's rule: granted while the leases (ours among them) number at most the maximum. */
		private void leasesListed(List<String> children, String path, String ourName) {
			if (!children.contains(ourName)) {
				fail(new KeeperException.NoNodeException("Sequential path not found: " + path));
			}
			else if (children.size() <= this.maxLeases) {
				finish(new LockZnode(path, this.createStat.getCzxid()));
			}
			else if (this.oneLook) {
				finish(null);
			}
			// Else the listing's watch tells when a lease comes or goes.
		}

		private void watched(CuratorFramework client, CuratorEvent event) {
			if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
				// The predecessor went before the watch was set: look again.
				list(false);
			}
			else if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
				fail(KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath()));
			}
		}

		/**
		 * The watched predecessor changed (deleted, usually), or a lease came or went: look at the
		 * queue again. The session expired: the znode went with it, the wait fails.
		 */
		@Override
		public void process(WatchedEvent event) {
			if (this.result.isDone()) {
				return;
			}
			if (event.getType() != Event.EventType.None) {
				list(false);
			}
			else if (event.getState() == Event.KeeperState.Expired) {
				fail(KeeperException.create(KeeperException.Code.SESSIONEXPIRED, this.lockPath));
			}
		}

		private void finish(@Nullable LockZnode znode) {
			if (!beginEnding()) {
				if (znode != null) {
					// Given up just as it was granted: release it.
					release(znode);
				}
				return;
			}
			if (znode == null) {
				letGo();
			}
			if (!this.result.complete(znode) && znode != null) {
				// Cancelled by the caller just as it was granted: release it.
				release(znode);
			}
		}

		private void fail(Throwable ex) {
			if (beginEnding()) {
				letGo();
				this.result.completeExceptionally(ex);
			}
		}

		private synchronized boolean beginEnding() {
			if (this.ending) {
				return false;
			}
			this.ending = true;
			return true;
		}

		/**
		 * Send the deletes of a wait that did not end in a grant before its result is completed:
		 * ZooKeeper serves a session's requests in order, so that the caller's next attempt, on
		 * the same session, never finds this znode in its listing. (A caller's cancellation lets go
		 * after the result is completed, in the handler of {@link #start}, which also catches a
		 * create answered meanwhile.)
		 */
		private void letGo() {
			dropZnode();
			releaseInternalMutex();
		}

		/** Delete the znode of an acquisition that did not end in a grant, once it is known. */
		private void dropZnode() {
			String path = this.ourPath.getAndSet(null);
			if (path != null) {
				deleteQuietly(path, "an abandoned acquisition");
			}
		}

		/**
		 * A lease's internal mutex is released once the lease was granted or given up: given up
		 * while it was still waited for, its acquisition deletes what it created.
		 */
		private void releaseInternalMutex() {
			CompletableFuture<@Nullable LockZnode> mutex = this.internalMutex.getAndSet(null);
			if (mutex == null) {
				return;
			}
			mutex.cancel(false);
			mutex.thenAccept((held) -> {
				if (held != null) {
					deleteQuietly(held.nodePath(), "a semaphore's internal mutex");
				}
			});
		}

		private void deleteQuietly(String path, String what) {
			delete(path).whenComplete((ignored, ex) -> {
				if (ex != null) {
					logger.warn("Failed to delete lock znode " + path + " of " + what + "; ZooKeeper deletes it "
							+ "when the session ends", ex);
				}
			});
		}

	}

}
