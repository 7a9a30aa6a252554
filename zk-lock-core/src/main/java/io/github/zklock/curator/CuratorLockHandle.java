package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.spi.RequestRules;

/**
 * A grant from {@link CuratorLockRegistry}: one hold of a {@link LockKey} (a turn of its local
 * queue, a further hold of a turn, or a READ or a lease of its own). Its state follows the
 * ZooKeeper connection (see {@link HeldLocks}), revocations and its ceiling; the fencing token comes
 * with the create of its znode, or is read from the server on first request only.
 *
 * <p>State transitions, each one compare-and-set: HELD ⇄ IN_DOUBT (connection suspended,
 * regained); HELD or IN_DOUBT → LOST (session lost, revoked, ceiling); any → RELEASED (released,
 * once). A grant bound to its thread (a synchronous grant of a reentrant request) is released by
 * that thread; the others, asynchronous grants among them, from any thread, without waiting for
 * ZooKeeper.
 */
final class CuratorLockHandle implements RegistryGrant {

	/** The longest ceiling scheduled, about 73 years: {@link System#nanoTime()} arithmetic stays exact. */
	private static final long LONGEST_CEILING_NANOS = Long.MAX_VALUE >> 2;

	/** Where a grant stands towards its requester (see {@link #handOut()}, {@link #withdrawn()}). */
	private static final int UNDELIVERED = 0;

	private static final int HANDED_OUT = 1;

	private static final int WITHDRAWN = 2;

	private final Grants grants;

	private final LockKey.Hold hold;

	private final String path;

	private final LockMode mode;

	/** The thread the grant is bound to, {@code null} if any thread may release it. */
	private final @Nullable Thread thread;

	/** Whether a synchronous request was granted: its {@link #release()} waits for the delete. */
	private final boolean synchronous;

	private final String owner;

	/** When the grant was decided, by the local clock and in {@link Grants#nanoTime()}. */
	private final Instant decided = Instant.now();

	private final long decidedNanos;

	private final AtomicReference<LockState> state = new AtomicReference<>(LockState.HELD);

	/** Why the grant was lost, when not with its session. */
	private volatile @Nullable String lostReason;

	/** Told when the grant is lost, for a grant no thread owns (interrupt-on-lost, a ceiling). */
	private final CompletableFuture<Void> lostSignal = new CompletableFuture<>();

	/** The ceiling: when it ends the grant, by the local clock; {@code null} without one. Guarded by this. */
	private volatile @Nullable Instant deadline;

	/** When the ceiling ends the grant, in {@link Grants#nanoTime()}. Guarded by this. */
	private long deadlineNanos;

	/** The last lockAtMostFor set (by the request or an extension). Guarded by this. */
	private @Nullable Duration lockAtMostFor;

	/** The scheduled end of the grant by its ceiling. Guarded by this. */
	private @Nullable Future<?> ceilingTask;

	private final boolean localHandoff;

	/** Whether the grant reached its requester: {@link #handOut()}, {@link #withdrawn()}. */
	private final AtomicInteger delivery = new AtomicInteger(UNDELIVERED);

	/** Whether the ceiling ended the grant (then no extension revives it). Guarded by this. */
	private boolean endedByCeiling;

	/**
	 * @param thread the thread the grant is bound to, {@code null} if any thread may release it
	 * @param owner who asked, for operators and events: the requesting thread's name, or {@code async}
	 * @param synchronous whether a synchronous request was granted
	 * @param localHandoff whether it opened a turn on a znode an earlier turn left (a further hold of
	 * a turn, a re-entry or a READ under WRITE, was not handed over)
	 */
	CuratorLockHandle(Grants grants, LockKey.Hold hold, String path, LockMode mode, @Nullable Thread thread,
			String owner, boolean synchronous, long decidedNanos, boolean localHandoff) {
		this.grants = grants;
		this.hold = hold;
		this.localHandoff = localHandoff;
		this.path = path;
		this.mode = mode;
		this.thread = thread;
		this.synchronous = synchronous;
		this.owner = owner;
		this.decidedNanos = decidedNanos;
	}

	@Override
	public String path() {
		return this.path;
	}

	@Override
	public LockMode mode() {
		return this.mode;
	}

	/** The znode the grant rides, below {@link #path()}. */
	String nodePath() {
		return this.hold.znode().path;
	}

	/** The session instance the grant's znode belongs to. */
	long sessionInstance() {
		return this.hold.znode().session;
	}

	/** Since when this application holds the grant's znode (a local chain's first grant, say), in {@link Grants#nanoTime()}. */
	long znodeHeldSinceNanos() {
		return this.hold.znode().heldSince;
	}

	/** Why the grant's znode was ended under it (revoked, say), {@code null} if it was not. */
	@Nullable String znodeEndedBy() {
		return this.hold.znode().endedBy();
	}

	/** What ends the grant's hold on its key. */
	LockKey.Hold hold() {
		return this.hold;
	}

	@Override
	public LockState state() {
		return this.state.get();
	}

	/** Whether the grant is bound to the thread that acquired it. */
	boolean isThreadBound() {
		return this.thread != null;
	}

	/** The thread the grant is bound to, {@code null} if none. */
	@Nullable Thread thread() {
		return this.thread;
	}

	/** Who holds the grant, for operators and events: the acquiring thread's name, or {@code async}. */
	String owner() {
		return this.owner;
	}

	/** When the grant was decided, by the local clock. */
	Instant decided() {
		return this.decided;
	}

	/** When the grant was decided, in {@link Grants#nanoTime()}. */
	long decidedNanos() {
		return this.decidedNanos;
	}

	/** What an operator sees of this grant. */
	HeldLock snapshot() {
		long token = this.hold.znode().czxid();
		return new HeldLock(this.path, this.mode, this.state.get(), this.owner, this.decided, nodePath(),
				(token != 0) ? token : null, this.hold.position(), this.deadline);
	}

	/** The fencing token if it is known without a request. */
	OptionalLong knownFencingToken() {
		long token = this.hold.znode().czxid();
		return (token != 0) ? OptionalLong.of(token) : OptionalLong.empty();
	}

	@Override
	public boolean isLocalHandoff() {
		return this.localHandoff;
	}

	@Override
	public boolean isFromKeptZnode() {
		return this.localHandoff && this.hold.fromKept();
	}

	@Override
	public boolean isHeld() {
		return this.state.get() == LockState.HELD;
	}

	@Override
	public void checkHeld() {
		switch (this.state.get()) {
			case HELD -> {
			}
			case IN_DOUBT -> throw new LockLostException(this.path, this.mode,
					"the ZooKeeper connection is suspended; the lock is in doubt until it reconnects");
			case LOST -> throw new LockLostException(this.path, this.mode, lostMessage());
			case RELEASED -> throw new IllegalStateException(
					this.mode + " lock '" + this.path + "' was already released");
		}
	}

	@Override
	public long fencingToken() {
		checkHeld();
		LockZnode znode = this.hold.znode();
		long token = znode.czxid();
		if (token == 0) {
			token = this.grants.readCzxid(znode.path, this.path, this.mode);
			znode.czxid(token);
		}
		return token;
	}

	/**
	 * Release this grant: one hold of its key ends; a turn hands the key on to the next waiter of
	 * this application, the last hold of a znode deletes it. A grant of a synchronous request
	 * returns once ZooKeeper answered the delete, at most the client's connection timeout (then the
	 * failure is logged and Curator's guaranteed delete finishes after reconnection, or the
	 * session's end does); an asynchronous grant's release waits for nothing.
	 * @throws IllegalStateException if the grant is bound to another thread
	 */
	@Override
	public void release() {
		if (this.state.get() == LockState.RELEASED) {
			return;
		}
		Thread bound = this.thread;
		if (bound != null && bound != Thread.currentThread()) {
			throw new IllegalStateException(this.mode + " lock '" + this.path + "' was acquired by thread '"
					+ bound.getName() + "' and must be released by it, not by '" + Thread.currentThread().getName()
					+ "'");
		}
		CompletableFuture<Void> deleted = end();
		if (this.synchronous) {
			this.grants.awaitDelete(deleted, this);
		}
	}

	/**
	 * Release from any thread without waiting (an asynchronous release, or a grant never handed to
	 * its caller). Once; later calls return a completed future.
	 * @return completes once the znode's delete was answered, if this release ended the znode
	 */
	CompletableFuture<Void> end() {
		if (this.state.getAndSet(LockState.RELEASED) == LockState.RELEASED) {
			return CompletableFuture.completedFuture(null);
		}
		cancelCeiling();
		this.grants.untrack(this);
		return this.hold.release(this);
	}

	/**
	 * Release without waiting for ZooKeeper, from any thread, unless the grant is bound to another
	 * thread. The future completes once the znode's delete was answered (at once when the znode is
	 * handed over to a waiter of this application): then another application's request finds the
	 * key free, which a completion when the delete is only sent would not promise.
	 */
	@Override
	public CompletableFuture<Void> releaseAsync() {
		Thread bound = this.thread;
		if (bound != null && bound != Thread.currentThread()) {
			throw new IllegalStateException(this.mode + " lock '" + this.path + "' was acquired by thread '"
					+ bound.getName() + "' and must be released by it");
		}
		return end();
	}

	@Override
	public CompletionStage<Void> whenLost() {
		return this.lostSignal.minimalCompletionStage();
	}

	/**
	 * Keep this grant (see {@link LockHandle#keepAtLeast(Duration)}), unless it is bound to its
	 * thread: its delayed release would come from another thread.
	 */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		Thread bound = this.thread;
		if (bound != null) {
			throw new IllegalStateException(this.mode + " lock '" + this.path + "' is bound to thread '"
					+ bound.getName() + "' (a grant of a reentrant request): it cannot be kept after it is "
					+ "released, which another thread would carry out; use a non-reentrant request, or an "
					+ "asynchronous grant");
		}
		return RegistryGrant.super.keepAtLeast(lockAtLeastFor);
	}

	/**
	 * Start the grant's ceiling, counted from its decision: once it passes, the registry ends the
	 * grant as a revocation does. Called once, as the grant is handed out.
	 * @param lockAtMostFor the ceiling, {@link RequestRules#NO_CEILING} for none
	 */
	void startCeiling(Duration lockAtMostFor) {
		if (RequestRules.noCeiling(lockAtMostFor)) {
			return;
		}
		synchronized (this) {
			scheduleCeiling(lockAtMostFor, this.decidedNanos);
		}
	}

	/**
	 * Move the ceiling to {@code lockAtMostFor} from now (see {@link LockHandle#extend(Duration)}).
	 * A thread-bound grant may be extended from any thread: the ceiling is this application's.
	 */
	@Override
	public LockHandle extend(Duration lockAtMostFor) {
		Objects.requireNonNull(lockAtMostFor, "lockAtMostFor must not be null");
		if (lockAtMostFor.isNegative() || lockAtMostFor.isZero()) {
			throw new IllegalArgumentException("An extension of " + this.mode + " lock '" + this.path
					+ "' needs a positive lockAtMostFor, was " + lockAtMostFor);
		}
		Duration passed = null;
		synchronized (this) {
			LockState current = this.state.get();
			if (!this.endedByCeiling && this.lockAtMostFor != null && current != LockState.RELEASED
					&& current != LockState.LOST && this.grants.nanoTime() - this.deadlineNanos >= 0) {
				// The ceiling passed and its task has not run yet: the grant ends now, not revived.
				this.endedByCeiling = true;
				this.ceilingTask = null;
				passed = this.lockAtMostFor;
			}
			else if (!this.endedByCeiling) {
				checkHeld();
				scheduleCeiling(lockAtMostFor, this.grants.nanoTime());
				return this;
			}
		}
		if (passed != null) {
			this.grants.endGrant(this, ceilingReason(passed));
		}
		throw new LockLostException(this.path, this.mode, ceilingReason(this.lockAtMostFor)
				+ "; an ended grant cannot be extended");
	}

	@Override
	public Optional<Instant> deadline() {
		return Optional.ofNullable(this.deadline);
	}

	/**
	 * Schedule the end of the grant at {@code lockAtMostFor} after {@code fromNanos}, replacing an
	 * earlier one; {@link RequestRules#NO_CEILING} removes it. A ceiling beyond
	 * {@link #LONGEST_CEILING_NANOS} is scheduled there.
	 */
	private void scheduleCeiling(Duration lockAtMostFor, long fromNanos) {
		Future<?> previous = this.ceilingTask;
		if (previous != null) {
			previous.cancel(false);
		}
		if (RequestRules.noCeiling(lockAtMostFor)) {
			this.lockAtMostFor = null;
			this.deadline = null;
			this.ceilingTask = null;
			return;
		}
		this.lockAtMostFor = lockAtMostFor;
		long nanos = (lockAtMostFor.getSeconds() < LONGEST_CEILING_NANOS / 1_000_000_000L) ? lockAtMostFor.toNanos()
				: LONGEST_CEILING_NANOS;
		this.deadlineNanos = fromNanos + nanos;
		long delay = this.deadlineNanos - this.grants.nanoTime();
		this.deadline = Instant.now().plusNanos(delay);
		this.ceilingTask = this.grants.schedule(this::ceilingReached, Math.max(0, delay));
	}

	private void cancelCeiling() {
		Future<?> task;
		synchronized (this) {
			task = this.ceilingTask;
			this.ceilingTask = null;
		}
		if (task != null) {
			task.cancel(false);
		}
	}

	/** The ceiling's time came: end the grant unless it was released, lost or extended meanwhile. */
	private void ceilingReached() {
		Duration ceiling;
		synchronized (this) {
			LockState current = this.state.get();
			if (current == LockState.RELEASED || current == LockState.LOST || this.endedByCeiling
					|| this.grants.nanoTime() - this.deadlineNanos < 0) {
				return;
			}
			this.endedByCeiling = true;
			this.ceilingTask = null;
			ceiling = this.lockAtMostFor;
		}
		this.grants.endGrant(this, ceilingReason(ceiling));
	}

	private static String ceilingReason(@Nullable Duration lockAtMostFor) {
		return "held longer than lockAtMostFor (" + lockAtMostFor + ")";
	}

	/**
	 * Connection suspended: a held grant becomes in doubt.
	 * @return whether the state changed
	 */
	boolean suspend() {
		return this.state.compareAndSet(LockState.HELD, LockState.IN_DOUBT);
	}

	/**
	 * Reconnected with the session that created the lock znode: the grant holds again.
	 * @return whether the state changed
	 */
	boolean regain() {
		return this.state.compareAndSet(LockState.IN_DOUBT, LockState.HELD);
	}

	/**
	 * Session lost or replaced, or the grant revoked: the grant is gone for good.
	 * @param reason why, when not with the session
	 * @return whether the state changed
	 */
	boolean lose(@Nullable String reason) {
		if (reason != null && this.state.get() != LockState.RELEASED) {
			this.lostReason = reason + "; another client may hold the lock";
		}
		LockState previous = this.state.getAndUpdate(
				(current) -> (current == LockState.RELEASED) ? current : LockState.LOST);
		return previous == LockState.HELD || previous == LockState.IN_DOUBT;
	}

	/**
	 * Hand the grant to its requester, unless it was ended before (see {@link #withdrawn()}): then
	 * nobody ever held it, and the requester's wait goes on.
	 * @return whether it is handed out; exactly one of this and {@link #withdrawn()} succeeds
	 */
	boolean handOut() {
		return this.delivery.compareAndSet(UNDELIVERED, HANDED_OUT);
	}

	/**
	 * Take back a grant that was ended (LOST) before it was handed out, under its key's monitor:
	 * nobody is told, as nobody held it.
	 * @return whether it was taken back; {@code false} once handed out (then its holder is told)
	 */
	boolean withdrawn() {
		return this.delivery.compareAndSet(UNDELIVERED, WITHDRAWN);
	}

	/** Tell {@link #whenLost()} that the grant was lost. */
	void signalLost() {
		this.lostSignal.complete(null);
	}

	/** The message of the {@link LockLostException} for a lost grant. */
	String lostMessage() {
		String reason = this.lostReason;
		return (reason != null) ? reason : "the ZooKeeper session was lost; another client may hold the lock";
	}

	@Override
	public String toString() {
		return this.mode + " lock '" + this.path + "' (" + nodePath() + ", " + this.state.get() + ")";
	}

}
