package io.github.zklock.curator;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.utils.ZKPaths;
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
 * <li>{@link Kind#MUTEX}, {@link Kind#READ_WRITE}: create (ephemeral sequential, protected name),
 * getChildren, delete;</li>
 * <li>{@link Kind#SINGLE_LEASE}: the internal mutex's three, then create, getChildren and delete of
 * the lease znode.</li>
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
		READ_WRITE;

		static Kind of(LockMode mode, boolean reentrant) {
			return switch (mode) {
				case EXCLUSIVE -> reentrant ? MUTEX : SINGLE_LEASE;
				case READ, WRITE -> READ_WRITE;
			};
		}

		/** Whether grants of this kind must be released by the acquiring thread. */
		boolean threadBound() {
			return this != SINGLE_LEASE;
		}

	}

	/** A granted lock: its znode and how to give it back. */
	interface Grant {

		String nodePath();

		void release() throws Exception;

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

	static LockRecipe create(CuratorFramework client, String path, Kind kind) {
		return switch (kind) {
			case MUTEX -> new Mutex(client, path);
			case SINGLE_LEASE -> new SingleLease(client, path);
			case READ_WRITE -> new ReadWrite(client, path);
		};
	}

	/** Reentrant EXCLUSIVE lock: Curator {@code InterProcessMutex}. */
	static final class Mutex extends LockRecipe {

		private final OwnedPathMutex mutex;

		Mutex(CuratorFramework client, String path) {
			this.mutex = new OwnedPathMutex(client, path);
		}

		@Override
		@Nullable Grant acquire(LockMode mode, long waitMs) throws Exception {
			if (!acquireMutex(this.mutex, waitMs)) {
				return null;
			}
			String nodePath = this.mutex.ownedNodePath();
			return new MutexGrant(this.mutex, nodePath);
		}

	}

	/**
	 * Non-reentrant EXCLUSIVE lock: a Curator {@code InterProcessSemaphoreV2} with one lease, which
	 * is what {@code InterProcessSemaphoreMutex} wraps; used directly to keep each grant's
	 * {@link Lease} (its znode gives the fencing token, and it can be returned from any thread).
	 */
	static final class SingleLease extends LockRecipe {

		/** Child of the lock path holding the lease znodes (Curator's name). */
		static final String LEASES = "leases";

		/** Child of the lock path holding the semaphore's internal mutex (Curator's name). */
		static final String LOCKS = "locks";

		private final String path;

		private final String leasesPath;

		private final InterProcessSemaphoreV2 semaphore;

		private volatile @Nullable Thread holder;

		SingleLease(CuratorFramework client, String path) {
			this.path = path;
			this.leasesPath = ZKPaths.makePath(path, LEASES);
			this.semaphore = new InterProcessSemaphoreV2(client, path, 1);
		}

		@Override
		void check(LockMode mode, long waitMs) {
			if (waitMs < 0 && this.holder == Thread.currentThread()) {
				// The lease this thread holds can only be returned by this thread's caller: waiting
				// would never end.
				throw new LockAcquisitionException(this.path, mode, Duration.ZERO,
						"already held by this thread and not reentrant; waiting without limit would never end");
			}
		}

		@Override
		@Nullable Grant acquire(LockMode mode, long waitMs) throws Exception {
			Lease lease = (waitMs < 0) ? this.semaphore.acquire()
					: this.semaphore.acquire(waitMs, TimeUnit.MILLISECONDS);
			if (lease == null) {
				return null;
			}
			this.holder = Thread.currentThread();
			String nodePath = ZKPaths.makePath(this.leasesPath, lease.getNodeName());
			return new Grant() {

				@Override
				public String nodePath() {
					return nodePath;
				}

				@Override
				public void release() throws Exception {
					SingleLease.this.holder = null;
					lease.close();
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
			this.lock = new InterProcessReadWriteLock(client, path);
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

	private record MutexGrant(InterProcessMutex mutex, String nodePath) implements Grant {

		@Override
		public void release() throws Exception {
			this.mutex.release();
		}

	}

	/** Exposes the znode the current thread owns, which {@code InterProcessMutex} keeps protected. */
	private static final class OwnedPathMutex extends InterProcessMutex {

		OwnedPathMutex(CuratorFramework client, String path) {
			super(client, path);
		}

		String ownedNodePath() {
			return getLockPath();
		}

	}

}
