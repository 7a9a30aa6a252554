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
 * comes before it, watching the first writer's that does.</li>
 * </ul>
 *
 * <p>Requests per uncontended acquisition: create (create2, which returns the czxid, the fencing
 * token) and getChildren; the release is one delete, guaranteed (Curator retries it in the
 * background after a connection loss), that the caller need not wait for.
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
		READ(Protocol.READ_NAME);

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
		Acquisition acquisition = new Acquisition(lockPath, protocol);
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

	/** One acquisition; its steps run on Curator's event thread, one at a time. */
	private final class Acquisition implements Watcher {

		private final String lockPath;

		private final Protocol protocol;

		private final CompletableFuture<@Nullable LockZnode> result = new CompletableFuture<>();

		private final Stat createStat = new Stat();

		/** The created znode, once the create answered. */
		private final AtomicReference<@Nullable String> ourPath = new AtomicReference<>();

		private volatile @Nullable ScheduledFuture<?> deadline;

		/** For a zero wait: give up after the first listing that does not grant. */
		private volatile boolean oneLook;

		Acquisition(String lockPath, Protocol protocol) {
			this.lockPath = lockPath;
			this.protocol = protocol;
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
			});
			try {
				ZnodeQueue.this.client.create()
					.storingStatIn(this.createStat)
					.creatingParentContainersIfNeeded()
					.withProtection()
					.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
					.inBackground(this::created)
					.forPath(ZKPaths.makePath(this.lockPath, this.protocol.lockName()), LockNodeData.bytes());
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
			list();
		}

		private void list() {
			try {
				ZnodeQueue.this.client.getChildren().inBackground(this::listed).forPath(this.lockPath);
			}
			catch (Exception ex) {
				fail(ex);
			}
		}

		private void listed(CuratorFramework client, CuratorEvent event) {
			if (this.result.isDone()) {
				return;
			}
			if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
				fail(KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath()));
				return;
			}
			String path = Objects.requireNonNull(this.ourPath.get());
			List<String> children = this.protocol.sorted(event.getChildren());
			PredicateResults predicate;
			try {
				predicate = this.protocol.getsTheLock(client, children, ZKPaths.getNodeFromPath(path));
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
				client.getData()
					.usingWatcher(this)
					.inBackground(this::watched)
					.forPath(ZKPaths.makePath(this.lockPath, predicate.getPathToWatch()));
			}
			catch (Exception ex) {
				fail(ex);
			}
		}

		private void watched(CuratorFramework client, CuratorEvent event) {
			if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
				// The predecessor went before the watch was set: look again.
				list();
			}
			else if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
				fail(KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath()));
			}
		}

		/**
		 * The watched predecessor changed (deleted, usually): look at the queue again. The session
		 * expired: the znode went with it, the wait fails.
		 */
		@Override
		public void process(WatchedEvent event) {
			if (this.result.isDone()) {
				return;
			}
			if (event.getType() != Event.EventType.None) {
				list();
			}
			else if (event.getState() == Event.KeeperState.Expired) {
				fail(KeeperException.create(KeeperException.Code.SESSIONEXPIRED, this.lockPath));
			}
		}

		private void finish(@Nullable LockZnode znode) {
			if (!this.result.complete(znode) && znode != null) {
				// Given up just as it was granted: release it.
				release(znode);
			}
		}

		private void fail(Throwable ex) {
			this.result.completeExceptionally(ex);
		}

		/** Delete the znode of an acquisition that did not end in a grant, once it is known. */
		private void dropZnode() {
			String path = this.ourPath.getAndSet(null);
			if (path != null) {
				delete(path).whenComplete((ignored, ex) -> {
					if (ex != null) {
						logger.warn("Failed to delete lock znode " + path + " of an abandoned acquisition; ZooKeeper "
								+ "deletes it when the session ends", ex);
					}
				});
			}
		}

	}

}
