package io.github.zklock.curator;

import java.util.List;

import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;

import io.github.zklock.LockMode;

/**
 * The znode protocol of a Curator lock recipe, which a {@link ZnodeAcquisition} follows so that
 * raw Curator code on the same path and this library's grants queue in one order and exclude each
 * other (the lock recipe and the shared lock recipe of the ZooKeeper recipes page):
 * <ul>
 * <li>{@link #MUTEX}: {@code InterProcessMutex}'s {@code lock-} znodes, granted when first by
 * sequence (as {@code StandardLockInternalsDriver} sorts them), watching the one just before;</li>
 * <li>{@link #WRITE}: the write side of {@code InterProcessReadWriteLock} ({@code __WRIT__}),
 * granted when first among readers and writers, watching the one just before;</li>
 * <li>{@link #READ}: its read side ({@code __READ__}), granted when no writer's znode comes
 * before it, watching the first writer's that does;</li>
 * <li>{@link #LEASE}: a lease of {@code InterProcessSemaphoreV2}: its internal mutex
 * ({@code lock-} znodes below {@code locks}, as {@link #MUTEX}) first, then a {@code lease-} znode
 * below {@code leases}, granted while the leases number at most the semaphore's (the recipe
 * watches the children of {@code leases} meanwhile, keeping the internal mutex).</li>
 * </ul>
 */
enum Protocol {

	/** {@code InterProcessMutex}: reentrant EXCLUSIVE. */
	MUTEX("lock-"),

	/** The write side of {@code InterProcessReadWriteLock}. */
	WRITE(Protocol.WRITE_NAME),

	/** The read side of {@code InterProcessReadWriteLock}. */
	READ(Protocol.READ_NAME),

	/** A lease of {@code InterProcessSemaphoreV2}: non-reentrant EXCLUSIVE (one lease) and permits. */
	LEASE("lease-");

	/** Child of a semaphore's path holding the lease znodes (Curator's name). */
	static final String LEASES = "leases";

	/** Child of a semaphore's path holding its internal mutex (Curator's name). */
	static final String LOCKS = "locks";

	/**
	 * Put before the lock name in the name of a znode that may be kept ({@link KeptLocks}):
	 * {@code _c_<guid>-keep-lock-0000000042}. Curator's recipes order znodes by what follows the
	 * lock name, so the mark changes nothing for them; a participant that makes one attempt reads
	 * it as "may be given up if asked".
	 */
	static final String KEEP_MARK = "keep-";

	private static final String READ_NAME = "__READ__";

	private static final String WRITE_NAME = "__WRIT__";

	private static final StandardLockInternalsDriver DRIVER = new StandardLockInternalsDriver();

	/** Sorts a read/write lock's children by their sequence, whichever side they are of. */
	private static final LockInternalsSorter READ_WRITE_SORTER = (name, lockName) -> StandardLockInternalsDriver
		.standardFixForSorting(StandardLockInternalsDriver.standardFixForSorting(name, READ_NAME), WRITE_NAME);

	private final String lockName;

	Protocol(String lockName) {
		this.lockName = lockName;
	}

	/**
	 * The protocol of a request.
	 * @param mode the mode
	 * @param reentrant whether the request is reentrant (a non-reentrant EXCLUSIVE lock is a lease)
	 * @param permits the number of permits, 0 for a lock
	 */
	static Protocol of(LockMode mode, boolean reentrant, int permits) {
		if (permits > 0 || !reentrant) {
			return LEASE;
		}
		return switch (mode) {
			case EXCLUSIVE -> MUTEX;
			case READ -> READ;
			case WRITE -> WRITE;
		};
	}

	/**
	 * Whether a znode of a lock's queue may be kept by its application: its name carries
	 * {@link #KEEP_MARK} after the protected create's GUID.
	 * @param name the znode's name
	 */
	static boolean mayBeKept(String name) {
		return name.contains("-" + KEEP_MARK);
	}

	/**
	 * How many of a lock path's children are lock znodes, the participants of its queue: the
	 * container of its condition's waiters ({@link ConditionQueues}) is left out.
	 * @param children the children's names
	 */
	static int participants(List<String> children) {
		int participants = 0;
		for (String child : children) {
			if (!ConditionQueues.isQueue(child)) {
				participants++;
			}
		}
		return participants;
	}

	/** The name the sequence number follows in the znode's name. */
	String lockName() {
		return this.lockName;
	}

	/**
	 * Where the znodes of a lock path queue: the path itself, or a semaphore's {@code leases}.
	 * @param lockPath the lock path
	 */
	String queuePath(String lockPath) {
		return (this == LEASE) ? lockPath + "/" + LEASES : lockPath;
	}

	/**
	 * The name of the znode to watch for a znode that is not granted, or {@code null} when it is
	 * granted (for {@link #LEASE}: when the leases, ours among them, number at most
	 * {@code maxLeases}; the children watch of the listing is the one to wait on otherwise).
	 * @param children the children of the queue path, unsorted, ours among them
	 * @param ourName the name of our znode
	 * @param maxLeases the semaphore's number of leases (for {@link #LEASE})
	 * @return the name to watch, {@code null} if granted, or {@link #LEASES} for a lease that waits
	 * for the children of the leases to change
	 */
	String predecessor(List<String> children, String ourName, int maxLeases) {
		if (this == LEASE) {
			return (children.size() <= maxLeases) ? null : LEASES;
		}
		// The order of Curator's LockInternals.getSortedChildren (a stable sort by each name's part
		// after the lock name, as the recipe's sorter cuts it), found in one pass instead of a sort:
		// a listing of n names costs n cuts, not n log n comparisons of two cuts each, which a queue
		// of n requests of one application paid n times (its listing with each create).
		int ourIndex = children.indexOf(ourName);
		String ourKey = sortKey(ourName);
		String found = null;
		String foundKey = null;
		for (int i = 0; i < children.size(); i++) {
			String child = children.get(i);
			String key = sortKey(child);
			int order = key.compareTo(ourKey);
			if (order > 0 || (order == 0 && i >= ourIndex)) {
				// Sorted after ours (or ours itself).
				continue;
			}
			if (this != READ) {
				// The one just before ours: the last of those before it (the later listed of equal ones).
				if (found == null || key.compareTo(foundKey) >= 0) {
					found = child;
					foundKey = key;
				}
			}
			else if (child.contains(WRITE_NAME) && (found == null || key.compareTo(foundKey) < 0)) {
				// The first writer before ours (the earlier listed of equal ones).
				found = child;
				foundKey = key;
			}
		}
		return found;
	}

	/**
	 * Whether a child comes first in the queue, before every other (in Curator's order): the one
	 * granted, or about to be.
	 * @param children the children of the queue path
	 * @param name one of them
	 */
	boolean first(List<String> children, String name) {
		String key = sortKey(name);
		for (String child : children) {
			if (!child.equals(name) && sortKey(child).compareTo(key) < 0) {
				return false;
			}
		}
		return true;
	}

	/** What Curator's sorter compares a child by: its name after the lock name (see {@link #predecessor}). */
	private String sortKey(String child) {
		return (this == MUTEX) ? DRIVER.fixForSorting(child, this.lockName) : READ_WRITE_SORTER.fixForSorting(child, this.lockName);
	}

}
