package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.spi.RegistryGrant;

/**
 * The registry's grants without Curator: the {@link LockKey} of each lock path in use, the grants
 * held ({@link HeldLocks}), the clock, the timer of ceilings and asynchronous waits, and the ending
 * of a held znode (revocation, ceiling, lost session). {@link CuratorLockRegistry} puts Curator
 * behind it ({@link CuratorZnodes}, the connection state, the revocation check); the concurrency
 * tests put an in-memory ZooKeeper.
 *
 * <p>Keys are kept while anything waits or is held on them, idle ones up to the capacity; creating
 * one sends no request.
 */
final class Grants {

	private static final Log logger = LogFactory.getLog(Grants.class);

	/**
	 * The shortest wait whose end without any answer of ZooKeeper's is taken as ZooKeeper being
	 * silent (a {@code LockException}) rather than as a wait shorter than a round trip (not
	 * granted): 100 ms.
	 */
	static final long SHORTEST_SILENCE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	/** What a caller is told of a failure, in the library's terms (never "busy"). */
	interface Failures {

		/** A failure of ZooKeeper (or the library's own, passed on as it is) while acquiring. */
		RuntimeException translate(Throwable failure, String lockPath, LockMode mode);

		/**
		 * A wait that ended without a grant and without an answer showing the lock held: the client
		 * was not connected, or ZooKeeper did not answer within the wait.
		 * @param connected whether the client was connected as the wait ended
		 */
		RuntimeException notAnswered(String lockPath, LockMode mode, boolean connected);

	}

	/** Reads the czxid of a znode whose create did not return it, for a fencing token; may block. */
	@FunctionalInterface
	interface CzxidReader {

		long read(String node, String lockPath, LockMode mode);

	}

	private final ConcurrentHashMap<String, LockKey> keys = new ConcurrentHashMap<>();

	private final int capacity;

	private final Znodes znodes;

	private final HeldLocks heldLocks;

	private final ScheduledExecutorService timer;

	private final LongSupplier clock;

	private final Failures failures;

	private final CzxidReader czxids;

	private volatile LocalHandoff handoff = LocalHandoff.DEFAULT;

	private final OwnZnodes ownZnodes = new OwnZnodes();

	private volatile KeptLocks keptLocks = KeptLocks.DISABLED;

	private final KeptKeys keptKeys;

	private final LongAdder ceilingEnds = new LongAdder();

	Grants(Znodes znodes, HeldLocks heldLocks, ScheduledExecutorService timer, LongSupplier clock, int capacity,
			Failures failures, CzxidReader czxids) {
		if (capacity < 1) {
			throw new IllegalArgumentException("Lock key cache capacity must be positive, was " + capacity);
		}
		this.znodes = znodes;
		this.heldLocks = heldLocks;
		this.timer = timer;
		this.clock = clock;
		this.capacity = capacity;
		this.failures = failures;
		this.czxids = czxids;
		this.keptKeys = new KeptKeys(this::schedule, clock, () -> this.keptLocks);
	}

	/**
	 * Queue a request on its lock path.
	 * @param lockPath the validated lock path
	 * @param waiter the request
	 */
	void submit(String lockPath, Waiter waiter) {
		while (!this.keys.computeIfAbsent(lockPath, (path) -> new LockKey(path, this)).enqueue(waiter)) {
			// Dropped between the look-up and the enqueue: its replacement is found next time.
			Thread.onSpinWait();
		}
	}

	/**
	 * Wait on the calling thread for a synchronous request's outcome, at most until the deadline,
	 * whether ZooKeeper answers meanwhile or not. A wait that ends without a grant leaves the queue
	 * (what it sent is deleted once answered). It is reported busy (empty) only when the lock was
	 * seen held while it waited and the client is connected; else it fails (see
	 * {@link #timedOut(LockKey.Withdrawal, Waiter, String)}).
	 * @param deadline in {@link #nanoTime()}; ignored for a request that waits without limit
	 * @return the grant, or empty when not granted in time while the lock was held
	 */
	Optional<RegistryGrant> await(Waiter waiter, String lockPath, long deadline) {
		try {
			return waiter.forever ? waiter.get() : waiter.get(Math.max(0, deadline - nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			LockKey.Withdrawal withdrawal = withdraw(waiter, lockPath);
			if (withdrawal == LockKey.Withdrawal.DECIDED) {
				// Granted, or failed, as the wait ended.
				return outcome(waiter, lockPath);
			}
			RuntimeException failure = timedOut(withdrawal, waiter, lockPath);
			if (failure != null) {
				throw failure;
			}
			// Busy: return once what the attempt sent is deleted, as Curator's recipes do before
			// they return false, so that no znode of it is found afterwards.
			CompletableFuture<Void> givenUp = waiter.givenUp;
			if (givenUp != null) {
				awaitDeletes(givenUp, deleteBound(waiter.waitNanos), () -> "Gave up " + waiter.mode + " lock '" + lockPath + "'");
			}
			return Optional.empty();
		}
		catch (InterruptedException ex) {
			if (withdraw(waiter, lockPath) == LockKey.Withdrawal.DECIDED) {
				outcome(waiter, lockPath).ifPresent(LockHandle::release);
			}
			Thread.currentThread().interrupt();
			throw new LockException("Could not acquire " + waiter.mode + " lock '" + lockPath
					+ "': interrupted while waiting", ex);
		}
		catch (ExecutionException ex) {
			throw this.failures.translate(ex.getCause(), lockPath, waiter.mode);
		}
	}

	/**
	 * End an asynchronous request's wait as a synchronous wait ends: a failure, or empty once the
	 * deletes of what it sent are answered (at most its wait time later, and at most the
	 * connection timeout).
	 */
	void timeOut(Waiter waiter, String lockPath) {
		LockKey.Withdrawal withdrawal = withdraw(waiter, lockPath);
		if (withdrawal == LockKey.Withdrawal.DECIDED) {
			return;
		}
		RuntimeException failure = timedOut(withdrawal, waiter, lockPath);
		CompletableFuture<Void> givenUp = waiter.givenUp;
		if (failure != null) {
			waiter.completeExceptionally(failure);
		}
		else if (givenUp == null || givenUp.isDone()) {
			waiter.complete(Optional.empty());
		}
		else {
			Future<?> bound = schedule(() -> waiter.complete(Optional.empty()), deleteBound(waiter.waitNanos));
			givenUp.whenComplete((ignored, ex) -> {
				waiter.complete(Optional.empty());
				if (bound != null) {
					bound.cancel(false);
				}
			});
		}
	}

	/**
	 * What a wait that ran out comes to, while the client is connected: not granted ({@code null})
	 * when the lock was seen held while it waited, or when the wait was shorter than
	 * {@link #SHORTEST_SILENCE_NANOS} (too short to tell a silent server from a round trip);
	 * else a failure, since the wait may have ended because ZooKeeper could not be reached (a
	 * server that stopped or a link that dropped its packets before the client noticed). Not
	 * connected: always a failure.
	 */
	private @Nullable RuntimeException timedOut(LockKey.Withdrawal withdrawal, Waiter waiter, String lockPath) {
		boolean connected = this.znodes.connected();
		if (connected && (withdrawal == LockKey.Withdrawal.BUSY || waiter.waitNanos < SHORTEST_SILENCE_NANOS)) {
			return null;
		}
		return this.failures.notAnswered(lockPath, waiter.mode, connected);
	}

	/** Take a request out of its queue as its wait ends; see {@link LockKey#giveUp(Waiter)}. */
	private LockKey.Withdrawal withdraw(Waiter waiter, String lockPath) {
		LockKey key = waiter.key;
		if (key != null) {
			return key.giveUp(waiter);
		}
		// Not queued yet (its permits are being checked, or the timer ran before it was queued):
		// nothing it sent was answered, so it ends as an unanswered wait does; it will not queue
		// once done.
		RuntimeException failure = timedOut(LockKey.Withdrawal.UNANSWERED, waiter, lockPath);
		boolean waiting = (failure != null) ? waiter.completeExceptionally(failure)
				: waiter.complete(Optional.empty());
		key = waiter.key;
		if (key != null) {
			key.giveUp(waiter);
		}
		return waiting ? LockKey.Withdrawal.UNANSWERED : LockKey.Withdrawal.DECIDED;
	}

	/** What a waiter that no longer waits was given: a grant, empty, or its failure thrown. */
	private Optional<RegistryGrant> outcome(Waiter waiter, String lockPath) {
		try {
			return waiter.join();
		}
		catch (CompletionException ex) {
			throw this.failures.translate(ex.getCause(), lockPath, waiter.mode);
		}
	}

	/**
	 * Track a new grant and give it to its waiter. A grant that was ended before it was handed out
	 * (revoked, its session lost, as it was made) is let go, and the waiter queues again: its wait
	 * goes on, as nobody held that grant. One ended just after it was handed out fails the wait with
	 * a {@link LockLostException}. A grant whose waiter is gone (cancelled) is released.
	 */
	void deliver(Waiter waiter, CuratorLockHandle handle) {
		if (!handle.handOut()) {
			handle.end();
			submit(handle.path(), waiter);
			return;
		}
		this.heldLocks.add(handle, this.znodes);
		if (handle.state() != io.github.zklock.LockState.HELD
				&& handle.state() != io.github.zklock.LockState.IN_DOUBT) {
			// Ended just after it was handed out, and told as a held grant is.
			String reason = handle.lostMessage();
			handle.end();
			waiter.completeExceptionally(new LockLostException(handle.path(), handle.mode(),
					"lost while it was granted (" + reason + ")"));
			return;
		}
		handle.startCeiling(waiter.lockAtMostFor);
		if (!waiter.complete(Optional.of(handle))) {
			handle.end();
		}
	}

	/**
	 * Wait for the delete a synchronous release sent, at most the client's connection timeout, and
	 * not at all while the client is not connected; log a delete that did not answer in time
	 * (Curator's guaranteed delete goes on).
	 */
	void awaitDelete(CompletableFuture<Void> deleted, CuratorLockHandle handle) {
		awaitDeletes(deleted, connectionTimeoutNanos(), () -> "Released " + handle);
	}

	/**
	 * How long a busy answer waits for the deletes of what its request sent: at most the request's
	 * wait time again, and at most the connection timeout, so that a link that goes silent as the
	 * wait ends holds the caller for at most twice its wait time.
	 * @param waitNanos the request's wait time, 0 when not known
	 */
	private long deleteBound(long waitNanos) {
		return (waitNanos > 0) ? Math.min(waitNanos, connectionTimeoutNanos()) : connectionTimeoutNanos();
	}

	private long connectionTimeoutNanos() {
		return TimeUnit.MILLISECONDS.toNanos(Math.max(1, this.znodes.connectionTimeoutMs()));
	}

	/**
	 * Wait for deletes sent, at most the given time and not at all while the client is not
	 * connected; log what did not answer in time.
	 * @param what what sent them, for the log, starting with a verb in the past
	 */
	private void awaitDeletes(CompletableFuture<Void> deleted, long boundNanos, Supplier<String> what) {
		if (deleted.isDone() || !this.znodes.connected()) {
			return;
		}
		try {
			deleted.get(boundNanos, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn(what.get() + " without an answer to the delete of its znode in time; Curator deletes it "
					+ "once reconnected (guaranteed delete), or ZooKeeper when the session ends");
		}
	}

	/** A grant was released: no longer tracked. */
	void untrack(CuratorLockHandle handle) {
		this.heldLocks.remove(handle);
	}

	/**
	 * End this application's hold on a znode: its grants become LOST (listeners told), a turn on it
	 * is taken away, and the znode is deleted. A revocation, or a grant's ceiling.
	 * @param node the znode's full path
	 * @param reason why
	 * @param signalWork whether to tell the work of grants owned by no thread ({@code whenLost()})
	 * even without interrupt-on-lost
	 * @return whether this application still held the znode
	 */
	boolean endZnode(String node, String reason, boolean signalWork) {
		LockKey key = this.keys.get(lockPathOf(node));
		return key != null && key.endZnode(node, reason, signalWork, null);
	}

	/**
	 * End a grant at its ceiling: as {@link #endZnode} does, if the grant still holds its znode (not
	 * released meanwhile, its turn not handed over).
	 * @param grant the grant
	 * @param reason why
	 */
	void endGrant(CuratorLockHandle grant, String reason) {
		if (grant.hold().key().endZnode(grant.nodePath(), reason, true, grant)) {
			this.ceilingEnds.increment();
		}
	}

	/** How many grants their ceiling ended so far ({@link #endGrant}). */
	long ceilingEndCount() {
		return this.ceilingEnds.sum();
	}

	/** The lock path a lock znode belongs to: its parent, or for a lease its semaphore's. */
	static String lockPathOf(String node) {
		String parent = node.substring(0, Math.max(1, node.lastIndexOf('/')));
		return parent.endsWith("/" + Protocol.LEASES) ? parent.substring(0, parent.length() - Protocol.LEASES.length() - 1)
				: parent;
	}

	/**
	 * Drop idle keys once more than the capacity are kept. Keys whose znode is kept are not idle,
	 * and do not count against the capacity (their number has a bound of its own).
	 */
	void maybeIdle(LockKey key) {
		if (this.keys.size() <= this.capacity + this.keptKeys.keptCount()) {
			return;
		}
		// Go a little below capacity so that a busy map does not sweep on every release.
		int target = this.capacity - Math.max(1, this.capacity / 10) + this.keptKeys.keptCount();
		if (key.dropIfIdle()) {
			this.keys.remove(key.lockPath(), key);
		}
		for (LockKey each : this.keys.values()) {
			if (this.keys.size() <= target) {
				return;
			}
			if (each.dropIfIdle()) {
				this.keys.remove(each.lockPath(), each);
			}
		}
	}

	/** The requests waiting, for the operators' view. */
	List<WaitingLock> waiting() {
		List<WaitingLock> waiting = new ArrayList<>();
		for (LockKey key : this.keys.values()) {
			waiting.addAll(key.waiting());
		}
		return waiting;
	}

	/** How many lock paths are kept, in use or idle. */
	int keyCount() {
		return this.keys.size();
	}

	/**
	 * Run a task after a delay, on the timer.
	 * @return the scheduled task, {@code null} once the timer is shut down
	 */
	@Nullable Future<?> schedule(Runnable task, long delayNanos) {
		try {
			return this.timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			return null;
		}
	}

	RuntimeException translate(Throwable failure, String lockPath, LockMode mode) {
		return this.failures.translate(failure, lockPath, mode);
	}

	long readCzxid(String node, String lockPath, LockMode mode) {
		return this.czxids.read(node, lockPath, mode);
	}

	Znodes znodes() {
		return this.znodes;
	}

	/** The lock znodes of this application's acquisitions, by path. */
	OwnZnodes ownZnodes() {
		return this.ownZnodes;
	}

	HeldLocks heldLocks() {
		return this.heldLocks;
	}

	long nanoTime() {
		return this.clock.getAsLong();
	}

	LocalHandoff handoff() {
		return this.handoff;
	}

	void handoff(LocalHandoff handoff) {
		this.handoff = handoff;
	}

	KeptLocks keptLocks() {
		return this.keptLocks;
	}

	void keptLocks(KeptLocks keptLocks) {
		this.keptLocks = keptLocks;
	}

	/** The kept lines and what kept locks counted. */
	KeptKeys keptKeys() {
		return this.keptKeys;
	}

	/**
	 * Give up every kept znode: the session was lost (the znodes went with it; the deletes sent find
	 * nothing), or the registry closes (nothing is kept afterwards).
	 * @param cause {@link KeptKeys.Cause#SESSION} or {@link KeptKeys.Cause#CLOSED}
	 * @return completes once the deletes sent are answered
	 */
	CompletableFuture<Void> giveUpKept(KeptKeys.Cause cause) {
		List<CompletableFuture<Void>> deletes = new ArrayList<>();
		this.keptKeys.drain(cause == KeptKeys.Cause.CLOSED).forEach((line, keptSince) -> {
			CompletableFuture<Void> deleted = line.giveUpKept(keptSince, cause);
			if (deleted != null) {
				deletes.add(deleted);
			}
		});
		return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
	}

	/** The znodes kept now, for the operators' view. */
	List<KeptLock> kept() {
		List<KeptLock> kept = new ArrayList<>();
		for (LockKey key : this.keys.values()) {
			key.collectKept(kept);
		}
		return kept;
	}

}
