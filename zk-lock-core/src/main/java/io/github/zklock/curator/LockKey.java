package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockUpgradeException;

/**
 * Everything this application asks of one lock path, synchronous and asynchronous alike, under one
 * monitor: what waits, what is held, and the znodes behind them.
 *
 * <p><b>Exclusive requests</b> (EXCLUSIVE reentrant: {@code InterProcessMutex}'s protocol; WRITE:
 * the write side of {@code InterProcessReadWriteLock}'s) wait in one FIFO queue per protocol, a
 * {@link Line}, threads and asynchronous requests alike. The application queues one znode for them
 * in ZooKeeper (a {@link Link}); the head waiter is granted a {@link Turn} on it, and when a turn
 * ends while others wait here, the next one is granted on the same znode without a request (local
 * hand-off), within {@link LocalHandoff}'s bounds while another participant queues behind it, half a
 * negotiated session timeout after the requests that granted the znode, and while its session is
 * connected and unchanged; else the znode is deleted and the head waiter queues a new one. A
 * thread whose turn it is re-enters (EXCLUSIVE, WRITE, and READ under WRITE) as further holds of
 * its turn. This follows {@code AbstractQueuedSynchronizer}: one wait queue, and ownership handed
 * with the grant.
 *
 * <p><b>READ requests and leases</b> (a non-reentrant EXCLUSIVE lock, a permit) each have a znode
 * of their own (a {@link Single}): readers hold together, and a lease may be returned by any
 * thread, as in the recipes. A thread's nested READ is a further hold of its READ.
 *
 * <p><b>Ending a held znode</b>: a release, a revocation, a ceiling or a lost session end a hold
 * here ({@link #release}, {@link #endZnode}), and its znode through its
 * {@link ZnodeAcquisition#end()}, the one place that deletes it. A turn ended by anything but its
 * own release is taken away from its holder at once, so that the next waiter need not wait for a
 * holder that may be stuck; the holder learns it where it acts (its grant is LOST, its nested
 * requests fail, its release changes nothing).
 *
 * <p>Every decision is made under this object's monitor; what follows from it (requests, a waiter
 * completed, a grant tracked) runs after the monitor is released, in the order decided. Nothing
 * blocks under the monitor. Across threads, the one order that matters on the wire is kept too: a
 * new acquisition is not started while an end decided before it has not sent its delete (see
 * {@link #endsToSend}), so that its listing never finds a znode this application let go.
 */
final class LockKey {

	private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

	private final String lockPath;

	private final Grants grants;

	private final Line mutex;

	private final Line write;

	/** READ requests and leases: waiting, held, or ended and not yet released by their thread. */
	private final List<Single> singles = new ArrayList<>(2);

	/** Turns taken away from their thread that the thread has not released yet. */
	private final List<Turn> takenAway = new ArrayList<>(0);

	/** Whether the registry dropped this key: nothing may queue here any more. */
	private boolean dropped;

	/**
	 * Ends of acquisitions decided under the monitor and not sent yet (their deletes go out after
	 * it is released). While any is pending, a new acquisition of this key is not started but kept
	 * in {@link #startsAfterEnds}: on the session, a znode's delete then always goes before the next
	 * create of the key, in the order in which they were decided, so that no listing of a new
	 * acquisition finds a znode this application already let go (a one-attempt request would be
	 * refused by it).
	 */
	private int endsToSend;

	/** Starts decided while ends were pending, run once the last of them was sent. */
	private final List<Runnable> startsAfterEnds = new ArrayList<>(0);

	LockKey(String lockPath, Grants grants) {
		this.lockPath = lockPath;
		this.grants = grants;
		// After the lock path, which names them.
		this.mutex = new Line(Protocol.MUTEX);
		this.write = new Line(Protocol.WRITE);
	}

	String lockPath() {
		return this.lockPath;
	}

	/**
	 * Queue a request. A request that can never be granted is failed at once: a READ holder asking
	 * for WRITE ({@link LockUpgradeException}), a request nested in a grant that was taken away
	 * ({@link LockLostException}), a lease holder waiting without limit for the last lease it holds
	 * itself ({@link LockAcquisitionException}).
	 * @return {@code false} if this key was dropped meanwhile: look it up again
	 */
	boolean enqueue(Waiter waiter) {
		List<Runnable> after = new ArrayList<>(2);
		synchronized (this) {
			if (this.dropped) {
				return false;
			}
			waiter.key = this;
			if (waiter.isDone()) {
				// Given up before it could queue.
				return true;
			}
			switch (waiter.protocol) {
				case MUTEX -> this.mutex.enqueue(waiter, after);
				case WRITE -> {
					Thread thread = waiter.boundThread();
					Single read = (thread != null) ? readOf(thread) : null;
					if (read != null && !this.write.isTurnOf(thread)) {
						fail(waiter, new LockUpgradeException(this.lockPath), after);
					}
					else {
						this.write.enqueue(waiter, after);
					}
				}
				case READ -> enqueueRead(waiter, after);
				case LEASE -> enqueueLease(waiter, after);
			}
		}
		run(after);
		return true;
	}

	private void enqueueRead(Waiter waiter, List<Runnable> after) {
		Thread thread = waiter.boundThread();
		if (thread != null) {
			if (this.write.isTurnOf(thread)) {
				// READ under WRITE: a further hold of the thread's WRITE turn.
				this.write.nest(waiter, after);
				return;
			}
			if (this.write.refuseIfTakenAway(waiter, after)) {
				return;
			}
			Single held = readOf(thread);
			if (held != null) {
				if (held.endedBy != null) {
					fail(waiter, enclosingLost(waiter.mode, held.endedBy), after);
				}
				else {
					held.holds++;
					grant(waiter, held, this.grants.nanoTime(), after);
				}
				return;
			}
		}
		startSingle(waiter, after);
	}

	private void enqueueLease(Waiter waiter, List<Runnable> after) {
		Thread caller = waiter.caller;
		if (waiter.forever && caller != null) {
			int held = 0;
			for (Single single : this.singles) {
				held += (single.caller == caller && single.waiter.protocol == Protocol.LEASE && single.znode != null
						&& single.endedBy == null) ? 1 : 0;
			}
			if (held >= waiter.leases) {
				// The leases this thread holds can only be returned by this thread's caller.
				fail(waiter, new LockAcquisitionException(this.lockPath, waiter.mode, Duration.ZERO,
						(waiter.leases == 1)
								? "already held by this thread and not reentrant; waiting without limit would never end"
								: "this thread holds all " + waiter.leases
										+ " permits of the semaphore; waiting without limit would never end"),
						after);
				return;
			}
		}
		startSingle(waiter, after);
	}

	private void startSingle(Waiter waiter, List<Runnable> after) {
		Single single = new Single(waiter);
		this.singles.add(single);
		starting(single.acquisition, after);
	}

	/** What a line does with its znode as it moves on: see {@link Line#use}. */
	private enum Use {

		GRANT, CONFIRM, KEEP, END

	}

	/**
	 * How a wait that was given up stood: granted or failed meanwhile, or still waiting, with or
	 * without evidence that the lock was held.
	 */
	enum Withdrawal {

		/** Granted or failed meanwhile: the caller takes what it was given. */
		DECIDED,

		/** Waited while the lock was seen held: here, or by ZooKeeper's answer. Busy. */
		BUSY,

		/** Waited with nothing heard that shows the lock held: ZooKeeper did not answer in time. */
		UNANSWERED

	}

	/**
	 * Give a wait up (its time ran out, its thread was interrupted, it was cancelled): it leaves the
	 * queue, and the acquisition nobody waits for any more is ended. The caller completes it.
	 * @return {@link Withdrawal#DECIDED} when it was granted or failed meanwhile (a synchronous
	 * caller then takes what it was given); else whether the lock was seen held while it waited: a
	 * turn held here, queued behind one, or a listing of ZooKeeper's that showed a predecessor
	 */
	Withdrawal giveUp(Waiter waiter) {
		List<Runnable> after = new ArrayList<>(2);
		List<ZnodeAcquisition> ended = new ArrayList<>(1);
		Withdrawal withdrawal;
		synchronized (this) {
			withdrawal = this.mutex.withdraw(waiter, after, ended);
			if (withdrawal == Withdrawal.DECIDED) {
				withdrawal = this.write.withdraw(waiter, after, ended);
			}
			for (int i = 0; withdrawal == Withdrawal.DECIDED && i < this.singles.size(); i++) {
				Single single = this.singles.get(i);
				if (single.waiter == waiter && single.znode == null) {
					this.singles.remove(i);
					ending(single.acquisition, after);
					ended.add(single.acquisition);
					withdrawal = (waiter.sawHeld || single.acquisition.sawHeld()) ? Withdrawal.BUSY
							: Withdrawal.UNANSWERED;
				}
			}
		}
		run(after);
		// end() again returns what the first one started: completes once the deletes are answered.
		waiter.givenUp = CompletableFuture.allOf(ended.stream().map(ZnodeAcquisition::end).toArray(CompletableFuture[]::new));
		this.grants.maybeIdle(this);
		return withdrawal;
	}

	/**
	 * End the holds on a znode that this application may no longer hold: it was revoked, deleted by
	 * another client, its grant's ceiling passed, or its session was lost. Under the monitor, before
	 * any other grant can be made, the grants on it become LOST and a turn on it is taken away from
	 * its holder; then the listeners are told, and the znode is deleted (by its acquisition).
	 * @param node the znode's full path
	 * @param reason why, for the grants that hold it
	 * @param signalWork whether to tell the work of every grant on it ({@code whenLost()}), as a
	 * ceiling does
	 * @param cause the grant whose own end this is (its ceiling): nothing is ended unless it still
	 * holds the znode, so that a ceiling that falls as its grant is released never ends the turn
	 * that was handed over on the same znode; {@code null} for an end of the znode itself
	 * @return whether this key held the znode
	 */
	boolean endZnode(String node, String reason, boolean signalWork, @Nullable CuratorLockHandle cause) {
		List<Runnable> after = new ArrayList<>(2);
		List<CuratorLockHandle> lost = new ArrayList<>(1);
		boolean held;
		synchronized (this) {
			if (cause != null && !cause.hold().handles.contains(cause)) {
				return false;
			}
			held = this.mutex.endLink(node, reason, lost, after) | this.write.endLink(node, reason, lost, after);
			for (Single single : this.singles) {
				LockZnode znode = single.znode;
				if (znode != null && single.endedBy == null && znode.path.equals(node)) {
					znode.endedBy(reason);
					single.endedBy = reason;
					single.lose(reason, lost);
					ending(single.acquisition, after);
					held = true;
				}
			}
			// A single no thread will release is forgotten now; a thread's is kept until it releases.
			this.singles.removeIf((single) -> single.endedBy != null && single.holds == 0);
		}
		for (CuratorLockHandle handle : lost) {
			this.grants.heldLocks().told(handle, signalWork);
		}
		run(after);
		this.grants.maybeIdle(this);
		return held;
	}

	/** Whether nothing waits or is held here. */
	synchronized boolean idle() {
		return this.mutex.idle() && this.write.idle() && this.singles.isEmpty() && this.takenAway.isEmpty()
				&& this.endsToSend == 0 && this.startsAfterEnds.isEmpty();
	}

	/**
	 * Drop this key if it is idle: nothing may queue on it afterwards.
	 * @return whether it was dropped
	 */
	synchronized boolean dropIfIdle() {
		if (!this.dropped && idle()) {
			this.dropped = true;
		}
		return this.dropped;
	}

	/** The requests waiting here, for the operators' view. */
	synchronized List<WaitingLock> waiting() {
		List<WaitingLock> waiting = new ArrayList<>();
		this.mutex.collectWaiting(waiting);
		this.write.collectWaiting(waiting);
		for (Single single : this.singles) {
			if (single.znode == null) {
				waiting.add(new WaitingLock(this.lockPath, single.waiter.mode, single.waiter.waiterName(),
						single.waiter.since));
			}
		}
		return waiting;
	}

	/** The znodes kept here, for the operators' view. */
	synchronized void collectKept(List<KeptLock> kept) {
		long now = this.grants.nanoTime();
		Instant wallNow = Instant.now();
		this.mutex.collectKept(kept, now, wallNow);
		this.write.collectKept(kept, now, wallNow);
	}

	/**
	 * A new acquisition of this key's znode, which may be kept when {@code keep}, and which, making
	 * one attempt, waits briefly for a predecessor that another application may keep.
	 */
	ZnodeAcquisition newAcquisition(Protocol protocol, int leases, boolean oneAttempt, boolean keep,
			Consumer<ZnodeAcquisition> owner) {
		ZnodeAcquisition acquisition = new ZnodeAcquisition(this.grants.znodes(), this.lockPath, protocol, leases,
				oneAttempt, owner, this.grants::nanoTime, this.grants.ownZnodes());
		acquisition.keptRules(keep, this.grants::schedule, this.grants.keptLocks().giveUpWait().toNanos());
		return acquisition;
	}

	private @Nullable Single readOf(Thread thread) {
		for (Single single : this.singles) {
			if (single.thread == thread && single.znode != null && single.holds > 0) {
				return single;
			}
		}
		return null;
	}

	/**
	 * Make a grant on a hold and have it delivered after the monitor is released.
	 * @param decidedAt when it was decided, in {@link Grants#nanoTime()}: for a znode granted through
	 * ZooKeeper, when the listing that granted it answered; for a hand-over, the time its bounds were
	 * checked at (a pause after that makes a zombie grant, as one after the call returned would)
	 */
	private void grant(Waiter waiter, Hold hold, long decidedAt, List<Runnable> after) {
		// The first grant on a hold opened it; a further one (a re-entry, READ under WRITE) rides it.
		CuratorLockHandle handle = new CuratorLockHandle(this.grants, hold, this.lockPath, waiter.mode,
				waiter.boundThread(), waiter.waiterName(), waiter.caller != null, decidedAt,
				hold.handedOver() && hold.handles.isEmpty());
		hold.handles.add(handle);
		after.add(() -> this.grants.deliver(waiter, handle));
	}

	/**
	 * Whether a waiter of a failed acquisition queues again, its wait going on: its znode went
	 * before it was granted (with an expired session, or deleted by another client: a forced
	 * revocation), or the connection was lost (Curator's retries ran out) and the wait has a limit
	 * (the next create waits for the connection, at most the connection timeout, and a wait that
	 * ends meanwhile fails as ZooKeeper unreachable). A wait without limit fails on a lost
	 * connection, as Curator's recipes do, rather than hold its thread through an outage; other
	 * failures (access denied, a closed client) end every wait.
	 */
	private static boolean requeues(KeeperException failure, Waiter waiter) {
		KeeperException.Code code = failure.code();
		if (code == KeeperException.Code.CONNECTIONLOSS) {
			return !waiter.forever;
		}
		return code == KeeperException.Code.SESSIONEXPIRED || code == KeeperException.Code.NONODE;
	}

	/** A waiter whose acquisition is replaced keeps what that one saw: the lock held. */
	private static void keepEvidence(Waiter waiter, ZnodeAcquisition replaced) {
		if (replaced.sawHeld()) {
			waiter.sawHeld = true;
		}
	}

	private void fail(Waiter waiter, RuntimeException failure, List<Runnable> after) {
		after.add(() -> waiter.completeExceptionally(failure));
	}

	private LockLostException enclosingLost(LockMode mode, String reason) {
		return new LockLostException(this.lockPath, mode, "this thread's enclosing grant of the lock was lost ("
				+ reason + "); release it before locking again");
	}

	/**
	 * Run what was decided under the monitor, in order. Each action runs even if one before it
	 * failed (an end not sent would hold back every later start); the first failure is rethrown.
	 */
	private static void run(List<Runnable> actions) {
		RuntimeException failure = null;
		for (Runnable action : actions) {
			try {
				action.run();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/** End an acquisition once the monitor is released, counted until its delete was sent. Under the monitor. */
	private void ending(ZnodeAcquisition acquisition, List<Runnable> after) {
		this.endsToSend++;
		after.add(() -> {
			try {
				acquisition.end();
			}
			finally {
				endSent();
			}
		});
	}

	/** Start an acquisition once the monitor is released, after every end decided before it. Under the monitor. */
	private void starting(ZnodeAcquisition acquisition, List<Runnable> after) {
		if (this.endsToSend > 0) {
			this.startsAfterEnds.add(acquisition::start);
		}
		else {
			after.add(acquisition::start);
		}
	}

	/** An end was sent: the starts held back run once none is pending. */
	private void endSent() {
		List<Runnable> starts;
		synchronized (this) {
			if (--this.endsToSend > 0 || this.startsAfterEnds.isEmpty()) {
				return;
			}
			starts = new ArrayList<>(this.startsAfterEnds);
			this.startsAfterEnds.clear();
		}
		run(starts);
	}

	/**
	 * What a grant holds, which its release goes back to: a {@link Turn} of a line, or a
	 * {@link Single}.
	 */
	abstract class Hold {

		/** The grants on this hold not released yet (guarded by the key). */
		final List<CuratorLockHandle> handles = new ArrayList<>(1);

		/** The znode the grant rides. */
		abstract LockZnode znode();

		/** Which grant of its znode this is: 1 for the one made through ZooKeeper. */
		abstract int position();

		/** Whether the grant was handed over on a znode an earlier turn kept. */
		boolean handedOver() {
			return false;
		}

		/** Whether the grant was made on a znode kept while nobody held it ({@link KeptLocks}). */
		boolean fromKept() {
			return false;
		}

		/**
		 * End one hold: the grant was released.
		 * @return completes once the znode's delete was answered, when this release ended the znode;
		 * completed at once otherwise (a further hold remains, or the key was handed on)
		 */
		abstract CompletableFuture<Void> release(CuratorLockHandle handle);

		/**
		 * Make the grants on this hold LOST (guarded by the key); collect the ones to tell. A grant
		 * not handed out yet is taken back silently: its requester's wait goes on.
		 */
		void lose(String reason, List<CuratorLockHandle> lost) {
			for (CuratorLockHandle handle : this.handles) {
				if (handle.lose(reason) && !handle.withdrawn()) {
					lost.add(handle);
				}
			}
		}

		/** The key this hold is of. */
		LockKey key() {
			return LockKey.this;
		}

	}

	/** One grant's turn on a line's znode, with its further holds (re-entry, READ under WRITE). */
	final class Turn extends Hold {

		final Line line;

		/** The thread it is bound to, {@code null} for an asynchronous grant. */
		final @Nullable Thread thread;

		final Link link;

		final int position;

		/** Holds not released yet (guarded by the key). */
		int holds = 1;

		/** WRITE holds not released yet (guarded by the key). */
		int writeHolds;

		/** Whether it was taken away from its holder (guarded by the key). */
		boolean taken;

		/** Whether it was granted on a kept znode. */
		final boolean fromKept;

		Turn(Line line, @Nullable Thread thread, Link link, LockMode mode, boolean fromKept) {
			this.line = line;
			this.thread = thread;
			this.link = link;
			this.position = link.grants;
			this.writeHolds = (mode == LockMode.WRITE) ? 1 : 0;
			this.fromKept = fromKept;
		}

		@Override
		boolean fromKept() {
			return this.fromKept;
		}

		@Override
		LockZnode znode() {
			return this.link.znode;
		}

		@Override
		int position() {
			return this.position;
		}

		@Override
		boolean handedOver() {
			return this.position > 1;
		}

		@Override
		CompletableFuture<Void> release(CuratorLockHandle handle) {
			List<Runnable> after = new ArrayList<>(2);
			boolean linkEnded = false;
			synchronized (LockKey.this) {
				if (!this.handles.remove(handle) || this.holds == 0) {
					return DONE;
				}
				this.holds--;
				if (handle.mode() == LockMode.WRITE) {
					this.writeHolds--;
				}
				if (this.holds > 0) {
					return DONE;
				}
				if (this.taken) {
					LockKey.this.takenAway.remove(this);
				}
				else {
					this.line.turn = null;
					this.line.pump(after);
					linkEnded = this.line.link != this.link;
				}
			}
			run(after);
			LockKey.this.grants.maybeIdle(LockKey.this);
			return linkEnded ? this.link.acquisition.end() : DONE;
		}

	}

	/** A READ request or a lease, with a znode of its own: its acquisition, then its grant. */
	final class Single extends Hold {

		final Waiter waiter;

		/** The caller's thread (for a thread's nested READ and its leases), {@code null} if asynchronous. */
		final @Nullable Thread caller;

		/** The thread the READ grant is bound to, {@code null} for a lease or an asynchronous grant. */
		final @Nullable Thread thread;

		/** Its acquisition (guarded by the key: replaced when its session expired while it waited). */
		ZnodeAcquisition acquisition;

		/** The granted znode (guarded by the key); {@code null} while waiting. */
		@Nullable LockZnode znode;

		/** Holds not released yet (guarded by the key). */
		int holds;

		/** Why its znode was ended by something other than its release (guarded by the key). */
		@Nullable String endedBy;

		Single(Waiter waiter) {
			this.waiter = waiter;
			this.caller = waiter.caller;
			this.thread = waiter.boundThread();
			this.acquisition = newAcquisition();
		}

		private ZnodeAcquisition newAcquisition() {
			return LockKey.this.newAcquisition(this.waiter.protocol, Math.max(1, this.waiter.leases),
					this.waiter.oneAttempt, false, this::decided);
		}

		private void decided(ZnodeAcquisition acquisition) {
			List<Runnable> after = new ArrayList<>(2);
			synchronized (LockKey.this) {
				if (!LockKey.this.singles.contains(this) || this.znode != null || acquisition != this.acquisition) {
					// Given up meanwhile: its acquisition was ended, and with it the znode.
					return;
				}
				KeeperException failure = acquisition.failure();
				String node = acquisition.node();
				if (acquisition.granted() && node != null
						&& acquisition.session() != LockKey.this.grants.znodes().sessionInstance()) {
					// Granted in a session that is not the client's now (or not known): never handed out.
					// Its znode goes, and the wait goes on in the current session.
					keepEvidence(this.waiter, acquisition);
					ending(acquisition, after);
					this.acquisition = newAcquisition();
					starting(this.acquisition, after);
				}
				else if (acquisition.granted() && node != null) {
					this.znode = new LockZnode(node, acquisition.session(), acquisition.czxid(),
							acquisition.grantedAt());
					this.holds = 1;
					grant(this.waiter, this, acquisition.grantedAt(), after);
				}
				else if (failure != null && requeues(failure, this.waiter)) {
					// The znode went (its session expired, another client deleted it) or the connection was
					// lost: the wait goes on.
					keepEvidence(this.waiter, acquisition);
					this.acquisition = newAcquisition();
					starting(this.acquisition, after);
				}
				else {
					LockKey.this.singles.remove(this);
					if (failure != null) {
						fail(this.waiter, LockKey.this.grants.translate(failure, LockKey.this.lockPath,
								this.waiter.mode), after);
					}
					else {
						after.add(() -> this.waiter.complete(Optional.empty()));
					}
				}
			}
			run(after);
			LockKey.this.grants.maybeIdle(LockKey.this);
		}

		@Override
		LockZnode znode() {
			LockZnode granted = this.znode;
			if (granted == null) {
				throw new IllegalStateException("Not granted: " + this.acquisition);
			}
			return granted;
		}

		@Override
		int position() {
			return 1;
		}

		@Override
		CompletableFuture<Void> release(CuratorLockHandle handle) {
			ZnodeAcquisition acquisition;
			synchronized (LockKey.this) {
				if (!this.handles.remove(handle) || this.holds == 0) {
					return DONE;
				}
				this.holds--;
				if (this.holds > 0) {
					return DONE;
				}
				LockKey.this.singles.remove(this);
				acquisition = this.acquisition;
				LockKey.this.endsToSend++;
			}
			CompletableFuture<Void> deleted;
			try {
				deleted = acquisition.end();
			}
			finally {
				endSent();
			}
			LockKey.this.grants.maybeIdle(LockKey.this);
			return deleted;
		}

	}

	/**
	 * The znode this application holds for a line's turns, granted through ZooKeeper and ridden by
	 * consecutive turns.
	 */
	final class Link {

		final ZnodeAcquisition acquisition;

		final LockZnode znode;

		/**
		 * Before the latest request whose answer showed the session alive: the requests that granted
		 * the znode, or a later {@code exists} of it (a kept znode's); the server heard from the
		 * session after it (guarded by the key).
		 */
		long confirmedAt;

		/** Whether the znode may be kept: created with the mark that tells other participants so. */
		final boolean keepable;

		/** Turns granted on it so far (guarded by the key). */
		int grants;

		/** Turns granted on it while it was kept, without a ZooKeeper request (guarded by the key). */
		int keptGrants;

		/** Whether its children are listed, to learn whether another participant queues behind it (guarded by the key). */
		boolean watching;

		/** Whether another participant queues behind it; only ever set. */
		volatile boolean othersWaiting;

		/** Whether it is kept: its last turn ended and no turn was granted on it since (guarded by the key). */
		boolean kept;

		/** When it was last kept, by the registry's clock (guarded by the key). */
		long keptSince;

		/** Whether an {@code exists} confirming it is on its way (guarded by the key). */
		boolean confirming;

		/** Whether a watch on its data is set, through which a revocation request gives a kept znode up (guarded by the key). */
		boolean dataWatched;

		/** Gives the znode up when kept and its data changes (a revocation request) or it is deleted. */
		final Watcher dataWatcher;

		/**
		 * Lists the children again when they change while nobody else was seen queued, and gives the
		 * znode up at once when it is kept; one per link.
		 */
		private final Watcher childrenWatcher;

		Link(ZnodeAcquisition acquisition, String node, long requestedAt, Line line) {
			this.acquisition = acquisition;
			this.znode = new LockZnode(node, acquisition.session(), acquisition.czxid(), acquisition.grantedAt());
			this.confirmedAt = requestedAt;
			this.keepable = acquisition.keepable();
			this.othersWaiting = acquisition.othersQueued();
			// A keepable znode's granting listing set the children watch already (see Line#decided).
			this.watching = this.othersWaiting || acquisition.childrenWatched();
			this.dataWatcher = (event) -> {
				if (event.getType() == Watcher.Event.EventType.NodeDataChanged
						|| event.getType() == Watcher.Event.EventType.NodeDeleted) {
					if (line.giveUpKept(this, KeptKeys.Cause.REVOKED) == null) {
						// Held: the revocation check of held grants acts on it. Set again when kept next.
						line.dataUnwatched(this);
					}
				}
			};
			this.childrenWatcher = (event) -> {
				if (event.getType() == Watcher.Event.EventType.NodeChildrenChanged && !this.othersWaiting
						&& line.isLink(this) && line.giveUpKept(this, KeptKeys.Cause.ASKED) == null) {
					listChildren(line);
				}
			};
		}

		/**
		 * The children watch of the listing that granted the znode fired. While the first turn
		 * holds it, as if no watch had been set: the children are listed when the znode is kept or
		 * handed over; afterwards, as the link's own watch.
		 */
		void grantingWatchFired(Line line, WatchedEvent event) {
			synchronized (LockKey.this) {
				if (!line.isLink(this)) {
					return;
				}
				if (!this.kept && this.grants <= 1) {
					this.watching = false;
					return;
				}
			}
			this.childrenWatcher.process(event);
		}

		/**
		 * Learn whether another participant queues behind the znode: its bounds apply then, and a
		 * kept znode is given up.
		 */
		void listChildren(Line line) {
			LockKey.this.grants.znodes().children(LockKey.this.lockPath, this.childrenWatcher, (code, children) -> {
				boolean answered = code == KeeperException.Code.OK.intValue() && children != null;
				if (!answered || Protocol.participants(children) > 1) {
					this.othersWaiting = true;
					line.giveUpKept(this, answered ? KeptKeys.Cause.ASKED : KeptKeys.Cause.SESSION);
				}
			});
		}

	}

	/** The FIFO queue of one exclusive protocol's requests, its turn and its znode; guarded by the key. */
	final class Line {

		final Protocol protocol;

		private final String name;

		final ArrayDeque<Waiter> waiters = new ArrayDeque<>(2);

		@Nullable Turn turn;

		@Nullable Link link;

		/** The acquisition of a znode for the waiters, while one is under way. */
		@Nullable ZnodeAcquisition acquiring;

		/** When {@link #acquiring} was started. */
		long acquiringSince;

		/** Turns granted so far; a waiter that saw one granted after it queued saw the lock held. */
		long turnsGranted;

		/**
		 * Whether the key stays with this application: a grant rode a kept znode of this line since
		 * it last gave one up unused. Such a line keeps a znode it had to wait for another participant
		 * for; another does not (see {@link #keeps}).
		 */
		boolean stays;

		Line(Protocol protocol) {
			this.protocol = protocol;
			this.name = LockKey.this.lockPath + " " + protocol;
		}

		boolean idle() {
			return this.waiters.isEmpty() && this.turn == null && this.link == null && this.acquiring == null;
		}

		boolean isTurnOf(Thread thread) {
			Turn current = this.turn;
			return current != null && current.thread == thread;
		}

		boolean isLink(Link candidate) {
			synchronized (LockKey.this) {
				return this.link == candidate;
			}
		}

		void enqueue(Waiter waiter, List<Runnable> after) {
			Thread thread = waiter.boundThread();
			if (thread != null && isTurnOf(thread)) {
				nest(waiter, after);
				return;
			}
			if (refuseIfTakenAway(waiter, after)) {
				return;
			}
			if (waiter.oneAttempt && (this.turn != null || !this.waiters.isEmpty())) {
				// Held or queued for in this application: busy, with no request.
				after.add(() -> waiter.complete(Optional.empty()));
				return;
			}
			waiter.turnsAtQueue = this.turnsGranted;
			if (this.turn != null) {
				waiter.sawHeld = true;
			}
			this.waiters.add(waiter);
			pump(after);
		}

		/** A further hold of the waiting thread's turn. */
		void nest(Waiter waiter, List<Runnable> after) {
			Turn current = this.turn;
			if (current == null) {
				throw new IllegalStateException("No turn to nest in on " + LockKey.this.lockPath);
			}
			if (waiter.mode == LockMode.WRITE && current.writeHolds == 0) {
				// The turn holds READ only (its WRITE was released first): no read-to-write upgrade.
				fail(waiter, new LockUpgradeException(LockKey.this.lockPath), after);
				return;
			}
			current.holds++;
			if (waiter.mode == LockMode.WRITE) {
				current.writeHolds++;
			}
			grant(waiter, current, LockKey.this.grants.nanoTime(), after);
		}

		/** Refuse a thread's request nested in a turn of it that was taken away and not released. */
		boolean refuseIfTakenAway(Waiter waiter, List<Runnable> after) {
			Thread thread = waiter.boundThread();
			for (Turn lost : LockKey.this.takenAway) {
				if (lost.line == this && lost.thread == thread) {
					String reason = lost.link.znode.endedBy();
					fail(waiter, enclosingLost(waiter.mode, (reason != null) ? reason : "ended"), after);
					return true;
				}
			}
			return false;
		}

		/**
		 * Take a waiter out of the line; see {@link LockKey#giveUp(Waiter)}.
		 * @return {@link Withdrawal#DECIDED} if it was not in the line
		 */
		Withdrawal withdraw(Waiter waiter, List<Runnable> after, List<ZnodeAcquisition> ended) {
			if (!this.waiters.remove(waiter)) {
				return Withdrawal.DECIDED;
			}
			ZnodeAcquisition pending = this.acquiring;
			Link kept = this.link;
			boolean sawHeld = waiter.sawHeld || this.turn != null || this.turnsGranted != waiter.turnsAtQueue
					|| (pending != null && pending.sawHeld());
			pump(after);
			// What nobody waits for any more was ended by the pump.
			if (pending != null && this.acquiring != pending) {
				ended.add(pending);
			}
			if (kept != null && this.link != kept) {
				ended.add(kept.acquisition);
			}
			return sawHeld ? Withdrawal.BUSY : Withdrawal.UNANSWERED;
		}

		/**
		 * Move the line on: grant the head waiter on a usable znode, else let the znode go and queue
		 * one for the waiters, or end the acquisition nobody waits for. With nobody waiting, a
		 * keepable znode nobody else asked for is kept. Nothing while a turn is held.
		 */
		void pump(List<Runnable> after) {
			if (this.turn != null) {
				return;
			}
			Link current = this.link;
			// One reading of the clock for the check of a hand-over and the time of its grant.
			long now = LockKey.this.grants.nanoTime();
			if (current != null) {
				Use use = this.waiters.isEmpty() ? (keeps(current) ? Use.KEEP : Use.END) : use(current, now);
				if (use == Use.KEEP) {
					keep(current, now, after);
					return;
				}
				if (use == Use.CONFIRM) {
					confirm(current, after);
					return;
				}
				if (use == Use.END) {
					unlink(current, after, endCause(current));
					current = null;
				}
			}
			if (this.waiters.isEmpty()) {
				ZnodeAcquisition pending = this.acquiring;
				if (pending != null) {
					this.acquiring = null;
					ending(pending, after);
				}
				return;
			}
			if (current != null) {
				Waiter head = this.waiters.poll();
				boolean fromKept = current.kept;
				if (fromKept) {
					current.kept = false;
					current.keptGrants++;
					KeptKeys kept = LockKey.this.grants.keptKeys();
					kept.keptChanged(-1);
					kept.grantedFromKept();
					kept.keptPaidOff(name());
					this.stays = true;
				}
				current.grants++;
				this.turnsGranted++;
				if (current.grants > 1 && !current.watching) {
					current.watching = true;
					Link watched = current;
					after.add(() -> watched.listChildren(this));
				}
				this.turn = new Turn(this, head.boundThread(), current, head.mode, fromKept);
				grant(head, this.turn, (current.grants == 1) ? current.znode.heldSince : now, after);
				return;
			}
			if (this.acquiring == null) {
				Waiter head = this.waiters.peek();
				ZnodeAcquisition acquisition = LockKey.this.newAcquisition(this.protocol, 1, head.oneAttempt,
						head.keep, this::decided);
				this.acquiring = acquisition;
				this.acquiringSince = LockKey.this.grants.nanoTime();
				starting(acquisition, after);
			}
		}

		/**
		 * Let the link go: its znode is deleted once the monitor is released.
		 * @param cause why, counted when the znode was kept; {@code null} to count nothing
		 */
		private void unlink(Link current, List<Runnable> after, KeptKeys.@Nullable Cause cause) {
			this.link = null;
			if (current.kept) {
				current.kept = false;
				KeptKeys kept = LockKey.this.grants.keptKeys();
				kept.keptChanged(-1);
				if (cause != null) {
					kept.gaveUp(cause);
				}
				if (cause == KeptKeys.Cause.ASKED && current.keptGrants == 0) {
					kept.givenUpUnused(name());
					this.stays = false;
				}
				after.add(() -> kept.forget(this));
			}
			ending(current.acquisition, after);
		}

		/** Why a kept znode that is let go on its own is given up (see {@link #use}). */
		private KeptKeys.Cause endCause(Link current) {
			Znodes znodes = LockKey.this.grants.znodes();
			if (current.othersWaiting) {
				return KeptKeys.Cause.ASKED;
			}
			if (current.znode.session != znodes.sessionInstance() || !znodes.connected()) {
				return KeptKeys.Cause.SESSION;
			}
			return (current.znode.endedBy() != null) ? KeptKeys.Cause.REVOKED : KeptKeys.Cause.CLOSED;
		}

		/**
		 * Whether a znode whose last turn ended, with nobody waiting here, stays with this application:
		 * created keepable, nobody else seen queued behind it, nothing ended it, its session the
		 * client's and connected, the registry not closed, not granted after waiting for another
		 * participant's znode unless the key {@link #stays} here, and the line not contested
		 * ({@link KeptKeys#givenUpUnused}).
		 */
		private boolean keeps(Link current) {
			if (!current.keepable || current.grants == 0 || current.othersWaiting || !sound(current)
					|| LockKey.this.dropped || LockKey.this.grants.keptKeys().closed()) {
				return false;
			}
			KeptKeys kept = LockKey.this.grants.keptKeys();
			if (current.acquisition.waitedForOther() && !this.stays) {
				// The key moved here from elsewhere: a visit.
				kept.skippedMovedHere();
				return false;
			}
			return !kept.skipsKeeping(name());
		}

		/** The line's name for {@link KeptKeys}: its key's lock path and its protocol. */
		String name() {
			return this.name;
		}

		/** Keep the znode: counted, bounded, and watched for other participants. */
		private void keep(Link current, long now, List<Runnable> after) {
			KeptKeys kept = LockKey.this.grants.keptKeys();
			if (!current.kept) {
				current.kept = true;
				kept.keptChanged(1);
			}
			current.keptSince = now;
			Map<Line, Long> evicted = kept.keep(this, now);
			if (!current.watching) {
				// Kept after a single grant: nothing listed its children since; who queued meanwhile is
				// found by this listing, who queues later by its watch.
				current.watching = true;
				after.add(() -> current.listChildren(this));
			}
			if (!current.dataWatched) {
				current.dataWatched = true;
				// Marked for revocation while held and not watched then: given up as the mark is read.
				after.add(() -> LockKey.this.grants.znodes().watchKept(current.znode.path, current.dataWatcher,
						(code, unmarked) -> {
							if (code != KeeperException.Code.OK.intValue() || !Boolean.TRUE.equals(unmarked)) {
								giveUpKept(current, KeptKeys.Cause.REVOKED);
							}
						}));
			}
			if (!evicted.isEmpty()) {
				after.add(() -> evicted.forEach((line, keptSince) -> line.giveUpKept(keptSince, KeptKeys.Cause.MAX_KEYS)));
			}
		}

		/**
		 * Ask whether a kept znode is still there, its session answering: a request for it came more
		 * than half a negotiated session timeout after the last answer that showed the session alive.
		 * The waiters wait for the answer.
		 */
		private void confirm(Link current, List<Runnable> after) {
			if (current.confirming) {
				return;
			}
			current.confirming = true;
			long sentAt = LockKey.this.grants.nanoTime();
			after.add(() -> LockKey.this.grants.znodes().exists(current.znode.path,
					(code, exists) -> confirmed(current, code, Boolean.TRUE.equals(exists), sentAt)));
		}

		/** The answer to {@link #confirm}: the session was alive when it was sent, or the znode is gone. */
		private void confirmed(Link current, int code, boolean exists, long sentAt) {
			List<Runnable> after = new ArrayList<>(2);
			synchronized (LockKey.this) {
				current.confirming = false;
				boolean answered = code == KeeperException.Code.OK.intValue();
				if (answered && exists) {
					current.confirmedAt = Math.max(current.confirmedAt, sentAt);
				}
				else if (this.link == current) {
					// Gone (revoked, deleted by another client), or its session did not answer: let go.
					unlink(current, after, answered ? KeptKeys.Cause.REVOKED : KeptKeys.Cause.SESSION);
				}
				if (this.link == current || this.link == null) {
					pump(after);
				}
			}
			run(after);
			LockKey.this.grants.maybeIdle(LockKey.this);
		}

		/**
		 * Give a kept znode up: deleted, so that the participant that asked is granted; waiters of
		 * this application, if any came meanwhile, queue a new znode.
		 * @param expected the link that was kept, or {@code null} for any
		 * @return completes once the delete is answered; {@code null} if the znode was not kept (in
		 * use again, or given up already)
		 */
		@Nullable CompletableFuture<Void> giveUpKept(@Nullable Link expected, KeptKeys.Cause cause) {
			Link current;
			List<Runnable> after = new ArrayList<>(2);
			synchronized (LockKey.this) {
				current = this.link;
				if (current == null || !current.kept || (expected != null && current != expected)) {
					return null;
				}
				unlink(current, after, cause);
				pump(after);
			}
			run(after);
			LockKey.this.grants.maybeIdle(LockKey.this);
			return current.acquisition.end();
		}

		/**
		 * Give a kept znode up if it is still the one kept at {@code keptSince} (see
		 * {@link #giveUpKept(Link, KeptKeys.Cause)}).
		 * @param keptSince when it was kept, as the entry of {@link KeptKeys} says
		 */
		@Nullable CompletableFuture<Void> giveUpKept(long keptSince, KeptKeys.Cause cause) {
			Link current;
			synchronized (LockKey.this) {
				current = this.link;
				if (current == null || !current.kept || current.keptSince != keptSince) {
					return null;
				}
			}
			return giveUpKept(current, cause);
		}

		/** The data watch of a link fired while it was not kept: set again when it is kept next. */
		void dataUnwatched(Link current) {
			synchronized (LockKey.this) {
				current.dataWatched = false;
			}
		}

		/** Whether the znode's session is the client's and connected, and nothing ended it. */
		private boolean sound(Link current) {
			Znodes znodes = LockKey.this.grants.znodes();
			return current.znode.endedBy() == null && current.znode.session == znodes.sessionInstance()
					&& znodes.connected();
		}

		/**
		 * What a waiter does with the link's znode: ride it, have a kept one confirmed first, or let
		 * it go. One more turn may ride it while its session is the client's and connected and
		 * nothing ended it; for a hand-over besides, within the hand-off bounds while another
		 * participant waits, and within half a negotiated session timeout of the last answer that
		 * showed the session alive (a process paused longer than its session timeout runs again
		 * before its client hears of the expiry): past that, a keepable znode is confirmed by a read
		 * first, another is let go. A kept znode another participant asked for is let go.
		 */
		private Use use(Link current, long now) {
			if (!sound(current)) {
				return Use.END;
			}
			if (current.grants == 0) {
				return Use.GRANT;
			}
			if (current.kept && current.othersWaiting) {
				return Use.END;
			}
			LocalHandoff handoff = LockKey.this.grants.handoff();
			if (!current.keepable && !handoff.enabled()) {
				return Use.END;
			}
			if (current.othersWaiting && (!handoff.enabled() || current.grants >= handoff.maxGrants()
					|| now - current.znode.heldSince >= handoff.maxTime().toNanos())) {
				return Use.END;
			}
			long safeNanos = TimeUnit.MILLISECONDS.toNanos(LockKey.this.grants.znodes().sessionTimeoutMs()) / 2;
			if (now - current.confirmedAt >= safeNanos) {
				return current.keepable ? Use.CONFIRM : Use.END;
			}
			return Use.GRANT;
		}

		private void decided(ZnodeAcquisition acquisition) {
			List<Runnable> after = new ArrayList<>(2);
			synchronized (LockKey.this) {
				if (this.acquiring != acquisition) {
					// Ended by this line already (nobody waited any more), and with it the znode.
					return;
				}
				this.acquiring = null;
				KeeperException failure = acquisition.failure();
				String node = acquisition.node();
				if (failure != null) {
					// The waiters whose waits go on queue again (below); ZooKeeper failed the others'.
					RuntimeException translated = LockKey.this.grants.translate(failure, LockKey.this.lockPath,
							(this.protocol == Protocol.WRITE) ? LockMode.WRITE : LockMode.EXCLUSIVE);
					boolean sawHeld = acquisition.sawHeld();
					this.waiters.removeIf((waiter) -> {
						boolean failed = !requeues(failure, waiter);
						if (failed) {
							fail(waiter, translated, after);
						}
						else if (sawHeld) {
							waiter.sawHeld = true;
						}
						return failed;
					});
				}
				else if (acquisition.granted() && node != null) {
					Link linked = new Link(acquisition, node, this.acquiringSince, this);
					this.link = linked;
					if (acquisition.childrenWatched() && !linked.othersWaiting) {
						// Its events reach the link once it is this line's (what came meanwhile, at once).
						after.add(() -> acquisition.watchChildren((event) -> linked.grantingWatchFired(this, event)));
					}
				}
				else {
					// One look, not granted: the head waiter asked for no more, if it is still the head.
					Waiter head = this.waiters.peek();
					if (head != null && head.oneAttempt) {
						this.waiters.poll();
						after.add(() -> head.complete(Optional.empty()));
					}
				}
				pump(after);
			}
			run(after);
			LockKey.this.grants.maybeIdle(LockKey.this);
		}

		/** End the turn and the znode if the link is on {@code node}; see {@link LockKey#endZnode}. */
		boolean endLink(String node, String reason, List<CuratorLockHandle> lost, List<Runnable> after) {
			Link current = this.link;
			if (current == null || !current.znode.path.equals(node)) {
				return false;
			}
			current.znode.endedBy(reason);
			if (current.kept) {
				unlink(current, after, KeptKeys.Cause.REVOKED);
			}
			Turn holder = this.turn;
			if (holder != null) {
				holder.lose(reason, lost);
				holder.taken = true;
				this.turn = null;
				if (holder.thread != null) {
					LockKey.this.takenAway.add(holder);
				}
			}
			pump(after);
			return true;
		}

		void collectKept(List<KeptLock> kept, long now, Instant wallNow) {
			Link current = this.link;
			if (current != null && current.kept) {
				kept.add(new KeptLock(LockKey.this.lockPath, (this.protocol == Protocol.WRITE) ? LockMode.WRITE
						: LockMode.EXCLUSIVE, current.znode.path, current.znode.czxid(), current.grants,
						wallNow.minusNanos(Math.max(0, now - current.keptSince))));
			}
		}

		void collectWaiting(List<WaitingLock> waiting) {
			LockMode mode = (this.protocol == Protocol.WRITE) ? LockMode.WRITE : LockMode.EXCLUSIVE;
			for (Waiter waiter : this.waiters) {
				waiting.add(new WaitingLock(LockKey.this.lockPath, mode, waiter.waiterName(), waiter.since));
			}
		}

	}

}
