package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.state.ConnectionState;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.spi.RequestRules;

/**
 * One application's lock keys ({@link Grants}, {@link LockKey}, {@link ZnodeAcquisition},
 * {@link HeldLocks}: the registry's code without Curator) on an {@link InMemoryZooKeeper}, and the
 * invariants of the local queue as assertions:
 * <ul>
 * <li>never two holders of one key inside the critical section at once unless every one but the
 * last was told (its grant is no longer HELD when the next enters);</li>
 * <li>every znode the application created is deleted exactly once by it, or went with its
 * session, once its grants and waiters are gone;</li>
 * <li>every request ends: granted, refused or failed (the model checker reports a thread that
 * never ends as a hang).</li>
 * </ul>
 * Waits run until granted, as the model checker explores no timeouts; a wait's end is an explicit
 * step ({@link #timeOut}) that runs what a timeout runs.
 */
final class LocalQueueModel {

	static final String PATH = "/locks/key";

	/** Another key of the same application. */
	static final String OTHER_PATH = "/locks/other";

	final InMemoryZooKeeper zooKeeper;

	final HeldLocks heldLocks = new HeldLocks();

	final Grants grants;

	/** The registry's clock, moved on only by {@link #runTimers()}. */
	private final AtomicLong clock = new AtomicLong();

	private final ManualTimer timer = new ManualTimer(this.clock);

	/** The grants inside the critical section of their key now (guarded by itself). */
	private final List<LockHandle> inside = new ArrayList<>();

	private final List<String> violations = new ArrayList<>();

	LocalQueueModel() {
		this.zooKeeper = new InMemoryZooKeeper();
		this.grants = new Grants(this.zooKeeper, this.heldLocks, this.timer, this.clock::get, 100, new Grants.Failures() {

			@Override
			public RuntimeException translate(Throwable failure, String lockPath, LockMode mode) {
				return (failure instanceof LockException typed) ? typed
						: new LockException("Could not acquire " + mode + " lock '" + lockPath + "': " + failure, failure);
			}

			@Override
			public RuntimeException notAnswered(String lockPath, LockMode mode, boolean connected) {
				return new LockException("Could not acquire " + mode + " lock '" + lockPath + "': "
						+ (connected ? "no answer showed it held" : "not connected"));
			}

		}, (node, lockPath, mode) -> {
			throw new IllegalStateException("The in-memory ZooKeeper returns every czxid with the create");
		});
	}

	/** A synchronous request of the calling thread, waiting until it ends. */
	Waiter request(LockMode mode) {
		return new Waiter(Thread.currentThread(), mode, Protocol.of(mode, true, 0), 0, false, true, RequestRules.NO_CEILING);
	}

	/**
	 * A synchronous request of the calling thread with a wait time, whose end is an explicit step
	 * ({@link #timeOut}): the model checker explores no timed waits.
	 */
	Waiter timedRequest(LockMode mode) {
		return new Waiter(Thread.currentThread(), mode, Protocol.of(mode, true, 0), 0, false, false, RequestRules.NO_CEILING);
	}

	/** A synchronous request of the calling thread that makes one attempt. */
	Waiter oneAttempt(LockMode mode) {
		return new Waiter(Thread.currentThread(), mode, Protocol.of(mode, true, 0), 0, true, false, RequestRules.NO_CEILING);
	}

	/** A synchronous request of the calling thread, whose grant ends at a ceiling (see {@link #runTimers()}). */
	Waiter request(LockMode mode, Duration lockAtMostFor) {
		return new Waiter(Thread.currentThread(), mode, Protocol.of(mode, true, 0), 0, false, true, lockAtMostFor);
	}

	/** A synchronous request of the calling thread, waiting until it ends, whose znode may be kept. */
	Waiter keptRequest(LockMode mode) {
		Waiter waiter = request(mode);
		waiter.keep = true;
		return waiter;
	}

	/** An asynchronous request, owned by no thread, whose znode may be kept. */
	Waiter keptAsync(LockMode mode) {
		Waiter waiter = async(mode);
		waiter.keep = true;
		return waiter;
	}

	/**
	 * A grant's znode is there while the grant says HELD, checked under its key's monitor: a kept
	 * znode given up (deleted, so that another participant is granted) never carries a grant.
	 */
	void checkZnodeThere(LockHandle handle) {
		if (handle instanceof CuratorLockHandle grant) {
			boolean gone;
			synchronized (grant.hold().key()) {
				gone = grant.state() == LockState.HELD && !this.zooKeeper.ownZnodes().contains(grant.nodePath());
			}
			if (gone) {
				synchronized (this.inside) {
					this.violations.add("held on a znode that is gone: " + grant);
				}
			}
		}
	}

	/** No grant of the application on the key is HELD: another participant's znode is first now. */
	void checkNoneHeld() {
		for (LockHandle handle : this.heldLocks.handles()) {
			if (handle.path().equals(PATH) && handle.state() == LockState.HELD) {
				synchronized (this.inside) {
					this.violations.add("held while another participant is first: " + handle);
				}
			}
		}
	}

	/** An asynchronous request, owned by no thread. */
	Waiter async(LockMode mode) {
		return new Waiter(null, mode, Protocol.of(mode, true, 0), 0, false, true, RequestRules.NO_CEILING);
	}

	/** An asynchronous request, owned by no thread, whose grant ends at a ceiling (see {@link #runTimers()}). */
	Waiter async(LockMode mode, Duration lockAtMostFor) {
		return new Waiter(null, mode, Protocol.of(mode, true, 0), 0, false, true, lockAtMostFor);
	}

	/** An asynchronous request of a permit of a semaphore of one, owned by no thread. */
	Waiter asyncPermit() {
		return new Waiter(null, LockMode.EXCLUSIVE, Protocol.LEASE, 1, false, true, RequestRules.NO_CEILING);
	}

	/** A request of the calling thread for a permit of a semaphore of one that makes one attempt. */
	Waiter oneAttemptPermit() {
		return new Waiter(Thread.currentThread(), LockMode.EXCLUSIVE, Protocol.LEASE, 1, true, false,
				RequestRules.NO_CEILING);
	}

	/** Queue a request and wait for its outcome on the calling thread, as {@code tryAcquire} does. */
	Optional<RegistryGrant> acquire(Waiter waiter) {
		return acquire(PATH, waiter);
	}

	/** Queue a request on a lock path and wait for its outcome on the calling thread. */
	Optional<RegistryGrant> acquire(String lockPath, Waiter waiter) {
		this.grants.submit(lockPath, waiter);
		if (waiter.forever) {
			return this.grants.await(waiter, lockPath, 0);
		}
		// A timed wait ends when the scenario says (timeOut), not by the clock; one attempt ends by itself.
		try {
			return waiter.join();
		}
		catch (CompletionException ex) {
			throw this.grants.translate(ex.getCause(), lockPath, waiter.mode);
		}
	}

	/** Queue a request without waiting, as {@code submit} does. */
	CompletableFuture<Optional<RegistryGrant>> submit(Waiter waiter) {
		this.grants.submit(PATH, waiter);
		return waiter;
	}

	/** End a wait as its time running out does. */
	void timeOut(Waiter waiter) {
		this.grants.timeOut(waiter, PATH);
	}

	/**
	 * Enter the critical section with a grant, checking that no other holder inside was left untold,
	 * and that a grant whose znode was ended (revoked, past its ceiling) knows it.
	 */
	void enter(LockHandle handle) {
		checkTold(handle);
		synchronized (this.inside) {
			for (LockHandle other : this.inside) {
				if (other.path().equals(handle.path()) && other.state() == LockState.HELD
						&& handle.state() == LockState.HELD) {
					this.violations.add("two holders inside, neither told: " + other + " and " + handle);
				}
			}
			this.inside.add(handle);
		}
	}

	void leave(LockHandle handle) {
		synchronized (this.inside) {
			this.inside.remove(handle);
		}
	}

	/** Take the grant, enter, leave and release it: one holder's whole turn. */
	void hold(Optional<RegistryGrant> granted) {
		granted.ifPresent((handle) -> {
			enter(handle);
			leave(handle);
			checkTold(handle);
			handle.release();
		});
	}

	/**
	 * A grant on a znode this application no longer holds must not say HELD: checked under its
	 * key's monitor, under which a znode is ended and its grants made LOST together.
	 */
	void checkTold(LockHandle handle) {
		if (handle instanceof CuratorLockHandle grant) {
			boolean untold;
			synchronized (grant.hold().key()) {
				untold = grant.znodeEndedBy() != null && grant.state() == LockState.HELD;
			}
			if (untold) {
				synchronized (this.inside) {
					this.violations.add("held on a znode that was ended (" + grant.znodeEndedBy() + "), untold: " + grant);
				}
			}
		}
	}

	/**
	 * Run the timer's tasks (ceilings, asynchronous deadlines) scheduled so far, each at its time:
	 * the clock moves on to it first.
	 */
	void runTimers() {
		this.timer.runAll();
	}

	/** Suspend the connection, and tell the grants as Curator's SUSPENDED does. */
	void suspend() {
		this.zooKeeper.suspend();
		this.heldLocks.changed(ConnectionState.SUSPENDED, this.zooKeeper.sessionInstance());
	}

	/** Reconnect in the same session, and tell the grants as Curator's RECONNECTED does. */
	void reconnect() {
		this.zooKeeper.reconnect();
		this.heldLocks.changed(ConnectionState.RECONNECTED, this.zooKeeper.sessionInstance());
	}

	/** End whatever znode the application holds now, as a revocation or a ceiling does. */
	void endHeldZnode(String reason, boolean ceiling) {
		for (String node : this.zooKeeper.ownZnodes()) {
			this.grants.endZnode(node, reason, ceiling);
		}
	}

	/** The first znode of the application in the key's queue, {@code null} if none. */
	@Nullable String ownZnode() {
		List<String> own = this.zooKeeper.ownZnodes();
		return own.isEmpty() ? null : own.get(0);
	}

	/**
	 * Check the invariants once the scenario's threads are done: no untold overlap, no grant still
	 * tracked, every created znode deleted once (or gone with its session), none left, nothing
	 * waiting.
	 * @param expiredSessions whether a session expired (its znodes went without a delete)
	 */
	void finish(boolean expiredSessions) {
		// What a registry's close does first: kept znodes are deleted.
		this.grants.giveUpKept(KeptKeys.Cause.CLOSED);
		this.timer.shutdownNow();
		check(this.violations.isEmpty(), "untold overlaps: " + this.violations);
		check(this.heldLocks.size() == 0, "grants still tracked: " + this.heldLocks.handles());
		check(this.zooKeeper.ownZnodes().isEmpty(), "znodes of the application left behind: " + this.zooKeeper.ownZnodes());
		Map<String, Integer> deletes = this.zooKeeper.deletes();
		for (String node : this.zooKeeper.created()) {
			int sent = deletes.getOrDefault(node, 0);
			check(sent == 1 || (expiredSessions && sent == 0), sent + " deletes sent for " + node);
		}
		check(this.grants.waiting().isEmpty(), "requests still waiting: " + this.grants.waiting());
	}

	/**
	 * Assert without AssertJ, whose assertion objects the model checker cannot compare while it
	 * records a schedule.
	 */
	static void check(boolean condition, String message) {
		if (!condition) {
			throw new AssertionError(message);
		}
	}

	/**
	 * The registry's timer, run by hand: tasks are kept with their time on the model's clock and
	 * run by {@link #runAll()} on the calling thread, so that the model checker orders them with
	 * the other steps (it explores no timed waits). Only what the registry uses ({@code schedule} of
	 * a runnable, {@code cancel}) is there, on a plain list and this object's monitor: a thread
	 * pool's queue and locks would add steps to every schedule the model checker runs and explores.
	 */
	private static final class ManualTimer extends AbstractExecutorService implements ScheduledExecutorService {

		private final AtomicLong clock;

		/** Tasks not run yet (guarded by this). */
		private final List<Task> tasks = new ArrayList<>();

		/** Whether tasks are refused (guarded by this). */
		private boolean shutDown;

		ManualTimer(AtomicLong clock) {
			this.clock = clock;
		}

		@Override
		public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
			Task task = new Task(command, this.clock.get() + unit.toNanos(delay));
			synchronized (this) {
				if (this.shutDown) {
					throw new RejectedExecutionException("shut down");
				}
				this.tasks.add(task);
			}
			return task;
		}

		void runAll() {
			while (true) {
				Task next;
				synchronized (this) {
					if (this.tasks.isEmpty()) {
						return;
					}
					next = this.tasks.get(0);
					for (Task task : this.tasks) {
						next = (task.at < next.at) ? task : next;
					}
					this.tasks.remove(next);
				}
				this.clock.accumulateAndGet(next.at, Math::max);
				next.command.run();
			}
		}

		/** A cancelled task is removed: it never runs. */
		synchronized boolean cancel(Task task) {
			return this.tasks.remove(task);
		}

		@Override
		public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
			throw new UnsupportedOperationException("the registry schedules runnables only");
		}

		@Override
		public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
			throw new UnsupportedOperationException("the registry schedules no periodic tasks");
		}

		@Override
		public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
			throw new UnsupportedOperationException("the registry schedules no periodic tasks");
		}

		@Override
		public void execute(Runnable command) {
			throw new UnsupportedOperationException("the registry schedules its tasks");
		}

		@Override
		public synchronized void shutdown() {
			this.shutDown = true;
		}

		@Override
		public synchronized List<Runnable> shutdownNow() {
			this.shutDown = true;
			List<Runnable> left = new ArrayList<>(this.tasks.size());
			for (Task task : this.tasks) {
				left.add(task.command);
			}
			this.tasks.clear();
			return left;
		}

		@Override
		public synchronized boolean isShutdown() {
			return this.shutDown;
		}

		@Override
		public synchronized boolean isTerminated() {
			return this.shutDown;
		}

		@Override
		public boolean awaitTermination(long timeout, TimeUnit unit) {
			return isTerminated();
		}

		/** A task and its time on the model's clock. */
		private final class Task implements ScheduledFuture<Void> {

			final Runnable command;

			final long at;

			Task(Runnable command, long at) {
				this.command = command;
				this.at = at;
			}

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				return ManualTimer.this.cancel(this);
			}

			@Override
			public boolean isCancelled() {
				throw new UnsupportedOperationException("the registry only cancels");
			}

			@Override
			public boolean isDone() {
				throw new UnsupportedOperationException("the registry only cancels");
			}

			@Override
			public Void get() {
				throw new UnsupportedOperationException("the registry only cancels");
			}

			@Override
			public Void get(long timeout, TimeUnit unit) {
				throw new UnsupportedOperationException("the registry only cancels");
			}

			@Override
			public long getDelay(TimeUnit unit) {
				return unit.convert(this.at - ManualTimer.this.clock.get(), TimeUnit.NANOSECONDS);
			}

			@Override
			public int compareTo(Delayed other) {
				return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
			}

		}

	}

}
