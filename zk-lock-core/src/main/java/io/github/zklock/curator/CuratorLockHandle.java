package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockMode;

/**
 * A grant from {@link CuratorLockRegistry}. Its state follows the ZooKeeper connection (see
 * {@link HeldLocks}); the fencing token comes with the create (EXCLUSIVE), from the earlier grants
 * of a hand-off chain, or is read from the server on first request only.
 */
final class CuratorLockHandle implements LockHandle {

	private final CuratorLockRegistry registry;

	/** The recipe slot of a grant made through a recipe; {@code null} for an asynchronous chain's. */
	private final RecipeCache.@Nullable Slot slot;

	/** Where a grant made without a thread goes back on release; {@code null} for the others. */
	private final @Nullable AsyncRelease asyncRelease;

	/** Whether the grant was handed over on a znode an earlier grant of the chain acquired. */
	private final boolean handedOver;

	/** Told when the grant is lost, with interrupt-on-lost, for a grant no thread owns. */
	private final CompletableFuture<Void> lostSignal = new CompletableFuture<>();

	private final LockRecipe.Grant grant;

	private final String path;

	private final LockMode mode;

	private final Thread acquirer;

	private final boolean threadBound;

	private final long sessionInstance;

	private final AtomicReference<LockState> state = new AtomicReference<>(LockState.HELD);

	private volatile long fencingToken;

	/** Why the grant was lost, when not with its session. */
	private volatile @Nullable String lostReason;

	private final long grantedAt = System.currentTimeMillis();

	private final long grantedNanos = System.nanoTime();

	/** The ceiling (lockAtMostFor): when it ends the grant, by the local clock; {@code null} without one. Guarded by this. */
	private volatile @Nullable Instant deadline;

	/** When the ceiling ends the grant, in {@link System#nanoTime()}. Guarded by this. */
	private long deadlineNanos;

	/** The last lockAtMostFor set (by the request or an extension). Guarded by this. */
	private @Nullable Duration lockAtMostFor;

	/** The scheduled end of the grant by its ceiling. Guarded by this. */
	private @Nullable ScheduledFuture<?> ceilingTask;

	/** Whether the ceiling ended the grant (then no extension revives it). Guarded by this. */
	private boolean endedByCeiling;

	CuratorLockHandle(CuratorLockRegistry registry, RecipeCache.Slot slot, LockRecipe.Grant grant, String path,
			LockMode mode, long sessionInstance) {
		this.registry = registry;
		this.slot = slot;
		this.asyncRelease = null;
		this.grant = grant;
		this.path = path;
		this.mode = mode;
		this.acquirer = Thread.currentThread();
		// A grant of a reentrant recipe is bound to its thread (LockRequest).
		this.threadBound = slot.kind().reentrant();
		this.handedOver = grant instanceof LocalChain.ChainGrant chained && chained.kind() == LocalChain.Kind.HANDED_OVER;
		this.sessionInstance = sessionInstance;
	}

	/**
	 * A grant made without a thread (an {@link AsyncChain}'s or an {@link AsyncSingle}): bound to no
	 * thread, released through where it came from.
	 */
	CuratorLockHandle(CuratorLockRegistry registry, AsyncRelease asyncRelease, LockRecipe.Grant grant, String path,
			LockMode mode, long sessionInstance, boolean handedOver) {
		this.registry = registry;
		this.slot = null;
		this.asyncRelease = asyncRelease;
		this.grant = grant;
		this.path = path;
		this.mode = mode;
		this.acquirer = Thread.currentThread();
		this.threadBound = false;
		this.handedOver = handedOver;
		this.sessionInstance = sessionInstance;
	}

	@Override
	public String path() {
		return this.path;
	}

	@Override
	public LockMode mode() {
		return this.mode;
	}

	/**
	 * Return the znode this grant created (or re-entered), below {@link #path()}.
	 * @return the lock znode path
	 */
	String nodePath() {
		return this.grant.nodePath();
	}

	/** The Curator ZooKeeper handle instance (and so the session) the grant was made in. */
	long sessionInstance() {
		return this.sessionInstance;
	}

	@Override
	public LockState state() {
		return this.state.get();
	}

	/** The thread that acquired the grant. */
	boolean isThreadBound() {
		return this.threadBound;
	}

	Thread acquirer() {
		return this.acquirer;
	}

	/** Who holds the grant, for operators and events: the acquiring thread's name, or {@code async}. */
	String owner() {
		return (this.asyncRelease != null) ? "async" : this.acquirer.getName();
	}

	/** What an operator sees of this grant. */
	HeldLock snapshot() {
		long token = knownToken();
		return new HeldLock(this.path, this.mode, this.state.get(), owner(),
				Instant.ofEpochMilli(this.grantedAt), this.grant.nodePath(), (token != 0) ? token : null,
				(this.grant instanceof LocalChain.ChainGrant chained) ? chained.position()
						: (this.grant instanceof AsyncChain.LinkGrant linked) ? linked.position() : 1,
				this.deadline);
	}

	/** The fencing token if it was read before, without asking ZooKeeper. */
	OptionalLong knownFencingToken() {
		long token = knownToken();
		return (token != 0) ? OptionalLong.of(token) : OptionalLong.empty();
	}

	private long knownToken() {
		long token = this.fencingToken;
		return (token != 0) ? token : this.grant.czxid();
	}

	@Override
	public boolean isLocalHandoff() {
		return this.handedOver;
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
		long token = knownToken();
		if (token != 0) {
			this.fencingToken = token;
			return token;
		}
		Stat stat;
		try {
			stat = this.registry.client().checkExists().forPath(this.grant.nodePath());
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex, "read the fencing token of", this.path, this.mode,
					this.registry.client());
		}
		if (stat == null) {
			throw new LockLostException(this.path, this.mode,
					"its znode " + this.grant.nodePath() + " no longer exists");
		}
		token = stat.getCzxid();
		this.fencingToken = token;
		this.grant.czxid(token);
		return token;
	}

	@Override
	public void release() {
		if (this.state.get() == LockState.RELEASED) {
			return;
		}
		if (this.threadBound && this.acquirer != Thread.currentThread()) {
			throw new IllegalStateException(this.mode + " lock '" + this.path + "' was acquired by thread '"
					+ this.acquirer.getName() + "' and must be released by it, not by '"
					+ Thread.currentThread().getName() + "'");
		}
		if (this.state.getAndSet(LockState.RELEASED) != LockState.RELEASED) {
			cancelCeiling();
			AsyncRelease asyncRelease = this.asyncRelease;
			if (asyncRelease != null) {
				this.registry.released(this, asyncRelease);
			}
			else {
				this.registry.release(this, Objects.requireNonNull(this.slot), this.grant);
			}
		}
	}

	/**
	 * Keep this grant (see {@link LockHandle#keepAtLeast(Duration)}), unless it is bound to its
	 * thread: its delayed release would come from another thread, which Curator refuses.
	 */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		if (this.threadBound) {
			throw new IllegalStateException(this.mode + " lock '" + this.path + "' is bound to thread '"
					+ this.acquirer.getName() + "' (a grant of a reentrant request): it cannot be kept after it is "
					+ "released, which another thread would carry out; use a non-reentrant request, or an "
					+ "asynchronous grant");
		}
		return LockHandle.super.keepAtLeast(lockAtLeastFor);
	}

	/**
	 * Start the grant's ceiling, counted from its grant: once it passes, the registry ends the
	 * grant as revoked (see {@link CuratorLockRegistry#endByCeiling}). Called once, as the grant is
	 * handed out.
	 * @param lockAtMostFor the ceiling, zero for none
	 */
	void startCeiling(Duration lockAtMostFor) {
		if (lockAtMostFor.isZero()) {
			return;
		}
		synchronized (this) {
			scheduleCeiling(lockAtMostFor, this.grantedNanos);
		}
	}

	/**
	 * Move the ceiling to {@code lockAtMostFor} from now (see {@link LockHandle#extend(Duration)}).
	 * A thread-bound grant may be extended from any thread: the ceiling is this application's, not
	 * Curator's.
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
			if (!this.endedByCeiling && this.lockAtMostFor != null && this.state.get() != LockState.RELEASED
					&& this.state.get() != LockState.LOST && System.nanoTime() - this.deadlineNanos >= 0) {
				// The ceiling passed and its task has not run yet: the grant ends now, not revived.
				this.endedByCeiling = true;
				this.ceilingTask = null;
				passed = this.lockAtMostFor;
			}
			else if (!this.endedByCeiling) {
				checkHeld();
				scheduleCeiling(lockAtMostFor, System.nanoTime());
				return this;
			}
		}
		if (passed != null) {
			this.registry.endByCeiling(this, ceilingReason(passed));
		}
		throw new LockLostException(this.path, this.mode, ceilingReason(this.lockAtMostFor)
				+ "; an ended grant cannot be extended");
	}

	@Override
	public Optional<Instant> deadline() {
		return Optional.ofNullable(this.deadline);
	}

	/** Schedule the end of the grant at {@code lockAtMostFor} after {@code fromNanos}, replacing an earlier one. */
	private void scheduleCeiling(Duration lockAtMostFor, long fromNanos) {
		ScheduledFuture<?> previous = this.ceilingTask;
		if (previous != null) {
			previous.cancel(false);
		}
		long nanos = lockAtMostFor.toNanos();
		this.lockAtMostFor = lockAtMostFor;
		this.deadlineNanos = fromNanos + nanos;
		long delay = this.deadlineNanos - System.nanoTime();
		this.deadline = Instant.now().plusNanos(delay);
		this.ceilingTask = this.registry.scheduleCeiling(this::ceilingReached, Math.max(0, delay));
	}

	private void cancelCeiling() {
		ScheduledFuture<?> task;
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
					|| System.nanoTime() - this.deadlineNanos < 0) {
				return;
			}
			this.endedByCeiling = true;
			this.ceilingTask = null;
			ceiling = this.lockAtMostFor;
		}
		this.registry.endByCeiling(this, ceilingReason(ceiling));
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
	 * Why the znode this grant rides was revoked or deleted under its local chain, if it was (a
	 * grant handed over just as the revocation came: see {@link Revocations}).
	 */
	@Nullable String chainRevokedReason() {
		if (this.grant instanceof AsyncChain.LinkGrant linked) {
			return linked.revokedReason();
		}
		return (this.grant instanceof LocalChain.ChainGrant chained) ? chained.link().revokedReason : null;
	}

	/**
	 * Since when, in {@link System#nanoTime()}, this application holds the grant's znode: the
	 * first grant of a local chain's znode, else this grant.
	 */
	long znodeHeldSinceNanos() {
		if (this.grant instanceof AsyncChain.LinkGrant linked) {
			return linked.znodeHeldSinceNanos();
		}
		return (this.grant instanceof LocalChain.ChainGrant chained) ? chained.link().grantedAt : this.grantedNanos;
	}

	/** Tell {@link #whenLost()} that the grant was lost (interrupt-on-lost, a grant no thread owns). */
	void signalLost() {
		this.lostSignal.complete(null);
	}

	/** Completes when the grant is lost, with interrupt-on-lost, for a grant no thread owns. */
	CompletionStage<Void> whenLost() {
		return this.lostSignal.minimalCompletionStage();
	}

	/** Whether the grant was lost with its session, rather than revoked. */
	boolean lostWithSession() {
		return this.lostReason == null;
	}

	/** The message of the {@link LockLostException} for a lost grant. */
	String lostMessage() {
		String reason = this.lostReason;
		return (reason != null) ? reason : "the ZooKeeper session was lost; another client may hold the lock";
	}

	@Override
	public String toString() {
		return this.mode + " lock '" + this.path + "' (" + this.grant.nodePath() + ", " + this.state.get() + ")";
	}


}
