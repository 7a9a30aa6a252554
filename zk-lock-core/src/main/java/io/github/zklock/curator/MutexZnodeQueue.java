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
 * Non-blocking acquisition of a lock znode in the protocol of Curator's {@code InterProcessMutex}
 * (the lock recipe of the ZooKeeper recipes page), driven by Curator's background callbacks and
 * one watch, with no thread waiting: create an ephemeral sequential znode {@code lock-} below the
 * lock path (parents as containers, Curator's protected name so that a create cut by a connection
 * loss is found again rather than left behind, the process's {@link LockNodeData}); list the
 * children; granted when the znode sorts first (by its sequence, as Curator's
 * {@code StandardLockInternalsDriver} sorts), else watch the znode just before it (no herd
 * effect) and list again when that one goes. Raw {@code InterProcessMutex} code on the same path
 * and these acquisitions therefore queue in one FIFO order and exclude each other.
 *
 * <p>Requests per uncontended acquisition: create (create2, which returns the czxid, the fencing
 * token) and getChildren; the release is one delete, guaranteed (Curator retries it in the
 * background after a connection loss), that the caller need not wait for.
 *
 * <p>Giving up (the wait time ran out, or the returned future was cancelled) deletes the znode,
 * also when the create answers only afterwards. A failure of ZooKeeper (the session expired while
 * waiting, retries exhausted) fails the future with the {@link KeeperException} and deletes the
 * znode if there is one. This class is the building block of the non-blocking grant engine; it
 * keeps no state beyond each acquisition.
 */
final class MutexZnodeQueue {

	private static final Log logger = LogFactory.getLog(MutexZnodeQueue.class);

	/** The name of InterProcessMutex's znodes (its {@code LOCK_NAME}). */
	static final String LOCK_NAME = "lock-";

	private static final StandardLockInternalsDriver DRIVER = new StandardLockInternalsDriver();

	private final CuratorFramework client;

	private final ScheduledExecutorService timer;

	/**
	 * @param client a started Curator client
	 * @param timer ends the wait of acquisitions whose wait time runs out (one task per such
	 * acquisition, run once; never blocks)
	 */
	MutexZnodeQueue(CuratorFramework client, ScheduledExecutorService timer) {
		this.client = Objects.requireNonNull(client, "client must not be null");
		this.timer = Objects.requireNonNull(timer, "timer must not be null");
	}

	/**
	 * Queue for the lock of a path. Returns at once; sends the create in the background.
	 * @param lockPath the lock path (the znode whose children queue)
	 * @param waitMs milliseconds to wait; zero for one look at the queue; negative without limit
	 * @return completes with the granted znode on Curator's event thread, with {@code null} when
	 * not granted within the wait, or exceptionally with the {@link KeeperException} (or other
	 * failure) that ended the attempt; cancelling it gives the wait up
	 */
	CompletableFuture<@Nullable MutexZnode> acquire(String lockPath, long waitMs) {
		Acquisition acquisition = new Acquisition(lockPath);
		acquisition.start(waitMs);
		return acquisition.result;
	}

	/**
	 * A granted lock znode.
	 * @param nodePath the znode's full path
	 * @param czxid the zxid of its create: the fencing token; 0 when the create's answer did not
	 * carry it (Curator found the znode again after a connection loss)
	 * @param othersQueued whether other participants queued behind it in the listing that granted it
	 */
	record MutexZnode(String nodePath, long czxid, boolean othersQueued) {
	}

	/**
	 * Release a granted znode: a guaranteed delete in the background.
	 * @param znode the grant
	 * @return completes when ZooKeeper has deleted the znode (or it was gone); exceptionally when
	 * the delete failed for good (Curator keeps retrying a guaranteed delete after a connection
	 * loss until the session ends, which deletes the ephemeral znode anyway)
	 */
	CompletableFuture<Void> release(MutexZnode znode) {
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

		private final CompletableFuture<@Nullable MutexZnode> result = new CompletableFuture<>();

		private final Stat createStat = new Stat();

		/** The created znode, once the create answered. */
		private final AtomicReference<@Nullable String> ourPath = new AtomicReference<>();

		private volatile @Nullable ScheduledFuture<?> deadline;

		/** For a zero wait: give up after the first listing that does not grant. */
		private volatile boolean oneLook;

		Acquisition(String lockPath) {
			this.lockPath = lockPath;
		}

		void start(long waitMs) {
			this.oneLook = waitMs == 0;
			if (waitMs > 0) {
				this.deadline = MutexZnodeQueue.this.timer.schedule(() -> finish(null), waitMs, TimeUnit.MILLISECONDS);
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
				MutexZnodeQueue.this.client.create()
					.storingStatIn(this.createStat)
					.creatingParentContainersIfNeeded()
					.withProtection()
					.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
					.inBackground(this::created)
					.forPath(ZKPaths.makePath(this.lockPath, LOCK_NAME), LockNodeData.bytes());
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
				MutexZnodeQueue.this.client.getChildren().inBackground(this::listed).forPath(this.lockPath);
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
			List<String> children = LockInternals.getSortedChildren(LOCK_NAME, DRIVER, event.getChildren());
			PredicateResults predicate;
			try {
				predicate = DRIVER.getsTheLock(client, children, ZKPaths.getNodeFromPath(path), 1);
			}
			catch (Exception ex) {
				// Our znode is not among the children: gone with the session, or deleted by another client.
				fail(ex);
				return;
			}
			if (predicate.getsTheLock()) {
				finish(new MutexZnode(path, this.createStat.getCzxid(), children.size() > 1));
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

		private void finish(@Nullable MutexZnode znode) {
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
