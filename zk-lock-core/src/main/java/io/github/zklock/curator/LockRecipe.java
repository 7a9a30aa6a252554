package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLBackgroundPathAndBytesable;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.LockInternalsDriver;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockUpgradeException;
import io.github.zklock.LockMode;

/**
 * One Curator lock recipe instance for one lock path, used by one thread at a time (see
 * {@link RecipeCache}). A thread keeps its instance for all its nested grants of the path: Curator
 * tracks reentrancy per recipe instance, so two instances for the same path in one thread would
 * wait for each other.
 *
 * <p>Requests per uncontended cycle (parent znode present), as sent by the Curator recipes:
 * <ul>
 * <li>{@link Kind#MUTEX}, {@link Kind#READ_WRITE}: create (ephemeral sequential, protected name;
 * for MUTEX a create2, which returns the znode's czxid), getChildren, delete;</li>
 * <li>{@link Kind#SINGLE_LEASE}, {@link Kind#SEMAPHORE}: the internal mutex's three, then create,
 * getChildren (with a watch) and delete of the lease znode, and the removeWatches Curator sends
 * for the watch left unused: seven.</li>
 * </ul>
 */
abstract sealed class LockRecipe {

	/** Which Curator recipe backs a lock. */
	enum Kind {

		/** {@code InterProcessMutex}: reentrant EXCLUSIVE. */
		MUTEX,

		/** {@code InterProcessSemaphoreV2} with one lease: non-reentrant EXCLUSIVE. */
		SINGLE_LEASE,

		/** {@code InterProcessReadWriteLock}: READ and WRITE on one path. */
		READ_WRITE,

		/**
		 * {@code InterProcessSemaphoreV2} with the request's number of leases: a permit of a
		 * semaphore. The same znodes as {@link #SINGLE_LEASE}, which is a semaphore of one permit.
		 */
		SEMAPHORE;

		static Kind of(LockMode mode, boolean reentrant, int permits) {
			if (permits > 0) {
				return SEMAPHORE;
			}
			return switch (mode) {
				case EXCLUSIVE -> reentrant ? MUTEX : SINGLE_LEASE;
				case READ, WRITE -> READ_WRITE;
			};
		}

		/**
		 * Whether the recipe is reentrant: it tracks its owner thread, which alone may release
		 * (see {@link io.github.zklock.LockRequest} on thread binding).
		 */
		boolean reentrant() {
			return this == MUTEX || this == READ_WRITE;
		}

		/**
		 * Whether a request of this kind and mode excludes every other holder in this application,
		 * so that it queues in the local queue (see {@link RecipeCache}): not READ, not a permit.
		 */
		boolean exclusive(LockMode mode) {
			return this != SEMAPHORE && mode != LockMode.READ;
		}

	}

	/** A granted lock: its znode and how to give it back. */
	interface Grant {

		String nodePath();

		void release() throws Exception;

		/** The czxid of the znode (its fencing token) if known without a request, else 0. */
		default long czxid() {
			return 0;
		}

		/** Remember the czxid once read, for grants that share the znode. */
		default void czxid(long czxid) {
		}

		/**
		 * Whether other participants were queued behind the znode when it was granted, as the
		 * recipe saw in its last listing of the queue; {@code false} when not known.
		 */
		default boolean othersQueuedAtGrant() {
			return false;
		}

	}

	/**
	 * Refuse at once a request of the current thread that could never be granted: a READ holder
	 * asking for WRITE, a non-reentrant holder waiting without limit for its own lock. Sends no
	 * request.
	 * @param mode the requested mode
	 * @param waitMs milliseconds to wait; negative to wait without limit
	 * @throws LockUpgradeException for a READ holder asking for WRITE
	 * @throws LockAcquisitionException for a non-reentrant holder waiting without limit
	 */
	void check(LockMode mode, long waitMs) {
	}

	/**
	 * Acquire the lock, after {@link #check(LockMode, long)}.
	 * @param mode the requested mode (EXCLUSIVE, or READ/WRITE for {@link Kind#READ_WRITE})
	 * @param waitMs milliseconds to wait; zero for one attempt; negative to wait without limit
	 * @return the grant, or {@code null} when not granted within the wait time
	 */
	abstract @Nullable Grant acquire(LockMode mode, long waitMs) throws Exception;

	/**
	 * Create the recipe of a lock path. Sends no request.
	 * @param permits the number of leases of a {@link Kind#SEMAPHORE}; ignored for the other kinds
	 */
	static LockRecipe create(CuratorFramework client, String path, Kind kind, int permits) {
		return switch (kind) {
			case MUTEX -> new Mutex(client, path);
			case SINGLE_LEASE -> new Leases(client, path, 1);
			case SEMAPHORE -> new Leases(client, path, permits);
			case READ_WRITE -> new ReadWrite(client, path);
		};
	}

	/**
	 * Reentrant EXCLUSIVE lock: Curator {@code InterProcessMutex}, whose lock znode is created with
	 * ZooKeeper's create2, which returns the new znode's {@link Stat}: the fencing token (its
	 * czxid) comes with the create, at no extra request.
	 */
	static final class Mutex extends LockRecipe {

		private final StatKeepingDriver driver = new StatKeepingDriver();

		private final OwnedPathMutex mutex;

		Mutex(CuratorFramework client, String path) {
			this.mutex = new OwnedPathMutex(client, path, this.driver);
		}

		@Override
		@Nullable Grant acquire(LockMode mode, long waitMs) throws Exception {
			if (!acquireMutex(this.mutex, waitMs)) {
				return null;
			}
			String nodePath = this.mutex.ownedNodePath();
			return new MutexGrant(this.mutex, nodePath, this.driver.czxidOf(nodePath), this.driver.othersQueued());
		}

	}

	/**
	 * Curator's standard lock driver, creating the lock znode as it does (parents as containers,
	 * protected name, ephemeral sequential, the process's {@link LockNodeData}) but keeping the created
	 * znode's {@link Stat}, and whether the listing of the queue that granted the lock showed
	 * others behind it (for {@link LocalChain}'s bounds, at no request). Used by one thread at a
	 * time, like its recipe instance.
	 */
	static final class StatKeepingDriver extends StandardLockInternalsDriver {

		private volatile @Nullable String createdPath;

		private volatile long createdCzxid;

		private volatile boolean othersQueued;

		@Override
		public PredicateResults getsTheLock(CuratorFramework client, List<String> children, String sequenceNodeName,
				int maxLeases) throws Exception {
			PredicateResults results = super.getsTheLock(client, children, sequenceNodeName, maxLeases);
			if (results.getsTheLock()) {
				// Granted means first in the queue: every other child queues behind.
				this.othersQueued = children.size() > 1;
			}
			return results;
		}

		/** Whether the listing that granted the lock last showed other participants queued. */
		boolean othersQueued() {
			return this.othersQueued;
		}

		@Override
		public String createsTheLock(CuratorFramework client, String path, byte[] lockNodeBytes) throws Exception {
			Stat stat = new Stat();
			ACLBackgroundPathAndBytesable<String> create = client.create()
				.storingStatIn(stat)
				.creatingParentContainersIfNeeded()
				.withProtection()
				.withMode(CreateMode.EPHEMERAL_SEQUENTIAL);
			String created = (lockNodeBytes != null) ? create.forPath(path, lockNodeBytes) : create.forPath(path);
			// Zero when Curator found the znode again after a connection loss (protected name)
			// instead of creating it: the token is then read when asked for.
			this.createdCzxid = stat.getCzxid();
			this.createdPath = created;
			return created;
		}

		/** The czxid of the znode if this driver created it last, else 0. */
		long czxidOf(String nodePath) {
			String created = this.createdPath;
			return (created != null && created.equals(nodePath)) ? this.createdCzxid : 0;
		}

	}

	/**
	 * Leases of a Curator {@code InterProcessSemaphoreV2}: with one lease the non-reentrant
	 * EXCLUSIVE lock (what {@code InterProcessSemaphoreMutex} wraps), with more a semaphore's
	 * permits. Used directly to keep each grant's {@link Lease}: its znode gives the fencing token,
	 * and it can be returned from any thread.
	 */
	static final class Leases extends LockRecipe {

		/** Child of the lock path holding the lease znodes (Curator's name). */
		static final String LEASES = "leases";

		/** Child of the lock path holding the semaphore's internal mutex (Curator's name). */
		static final String LOCKS = "locks";

		private final String path;

		private final String leasesPath;

		private final int maxLeases;

		private final InterProcessSemaphoreV2 semaphore;

		private final CuratorFramework client;

		/**
		 * Leases taken through this instance and not yet returned. An instance serves one thread
		 * at a time while any of its leases is held (see {@link RecipeCache}), so these are that
		 * thread's leases.
		 */
		private final AtomicInteger held = new AtomicInteger();

		Leases(CuratorFramework client, String path, int maxLeases) {
			this.client = client;
			this.path = path;
			this.leasesPath = ZKPaths.makePath(path, LEASES);
			this.maxLeases = maxLeases;
			this.semaphore = new InterProcessSemaphoreV2(client, path, maxLeases);
			this.semaphore.setNodeData(LockNodeData.bytes());
		}

		@Override
		void check(LockMode mode, long waitMs) {
			if (waitMs < 0 && this.held.get() >= this.maxLeases) {
				// The leases this thread holds can only be returned by this thread's caller: waiting
				// would never end.
				throw new LockAcquisitionException(this.path, mode, Duration.ZERO, (this.maxLeases == 1)
						? "already held by this thread and not reentrant; waiting without limit would never end"
						: "this thread holds all " + this.maxLeases
								+ " permits of the semaphore; waiting without limit would never end");
			}
		}

		@Override
		@Nullable Grant acquire(LockMode mode, long waitMs) throws Exception {
			Lease lease = (waitMs < 0) ? this.semaphore.acquire()
					: this.semaphore.acquire(waitMs, TimeUnit.MILLISECONDS);
			if (lease == null) {
				return null;
			}
			this.held.incrementAndGet();
			String nodePath = ZKPaths.makePath(this.leasesPath, lease.getNodeName());
			// Released once: the handle's state guards it.
			return new Grant() {

				@Override
				public String nodePath() {
					return nodePath;
				}

				/**
				 * The request {@code Lease.close()} sends (a guaranteed delete of the lease znode),
				 * quietly: a lease whose znode a revocation or its ceiling deleted is released
				 * already, which Curator would log as a warning with a stack trace.
				 */
				@Override
				public void release() throws Exception {
					Leases.this.held.decrementAndGet();
					Leases.this.client.delete().quietly().guaranteed().forPath(nodePath);
				}

			};
		}

	}

	/** READ and WRITE on one path: the two sides of one Curator {@code InterProcessReadWriteLock}. */
	static final class ReadWrite extends LockRecipe {

		private final String path;

		private final InterProcessReadWriteLock lock;

		ReadWrite(CuratorFramework client, String path) {
			this.path = path;
			this.lock = new InterProcessReadWriteLock(client, path, LockNodeData.bytes());
		}

		@Override
		void check(LockMode mode, long waitMs) {
			if (mode == LockMode.WRITE && this.lock.readLock().isOwnedByCurrentThread()
					&& !this.lock.writeLock().isOwnedByCurrentThread()) {
				throw new LockUpgradeException(this.path);
			}
		}

		@Override
		@Nullable Grant acquire(LockMode mode, long waitMs) throws Exception {
			if (mode == LockMode.WRITE) {
				InterProcessReadWriteLock.WriteLock write = this.lock.writeLock();
				return acquireMutex(write, waitMs) ? new MutexGrant(write, write.getLockPath()) : null;
			}
			InterProcessReadWriteLock.ReadLock read = this.lock.readLock();
			return acquireMutex(read, waitMs) ? new MutexGrant(read, read.getLockPath()) : null;
		}

	}

	private static boolean acquireMutex(InterProcessMutex mutex, long waitMs) throws Exception {
		if (waitMs < 0) {
			mutex.acquire();
			return true;
		}
		return mutex.acquire(waitMs, TimeUnit.MILLISECONDS);
	}

	private record MutexGrant(InterProcessMutex mutex, String nodePath, long czxid,
			boolean othersQueuedAtGrant) implements Grant {

		MutexGrant(InterProcessMutex mutex, String nodePath) {
			this(mutex, nodePath, 0, false);
		}

		@Override
		public void release() throws Exception {
			this.mutex.release();
		}

	}

	/** Exposes the znode the current thread owns, which {@code InterProcessMutex} keeps protected. */
	private static final class OwnedPathMutex extends InterProcessMutex {

		OwnedPathMutex(CuratorFramework client, String path, LockInternalsDriver driver) {
			super(client, path, driver);
		}

		String ownedNodePath() {
			return getLockPath();
		}

		@Override
		protected byte[] getLockNodeBytes() {
			return LockNodeData.bytes();
		}

	}

}
