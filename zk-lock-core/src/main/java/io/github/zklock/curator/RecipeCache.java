package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockMode;

/**
 * Bounded map of lock recipes, keyed by the lock's key (as the caller gave it, below the root path),
 * {@link LockRecipe.Kind} and, for a semaphore, its number of permits. Each key holds one recipe instance per thread that waits on or holds the
 * lock at the moment (a {@link Slot}):
 * <ul>
 * <li>a thread that already uses a slot of the key gets the same slot again, so Curator's
 * per-instance bookkeeping of reentrancy, of READ under WRITE and of the refused upgrade works as
 * with a single shared instance, and two instances of one key never meet in one thread (they
 * would wait for each other);</li>
 * <li>another thread gets an idle slot, or a new one. Each waiting thread thus waits on a recipe
 * instance of its own: Curator's {@code LockInternals} wakes every thread waiting on an instance
 * ({@code notifyAll}) when the watched znode goes, so a shared instance would wake every waiting
 * thread of the application at each hand-over, to find only one of them granted (the herd effect
 * of the ZooKeeper lock recipe, between threads). With an instance per waiting thread only the
 * successor wakes: 5 requests per contended grant instead of about 2 per waiting thread.</li>
 * </ul>
 * With local hand-off on (see {@link LocalHandoff}), EXCLUSIVE (reentrant) and WRITE requests go
 * through the key's {@link LocalChain} instead: one thread of the application at a time queues in
 * ZooKeeper, the others take turns on its znode. Otherwise, and always for non-reentrant EXCLUSIVE,
 * exclusive requests (EXCLUSIVE, either kind, and WRITE) are admitted to ZooKeeper at most
 * {@value #QUEUE_DEPTH} threads at a time per key: the holder and its successor queue znodes, the
 * other threads of the application wait in a fair local queue (a {@link Semaphore}) and create
 * their znode when one of the two is done. The hand-over stays that of the recipe (the successor's
 * znode is already queued when the holder deletes its own), while the ZooKeeper queue, its
 * listings and its watches stay short. READ requests are not limited, since readers hold
 * together, nor are permits of a semaphore, whose waiters Curator already queues on the
 * semaphore's internal mutex. A thread admitted once is not admitted again for its nested
 * requests.
 *
 * <p>A slot is in use from the moment a thread starts acquiring through it until that grant is
 * released (or the attempt fails). Keys with a slot in use are never evicted; idle keys are
 * dropped once the map grows past its capacity. A dropped recipe holds no znode and no watcher, so
 * creating it again later is safe. Creating a recipe sends no request.
 *
 * <p>A key is validated once, when its entry is created; later acquisitions of a cached key only
 * look it up. Thread-safe: the slots of a key are guarded by the key's entry.
 */
final class RecipeCache {

	/**
	 * How many threads of the application may queue in ZooKeeper for one exclusive lock: the
	 * holder and its successor.
	 */
	static final int QUEUE_DEPTH = 2;

	/** Idle slots kept per key beyond the ones in use; more are dropped when they fall idle. */
	static final int IDLE_SLOTS_KEPT = 8;

	private final ConcurrentHashMap<Key, Entry> entries = new ConcurrentHashMap<>();

	private final int capacity;

	private final UnaryOperator<String> lockPath;

	private final BiFunction<String, Key, LockRecipe> factory;

	/**
	 * @param capacity how many keys to keep when idle
	 * @param lockPath validates a key and returns its lock path (the znode path); throws for an invalid
	 * one (called once per key, before the key is created)
	 * @param factory creates the recipe for a lock path and cache key (kind and permits)
	 */
	RecipeCache(int capacity, UnaryOperator<String> lockPath, BiFunction<String, Key, LockRecipe> factory) {
		if (capacity < 1) {
			throw new IllegalArgumentException("Recipe cache capacity must be positive, was " + capacity);
		}
		this.capacity = capacity;
		this.lockPath = lockPath;
		this.factory = factory;
	}

	/**
	 * Return the current thread's slot for a key and kind, creating it if needed, and mark
	 * it in use. Every call must be paired with one {@link #unretain(Slot)}.
	 * @param key the key below the root path
	 * @param kind the recipe kind
	 * @param permits the number of permits of a {@link LockRecipe.Kind#SEMAPHORE}, else 0
	 * @return the slot, in use
	 * @throws io.github.zklock.InvalidLockPathException if the key is not cached and not valid;
	 * nothing is then retained
	 */
	Slot retain(String key, LockRecipe.Kind kind, int permits) {
		Key entryKey = new Key(key, kind, permits);
		Thread thread = Thread.currentThread();
		while (true) {
			Entry entry = this.entries.get(entryKey);
			if (entry == null) {
				// Validate outside the map's bin lock; an invalid key creates nothing.
				String lockPath = this.lockPath.apply(key);
				entry = this.entries.computeIfAbsent(entryKey, (k) -> new Entry(k, lockPath, this.factory));
			}
			Slot slot = entry.claim(thread);
			if (slot != null) {
				return slot;
			}
			// The entry was evicted between the lookup and the claim: look again.
		}
	}

	/** Mark one use of the slot as finished; may evict idle keys when over capacity. */
	void unretain(Slot slot) {
		slot.entry.free(slot);
		if (this.entries.size() > this.capacity) {
			evictIdle();
		}
	}

	/** The number of entries (key and kind), in use or idle. */
	int size() {
		return this.entries.size();
	}

	/** The number of recipe instances, in use or idle, over all keys. */
	int recipeCount() {
		int count = 0;
		for (Entry entry : this.entries.values()) {
			count += entry.slotCount();
		}
		return count;
	}

	/** The threads waiting for a lock now, one record each. */
	List<WaitingLock> waiting() {
		List<WaitingLock> result = new ArrayList<>();
		for (Entry entry : this.entries.values()) {
			entry.collectWaiting(result);
		}
		return result;
	}

	/**
	 * Make the local chains that keep a znode hand no further grant on it: it was revoked or
	 * deleted by another client (see {@link Revocations}).
	 * @param node the znode's full path
	 * @param reason why, for the grants that ride it already
	 * @return whether a chain kept it
	 */
	boolean endChains(String node, String reason) {
		String lockPath = ZKPaths.getPathAndNode(node).getPath();
		boolean kept = false;
		for (Entry entry : this.entries.values()) {
			LocalChain chain = entry.existingChain();
			if (chain != null && entry.lockPath.equals(lockPath)) {
				kept |= chain.endLink(node, reason);
			}
		}
		return kept;
	}

	private void evictIdle() {
		// Go a little below capacity so that a busy cache does not sweep on every release.
		int target = this.capacity - Math.max(1, this.capacity / 10);
		for (Entry entry : this.entries.values()) {
			if (this.entries.size() <= target) {
				return;
			}
			entry.evictIfIdle(this.entries);
		}
	}

	/**
	 * What a recipe is cached by.
	 * @param key the key below the root path
	 * @param kind the recipe kind
	 * @param permits the number of permits of a {@link LockRecipe.Kind#SEMAPHORE}, else 0
	 */
	record Key(String key, LockRecipe.Kind kind, int permits) {
	}

	/** The slots of one key. Its monitor guards {@link #slots}, {@link #evicted} and every slot's owner and users. */
	static final class Entry {

		private final Key key;

		private final String lockPath;

		private final List<Slot> slots = new ArrayList<>(2);

		/** Admission of exclusive requests to the ZooKeeper queue; FIFO among the local threads. */
		private final Semaphore admission = new Semaphore(QUEUE_DEPTH, true);

		private boolean evicted;

		private final BiFunction<String, Key, LockRecipe> factory;

		/** The local hand-off of the key's exclusive lock, once used (MUTEX and READ_WRITE only). */
		private volatile @Nullable LocalChain chain;

		/**
		 * Watches the znode holding the key's number of permits after a check (see
		 * {@link SemaphorePermits}): its deletion (or the end of the session, which drops the watch)
		 * counts up {@link #permitsEpoch}, so that the next request checks again. A data change is
		 * a participant storing its number where none was (after which the check sets the watch
		 * again). One object per entry, so that repeated checks leave one watch.
		 */
		private final Watcher permitsWatcher = this::permitsChanged;

		/** How many times ZooKeeper told of a change of the znode holding the number of permits. */
		private final AtomicLong permitsEpoch = new AtomicLong();

		/** The {@link #permitsEpoch} in which the number matched, -1 if never. */
		private volatile long permitsCheckedEpoch = -1;

		Entry(Key key, String lockPath, BiFunction<String, Key, LockRecipe> factory) {
			this.key = key;
			this.lockPath = lockPath;
			this.factory = factory;
		}

		/**
		 * The key's local hand-off, created on first use; {@code null} for kinds without one
		 * (non-reentrant EXCLUSIVE, permits).
		 */
		@Nullable LocalChain chain(CuratorFramework client) {
			LocalChain existing = this.chain;
			if (existing != null) {
				return existing;
			}
			if (this.key.kind() != LockRecipe.Kind.MUTEX && this.key.kind() != LockRecipe.Kind.READ_WRITE) {
				return null;
			}
			synchronized (this) {
				if (this.chain == null) {
					this.chain = new LocalChain(client, this.lockPath,
							() -> this.factory.apply(this.lockPath, this.key));
				}
				return this.chain;
			}
		}

		/** The key's local hand-off if it was used, without creating it. */
		@Nullable LocalChain existingChain() {
			return this.chain;
		}

		/** The thread's slot, an idle one or a new one; {@code null} if this entry was evicted. */
		synchronized @Nullable Slot claim(Thread thread) {
			if (this.evicted) {
				return null;
			}
			Slot idle = null;
			for (Slot slot : this.slots) {
				if (slot.owner == thread) {
					slot.users++;
					return slot;
				}
				if (idle == null && slot.users == 0) {
					idle = slot;
				}
			}
			if (idle == null) {
				idle = new Slot(this);
				this.slots.add(idle);
			}
			idle.owner = thread;
			idle.users = 1;
			return idle;
		}

		void free(Slot slot) {
			boolean admitted;
			synchronized (this) {
				if (--slot.users > 0) {
					return;
				}
				slot.owner = null;
				admitted = slot.admitted;
				slot.admitted = false;
				if (this.slots.size() > IDLE_SLOTS_KEPT) {
					int idle = 0;
					for (Slot each : this.slots) {
						idle += (each.users == 0) ? 1 : 0;
					}
					if (idle > IDLE_SLOTS_KEPT) {
						this.slots.remove(slot);
					}
				}
			}
			if (admitted) {
				// After the grant's znode is deleted: the next local thread queues behind the
				// successor, not ahead of the release.
				this.admission.release();
			}
		}

		/**
		 * Admit the slot's thread to the ZooKeeper queue, waiting in the local queue if needed.
		 * @return whether admitted within the wait
		 */
		boolean admit(Slot slot, long waitMs) throws InterruptedException {
			synchronized (this) {
				if (slot.admitted) {
					return true;
				}
			}
			boolean admitted;
			if (waitMs < 0) {
				this.admission.acquire();
				admitted = true;
			}
			else {
				// The timed form, also for zero: it keeps the fair order, which tryAcquire() does not.
				admitted = this.admission.tryAcquire(waitMs, TimeUnit.MILLISECONDS);
			}
			if (admitted) {
				synchronized (this) {
					slot.admitted = true;
				}
			}
			return admitted;
		}

		synchronized void evictIfIdle(ConcurrentHashMap<Key, Entry> entries) {
			for (Slot slot : this.slots) {
				if (slot.users > 0) {
					return;
				}
			}
			if (this.chain != null && !this.chain.idle()) {
				// A znode kept for a hand-off: dropping the chain would leave it until the session ends.
				return;
			}
			// Marked first, so that a thread that found this entry before the removal claims
			// nothing from it and looks the key up again.
			this.evicted = true;
			entries.remove(this.key, this);
		}

		synchronized int slotCount() {
			return this.slots.size();
		}

		synchronized void collectWaiting(List<WaitingLock> result) {
			for (Slot slot : this.slots) {
				WaitingLock waiting = slot.waiting;
				if (waiting != null) {
					result.add(waiting);
				}
			}
		}

		LockRecipe.Kind kind() {
			return this.key.kind();
		}

		/** The semaphore's number of permits, 0 for a lock. */
		int permits() {
			return this.key.permits();
		}

		/** The znode path of the lock. */
		String lockPath() {
			return this.lockPath;
		}

		private void permitsChanged(WatchedEvent event) {
			if (event.getType() != Watcher.Event.EventType.NodeDataChanged) {
				this.permitsEpoch.incrementAndGet();
			}
		}

	}

	/**
	 * One recipe instance of a key, used by at most one thread at a time (its owner) while in use.
	 * A grant that may be released by another thread (a non-reentrant lease) frees its slot from
	 * that thread.
	 */
	static final class Slot {

		private final Entry entry;

		/** Created on first use: a key handed over locally acquires through its chain's recipes. */
		private volatile @Nullable LockRecipe recipe;

		private @Nullable Thread owner;

		private int users;

		/** Whether the slot holds an admission to the ZooKeeper queue, until its last use ends. */
		private boolean admitted;

		/** What the owner waits for now, if it waits; for the operators' view. */
		private volatile @Nullable WaitingLock waiting;

		/**
		 * The owner's first grant through this slot that is not released yet, which the owner's
		 * later grants of the key are nested in; only for thread-bound kinds (leases are each a
		 * znode of their own).
		 */
		private volatile @Nullable CuratorLockHandle outermost;

		Slot(Entry entry) {
			this.entry = entry;
		}

		/** The slot's recipe instance, used by its owner only; creating it sends no request. */
		LockRecipe recipe() {
			LockRecipe recipe = this.recipe;
			if (recipe == null) {
				recipe = this.entry.factory.apply(this.entry.lockPath, this.entry.key);
				this.recipe = recipe;
			}
			return recipe;
		}

		/**
		 * Refuse at once a request that could never be granted (see
		 * {@link LockRecipe#check(LockMode, long)}); a reentrant mutex refuses nothing.
		 */
		void check(LockMode mode, long waitMs) {
			if (kind() != LockRecipe.Kind.MUTEX) {
				recipe().check(mode, waitMs);
			}
		}

		/** The key's local hand-off; see {@link Entry#chain(CuratorFramework)}. */
		@Nullable LocalChain chain(CuratorFramework client) {
			return this.entry.chain(client);
		}

		/** The key's local hand-off if it was used. */
		@Nullable LocalChain existingChain() {
			return this.entry.existingChain();
		}

		LockRecipe.Kind kind() {
			return this.entry.kind();
		}

		/**
		 * Wait, if the request is exclusive (not READ, not a permit), until this thread may queue in ZooKeeper (see
		 * {@link RecipeCache}); at once if it was admitted before for an enclosing request.
		 * @param mode the requested mode
		 * @param waitMs milliseconds to wait; zero for no wait; negative to wait without limit
		 * @return whether admitted within the wait
		 * @throws InterruptedException if interrupted while waiting
		 */
		boolean admit(LockMode mode, long waitMs) throws InterruptedException {
			return !kind().exclusive(mode) || this.entry.admit(this, waitMs);
		}

		/** The semaphore's number of permits, 0 for a lock. */
		int permits() {
			return this.entry.permits();
		}

		/**
		 * Whether the key's stored number of permits was checked for this entry and ZooKeeper told of
		 * no change of its znode since.
		 */
		boolean permitsChecked() {
			return this.entry.permitsCheckedEpoch == this.entry.permitsEpoch.get();
		}

		/**
		 * Start a check of the key's stored number of permits.
		 * @return the epoch to pass to {@link #permitsChecked(long)} when the number matched
		 */
		long permitsCheckStarting() {
			return this.entry.permitsEpoch.get();
		}

		/** The watcher to leave on the znode holding the number while checking it. */
		Watcher permitsWatcher() {
			return this.entry.permitsWatcher;
		}

		/**
		 * Record that the key's stored number of permits matched this entry's. A change told since
		 * the check started leaves the entry unchecked.
		 * @param epoch what {@link #permitsCheckStarting()} returned
		 */
		void permitsChecked(long epoch) {
			this.entry.permitsCheckedEpoch = epoch;
		}

		/** The znode path of the lock. */
		String lockPath() {
			return this.entry.lockPath();
		}

		void waiting(@Nullable WaitingLock waiting) {
			this.waiting = waiting;
		}

		/** The owner's enclosing grant of the key, or {@code null} if it holds none (or for leases). */
		@Nullable CuratorLockHandle outermost() {
			return this.outermost;
		}

		/** Record a new grant that no other grant of the owner encloses. */
		void outermost(CuratorLockHandle handle) {
			if (kind().reentrant()) {
				this.outermost = handle;
			}
		}

		/** A grant through this slot was released. */
		void released(CuratorLockHandle handle) {
			if (this.outermost == handle) {
				this.outermost = null;
			}
		}

	}

}
