package io.github.zklock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * The handle of one grant of the template: the registry's grant of each key (one, or a
 * multi-lock's in canonical order), with what the request added to it: the hold observations, and
 * the time it is kept at least ({@code lockAtLeastFor}). One object whatever the options, so that
 * nothing needs to be unwrapped: the options are its fields.
 *
 * <p>Releasing it releases the keys last first: at once, or, before {@code lockAtLeastFor} has
 * passed since the grant, later on the scheduler thread of {@link KeptLockHandle}. A grant whose
 * keys are bound to the acquiring thread is released by that thread; the others from any thread,
 * {@link #releaseAsync()} without waiting for ZooKeeper.
 */
final class Grant implements AsyncLockHandle {

	private static final Log logger = LogFactory.getLog(Grant.class);

	/** Each key's grant and the observation of its hold, in canonical order. */
	private final List<Held> keys;

	private final LockMode mode;

	/** When the grant was made, in {@link System#nanoTime()}, and how long it is kept at least. */
	private final long grantedAt = System.nanoTime();

	private final Duration lockAtLeastFor;

	/** The thread the grant is bound to (a reentrant synchronous request), {@code null} if none. */
	private final @Nullable Thread owner;

	/** Set by the first release: its outcome, answered to every later {@link #releaseAsync()}. */
	private final AtomicReference<@Nullable CompletableFuture<Void>> released = new AtomicReference<>();

	private volatile @Nullable CompletionStage<Void> lost;

	/**
	 * @param keys each key's grant, in canonical order
	 * @param lockAtLeastFor how long from now the grant is kept at least, zero for not at all
	 * @param threadBound whether the grant is bound to the calling thread, which made it
	 */
	Grant(List<Held> keys, LockMode mode, Duration lockAtLeastFor, boolean threadBound) {
		this.keys = List.copyOf(keys);
		this.mode = mode;
		this.lockAtLeastFor = lockAtLeastFor;
		this.owner = threadBound ? Thread.currentThread() : null;
	}

	@Override
	public String path() {
		return this.keys.get(0).key().path();
	}

	@Override
	public LockMode mode() {
		return this.mode;
	}

	/** The keys' grants of a multi-lock, in canonical order; this handle alone for one key. */
	@Override
	public List<LockHandle> parts() {
		if (this.keys.size() == 1) {
			return List.of(this);
		}
		List<LockHandle> parts = new ArrayList<>(this.keys.size());
		for (Held held : this.keys) {
			parts.add(held.key());
		}
		return parts;
	}

	/** The worst of the keys' states (a kept grant whose release was asked for is HELD until it is carried out). */
	@Override
	public LockState state() {
		LockState worst = LockState.HELD;
		for (Held held : this.keys) {
			LockState state = held.key().state();
			if (state == LockState.RELEASED || state == LockState.LOST) {
				return state;
			}
			if (state == LockState.IN_DOUBT) {
				worst = state;
			}
		}
		return worst;
	}

	@Override
	public boolean isHeld() {
		return state() == LockState.HELD;
	}

	@Override
	public void checkHeld() {
		for (Held held : this.keys) {
			held.key().checkHeld();
		}
	}

	/** The first key's token (the only one's, for one key); ask the parts for the others'. */
	@Override
	public long fencingToken() {
		checkHeld();
		return this.keys.get(0).key().fencingToken();
	}

	/**
	 * Release the grant: at once, or, while {@code lockAtLeastFor} has not passed since the grant
	 * and the grant is not lost, later on a scheduler thread (the keys' ceilings are moved past
	 * that release, so that a kept grant ends as released). Only the first call counts. A
	 * synchronous grant returns once its znodes' deletes were answered (see
	 * {@link LockHandle#release()}).
	 */
	@Override
	public void release() {
		release(false);
	}

	/**
	 * Release without waiting for ZooKeeper's answer (a kept grant: without waiting for its time).
	 * Every call returns the first one's outcome.
	 * @throws IllegalStateException if the grant is bound to another thread
	 */
	@Override
	public CompletableFuture<Void> releaseAsync() {
		return release(true);
	}

	private CompletableFuture<Void> release(boolean async) {
		CompletableFuture<Void> done = this.released.get();
		if (done != null) {
			return done;
		}
		checkOwner();
		CompletableFuture<Void> outcome = new CompletableFuture<>();
		if (!this.released.compareAndSet(null, outcome)) {
			return this.released.get();
		}
		long delay = this.grantedAt + this.lockAtLeastFor.toNanos() - System.nanoTime();
		if (delay <= 0 || state() == LockState.LOST) {
			releaseKeys(async).whenComplete((ignored, ex) -> outcome.complete(null));
		}
		else {
			KeptLockHandle.keepCeilingsPast(this, delay);
			KeptLockHandle.later(() -> releaseKeys(async).whenComplete((ignored, ex) -> outcome.complete(null)), delay);
		}
		return outcome;
	}

	private void checkOwner() {
		Thread bound = this.owner;
		if (bound != null && bound != Thread.currentThread()) {
			throw new IllegalStateException(this.mode + " lock '" + path() + "' was acquired by thread '"
					+ bound.getName() + "' and must be released by it, not by '" + Thread.currentThread().getName()
					+ "'");
		}
	}

	/** Stop the hold observations and release the keys, last first; a failure is logged. */
	private CompletableFuture<Void> releaseKeys(boolean async) {
		List<CompletableFuture<Void>> deletes = new ArrayList<>(this.keys.size());
		for (int i = this.keys.size() - 1; i >= 0; i--) {
			Held held = this.keys.get(i);
			try {
				if (async) {
					deletes.add(held.releaseAsync());
				}
				else {
					held.release();
				}
			}
			catch (RuntimeException ex) {
				// The other keys are released all the same; a znode not deleted dies with its session.
				logger.warn("Failed to release " + held.key().mode() + " lock '" + held.key().path() + "'", ex);
			}
		}
		return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
	}

	/** Completes once any key's grant is lost and its work is to be told (see {@link AsyncLockHandle#whenLost()}). */
	@Override
	public CompletionStage<Void> whenLost() {
		CompletionStage<Void> signal = this.lost;
		if (signal == null) {
			CompletableFuture<Void> any = new CompletableFuture<>();
			for (Held held : this.keys) {
				held.key().whenLost().thenRun(() -> any.complete(null));
			}
			signal = any.minimalCompletionStage();
			this.lost = signal;
		}
		return signal;
	}

	/**
	 * Keep the grant at least {@code lockAtLeastFor} from now (a view: see
	 * {@link LockHandle#keepAtLeast(Duration)}).
	 * @throws IllegalStateException if the grant is bound to its thread
	 */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		Thread bound = this.owner;
		if (bound != null) {
			throw new IllegalStateException(this.mode + " lock '" + path() + "' is bound to thread '" + bound.getName()
					+ "' (a grant of a reentrant request): it cannot be kept after it is released, which another "
					+ "thread would carry out; use a non-reentrant request, or an asynchronous grant");
		}
		return KeptLockHandle.keep(this, lockAtLeastFor);
	}

	/** Move every key's ceiling. */
	@Override
	public LockHandle extend(Duration lockAtMostFor) {
		checkHeld();
		for (Held held : this.keys) {
			held.key().extend(lockAtMostFor);
		}
		return this;
	}

	/** The earliest of the keys' ceilings. */
	@Override
	public Optional<Instant> deadline() {
		Instant earliest = null;
		for (Held held : this.keys) {
			Instant deadline = held.key().deadline().orElse(null);
			if (deadline != null && (earliest == null || deadline.isBefore(earliest))) {
				earliest = deadline;
			}
		}
		return Optional.ofNullable(earliest);
	}

	/**
	 * Open the scopes of the hold observations on this thread, for a callback.
	 * @return what closes them, last first
	 */
	Runnable openScope() {
		List<Runnable> scopes = new ArrayList<>(this.keys.size());
		for (Held held : this.keys) {
			LockObservations.Hold hold = held.hold();
			if (hold != null) {
				scopes.add(hold.openScope());
			}
		}
		return () -> {
			for (int i = scopes.size() - 1; i >= 0; i--) {
				scopes.get(i).run();
			}
		};
	}

	@Override
	public String toString() {
		return (this.keys.size() == 1) ? this.keys.get(0).key().toString() : this.mode + " multi-lock " + parts();
	}

}
