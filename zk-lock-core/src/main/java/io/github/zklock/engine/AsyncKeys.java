package io.github.zklock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockRequest;
import io.github.zklock.spi.LockTarget;

/**
 * The keys of a multi-lock acquired through the registry's asynchronous acquisition
 * ({@link io.github.zklock.spi.LockRegistry#submit}), with no thread waiting: one after the other in
 * canonical order, each with what is left of the one wait budget, all or nothing (a busy key or a
 * failure releases the keys taken so far, last first). The acquisition is the future its caller
 * gets, completing with the keys' grants or empty; cancelling it gives the wait up and
 * releases what was taken.
 *
 * <p>Each step runs in the completion of the one before (on the registry's thread): the registry's
 * submit and the release of its grants never block.
 */
final class AsyncKeys extends CompletableFuture<Optional<List<Held>>> {

	private final Function<LockTarget, @Nullable CompletableFuture<Optional<Held>>> submit;

	private final LockRequest request;

	private final List<String> keys;

	private final Duration waitTime;

	private final Duration lockAtMostFor;

	private final long deadline;

	/** The grants so far; touched by one step at a time. */
	private final List<Held> acquired = new ArrayList<>();

	private volatile @Nullable CompletableFuture<Optional<Held>> current;

	/** The key that was busy, once the acquisition ended empty. */
	private volatile @Nullable String busyKey;

	private AsyncKeys(Function<LockTarget, @Nullable CompletableFuture<Optional<Held>>> submit,
			LockRequest request, List<String> keys, Duration waitTime, Duration lockAtMostFor) {
		this.lockAtMostFor = lockAtMostFor;
		this.submit = submit;
		this.request = request;
		this.keys = List.copyOf(keys);
		this.waitTime = waitTime;
		this.deadline = System.nanoTime() + (timed() ? waitTime.toNanos() : 0);
	}

	/**
	 * Start acquiring the keys.
	 * @param submit the registry's asynchronous acquisition of one key (observed, or not)
	 * @param keys the keys in canonical order, at least two
	 * @param waitTime the wait budget of all of them
	 * @param lockAtMostFor the ceiling of each key's grant, zero for none
	 * @return the acquisition, or {@code null} when the registry cannot acquire the first key so
	 */
	static @Nullable AsyncKeys start(Function<LockTarget, @Nullable CompletableFuture<Optional<Held>>> submit,
			LockRequest request, List<String> keys, Duration waitTime, Duration lockAtMostFor) {
		AsyncKeys acquisition = new AsyncKeys(submit, request, keys, waitTime, lockAtMostFor);
		CompletableFuture<Optional<Held>> first = submit.apply(acquisition.target(0));
		if (first == null) {
			return null;
		}
		acquisition.await(first, 0);
		return acquisition;
	}

	/** The key that was busy when the acquisition ended empty, else {@code null}. */
	@Nullable String busyKey() {
		return this.busyKey;
	}

	/** How many keys were taken (and released) before the busy one. */
	int acquiredBeforeBusy() {
		String busy = this.busyKey;
		return (busy != null) ? this.keys.indexOf(busy) : 0;
	}

	private boolean timed() {
		return !this.waitTime.isNegative() && !this.waitTime.isZero();
	}

	private LockTarget target(int index) {
		Duration remaining = timed() ? Duration.ofNanos(Math.max(0, this.deadline - System.nanoTime()))
				: this.waitTime;
		return new LockTarget(this.keys.get(index), this.request.mode(), this.request.reentrant(), 0, remaining,
				this.lockAtMostFor, this.request.keep());
	}

	private void await(CompletableFuture<Optional<Held>> pending, int index) {
		this.current = pending;
		pending.whenComplete((handle, ex) -> step(index, handle, ex));
		if (isDone()) {
			pending.cancel(false);
		}
	}

	private void step(int index, @Nullable Optional<Held> handle, @Nullable Throwable ex) {
		if (ex != null || handle == null) {
			Throwable cause = LockEngine.unwrap((ex != null) ? ex : new IllegalStateException("No outcome"));
			releaseAcquiredThen(() -> {
				if (!(cause instanceof CancellationException)) {
					completeExceptionally(cause);
				}
			});
			return;
		}
		if (handle.isEmpty()) {
			this.busyKey = this.keys.get(index);
			// Told once the keys taken before are free for others too, as a synchronous multi-lock is.
			releaseAcquiredThen(() -> complete(Optional.empty()));
			return;
		}
		this.acquired.add(handle.get());
		if (isDone()) {
			// Cancelled meanwhile.
			releaseAcquired();
			return;
		}
		if (index + 1 == this.keys.size()) {
			if (!complete(Optional.of(List.copyOf(this.acquired)))) {
				releaseAcquired();
			}
			return;
		}
		CompletableFuture<Optional<Held>> next = this.submit.apply(target(index + 1));
		if (next == null) {
			releaseAcquired();
			completeExceptionally(new IllegalStateException("The lock registry acquired key '" + this.keys.get(0)
					+ "' without a thread but not key '" + this.keys.get(index + 1) + "' of the same request"));
			return;
		}
		await(next, index + 1);
	}

	private void releaseAcquired() {
		LockEngine.releaseAll(this.acquired);
		this.acquired.clear();
	}

	/** Release the keys taken so far without a thread; run {@code then} once their deletes are answered. */
	private void releaseAcquiredThen(Runnable then) {
		List<Held> taken = List.copyOf(this.acquired);
		this.acquired.clear();
		LockEngine.releaseAllAsync(taken).whenComplete((ignored, ex) -> then.run());
	}

	/** Cancelling gives the wait up; the keys taken so far are released. */
	@Override
	public boolean cancel(boolean mayInterruptIfRunning) {
		boolean cancelled = super.cancel(mayInterruptIfRunning);
		CompletableFuture<Optional<Held>> pending = this.current;
		if (cancelled && pending != null) {
			pending.cancel(false);
		}
		return cancelled;
	}

}
