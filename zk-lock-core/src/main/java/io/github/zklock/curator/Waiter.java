package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockMode;
import io.github.zklock.spi.RegistryGrant;

/**
 * One request for a grant of a key, waiting: the future its asynchronous caller gets, or that the
 * synchronous caller's thread waits on. It completes once, with the grant, with empty when the
 * wait ended without one, or with the failure; {@link #cancel(boolean)} gives the wait up.
 *
 * <p>Who completes it: its {@link LockKey}, which decides under its monitor and completes after;
 * a synchronous caller whose wait ends first takes the grant it was given meanwhile (see
 * {@link LockKey#giveUp(Waiter)}).
 */
final class Waiter extends java.util.concurrent.CompletableFuture<Optional<RegistryGrant>> {

	/** The thread of a synchronous request, {@code null} for an asynchronous one. */
	final @Nullable Thread caller;

	final LockMode mode;

	final Protocol protocol;

	/** The semaphore's number of permits (1 for a non-reentrant lock), 0 for the other protocols. */
	final int leases;

	/** Whether to make one attempt: a key held or queued for here is busy without a request. */
	final boolean oneAttempt;

	/** Whether to wait without limit. */
	final boolean forever;

	/**
	 * Whether a znode created for it may be kept after its last local grant ends ({@link KeptLocks});
	 * set before it is queued, only for the exclusive protocols.
	 */
	boolean keep;

	/** The ceiling of the grant, zero for none. */
	final Duration lockAtMostFor;

	/** Since when it waits, for the operators' view. */
	final Instant since = Instant.now();

	/** Where it waits, once queued; {@code null} before. */
	volatile @Nullable LockKey key;

	/** The end of an asynchronous wait, cancelled once the waiter completes. */
	volatile @Nullable Future<?> deadline;

	/**
	 * Whether the lock was seen held by someone else while it waited (a local holder, or ZooKeeper's
	 * answer); only ever set. A wait that ends without it is not reported busy (see
	 * {@link LockKey#giveUp(Waiter)}).
	 */
	volatile boolean sawHeld;

	/** Its wait time as the registry bounds it, in nanoseconds; 0 when not known. Set before it is queued. */
	volatile long waitNanos;

	/** How many turns its line had granted when it queued there (guarded by the key). */
	long turnsAtQueue;

	/**
	 * Once its wait was given up: completes when the deletes of what it sent are answered (see
	 * {@link LockKey#giveUp(Waiter)}); {@code null} before.
	 */
	volatile @Nullable CompletableFuture<Void> givenUp;

	Waiter(@Nullable Thread caller, LockMode mode, Protocol protocol, int leases, boolean oneAttempt, boolean forever,
			Duration lockAtMostFor) {
		this.caller = caller;
		this.mode = mode;
		this.protocol = protocol;
		this.leases = leases;
		this.oneAttempt = oneAttempt;
		this.forever = forever;
		this.lockAtMostFor = lockAtMostFor;
	}

	@Override
	public boolean complete(Optional<RegistryGrant> value) {
		boolean completed = super.complete(value);
		endDeadline();
		return completed;
	}

	@Override
	public boolean completeExceptionally(Throwable ex) {
		boolean completed = super.completeExceptionally(ex);
		endDeadline();
		return completed;
	}

	/** Cancelling gives the wait up; a grant made meanwhile is released by whoever made it. */
	@Override
	public boolean cancel(boolean mayInterruptIfRunning) {
		boolean cancelled = super.cancel(mayInterruptIfRunning);
		if (cancelled) {
			endDeadline();
			LockKey queued = this.key;
			if (queued != null) {
				queued.giveUp(this);
			}
		}
		return cancelled;
	}

	/**
	 * The thread the grant is bound to: the caller of a synchronous request of a reentrant kind
	 * (see {@link io.github.zklock.LockRequest} on thread binding); {@code null} for a lease and for
	 * an asynchronous request, which any thread may release.
	 */
	@Nullable Thread boundThread() {
		return (this.protocol == Protocol.LEASE) ? null : this.caller;
	}

	/** Who waits, for the operators' view: the thread's name, or {@code async}. */
	String waiterName() {
		Thread owner = this.caller;
		return (owner != null) ? owner.getName() : "async";
	}

	private void endDeadline() {
		Future<?> timeout = this.deadline;
		if (timeout != null) {
			timeout.cancel(false);
		}
	}

}
