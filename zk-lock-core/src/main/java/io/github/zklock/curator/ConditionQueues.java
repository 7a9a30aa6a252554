package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.spi.LockConditions;

/**
 * The condition queues of a registry's locks (see {@link LockConditions}), on {@link Znodes}: a
 * waiter is an ephemeral sequential znode named {@value #WAITER_NAME} (Curator's protected name,
 * {@code _c_<guid>-waiter-0000000042}) in the container {@value #QUEUE} below the lock path
 * (created with the first waiter, removed by ZooKeeper some time after the last one left, as a
 * semaphore's {@code leases}). Among the lock's own znodes the container is one more child, which
 * the lock recipes' sorters leave after every lock znode (its name has no lock name), and which
 * the registry does not count as a participant ({@link Protocol#participants}); the waiters' comings
 * and goings do not change the lock path's children, which the lock's holders watch.
 *
 * <p>Requests: {@code enqueue} a create (refused when the container is missing, then sent again
 * after the container's create), then a {@code getData} that watches the waiter's znode (sent at
 * once, answered while the caller releases its lock); {@code signal} a {@code getChildren} of the
 * container and a delete of the lowest-numbered waiter (another for
 * each waiter that left meanwhile); {@code signalAll} one delete per waiter, sent together; a
 * waiter whose time runs out a delete. The requester's thread waits for each answer at most the
 * client's connection timeout.
 *
 * <p>A waiter wakes when its znode is deleted (the watch's {@code NodeDeleted}, or a watch that
 * finds it gone) in the session that created it; it is lost when the session ends first (the
 * watch's {@code Expired}, the registry's {@link #sessionLost()}, or a session seen changed). A
 * signal may have gone to the znode the session took with it, so a lost waiter passes one on: it
 * wakes the longest other waiter (a spurious wake-up at worst, never a lost signal).
 */
final class ConditionQueues implements LockConditions {

	/**
	 * The container below a lock path that holds its condition's waiters, as a semaphore's
	 * {@code leases} hold its leases: their creates and deletes do not change the lock path's
	 * children, which the lock's own holders watch (local hand-off, kept znodes).
	 */
	static final String QUEUE = "condition";

	/** The name of a waiter's znode, before its sequence number. */
	static final String WAITER_NAME = "waiter-";

	private static final int OK = KeeperException.Code.OK.intValue();

	private static final int NONODE = KeeperException.Code.NONODE.intValue();

	private static final int CONNECTIONLOSS = KeeperException.Code.CONNECTIONLOSS.intValue();

	private final Znodes znodes;

	private final Function<String, String> lockPaths;

	private final Failures failures;

	/** The waiters not woken yet, for the registry's connection-state listener. */
	private final Set<QueuedWaiter> waiting = ConcurrentHashMap.newKeySet();

	/**
	 * @param znodes the ZooKeeper side
	 * @param lockPaths maps a key to its lock path (and checks it)
	 * @param failures says a failed request in the library's terms
	 */
	ConditionQueues(Znodes znodes, Function<String, String> lockPaths, Failures failures) {
		this.znodes = znodes;
		this.lockPaths = lockPaths;
		this.failures = failures;
	}

	/**
	 * Whether a child of a lock path is its condition's queue, not a lock znode.
	 * @param name the child's name
	 */
	static boolean isQueue(String name) {
		return name.equals(QUEUE);
	}

	/**
	 * Whether a child of a condition's queue is a waiter's znode (a key's lock znodes could sit
	 * there too, if a key ends where another key's queue is).
	 * @param name the child's name
	 */
	static boolean isWaiter(String name) {
		return name.contains("-" + WAITER_NAME);
	}

	/** Where the waiters of a lock path queue. */
	static String queuePath(String lockPath) {
		return lockPath + "/" + QUEUE;
	}

	@Override
	public Waiter enqueue(String key, LockMode mode) {
		String lockPath = this.lockPaths.apply(key);
		CompletableFuture<Znodes.Created> created = new CompletableFuture<>();
		long[] session = new long[1];
		this.znodes.create(queuePath(lockPath) + "/" + WAITER_NAME, false, () -> {
		}, (code, node) -> {
			session[0] = this.znodes.sessionInstance();
			if (code == OK && node != null) {
				created.complete(node);
			}
			else {
				created.completeExceptionally(KeeperException.create(KeeperException.Code.get(code)));
			}
		});
		int code = answered(created);
		if (code != OK) {
			// A create answered later is deleted: nobody would wait for its signal.
			created.thenAccept((late) -> this.znodes.delete(late.path(), (deleted, nothing) -> {
			}));
			throw this.failures.failed("Could not wait on the condition of " + mode + " lock '" + lockPath + "': ", code);
		}
		Znodes.Created node = created.join();
		QueuedWaiter waiter = new QueuedWaiter(lockPath, mode, node.path(), session[0]);
		this.waiting.add(waiter);
		waiter.watch();
		return waiter;
	}

	@Override
	public boolean signal(String key) {
		String lockPath = this.lockPaths.apply(key);
		for (String waiter : waiters(lockPath)) {
			int code = delete(queuePath(lockPath) + "/" + waiter);
			if (code == OK) {
				return true;
			}
			if (code != NONODE) {
				throw this.failures.failed("Could not signal the condition of lock '" + lockPath + "': ", code);
			}
			// It left the queue meanwhile (its time ran out): the next one.
		}
		return false;
	}

	@Override
	public int signalAll(String key) {
		String lockPath = this.lockPaths.apply(key);
		List<CompletableFuture<Integer>> deletes = new ArrayList<>();
		for (String waiter : waiters(lockPath)) {
			CompletableFuture<Integer> deleted = new CompletableFuture<>();
			this.znodes.deleteOnce(queuePath(lockPath) + "/" + waiter, (code, nothing) -> deleted.complete(code));
			deletes.add(deleted);
		}
		int woken = 0;
		int failure = OK;
		for (CompletableFuture<Integer> deleted : deletes) {
			int code = answered(deleted);
			if (code == OK) {
				woken++;
			}
			else if (code != NONODE && failure == OK) {
				failure = code;
			}
		}
		if (failure != OK) {
			throw this.failures.failed("Could not signal every waiter of the condition of lock '" + lockPath + "' ("
					+ woken + " woken): ", failure);
		}
		return woken;
	}

	/**
	 * The session was lost (the registry's connection-state listener): every waiter not woken yet
	 * fails with {@link LockLostException}.
	 */
	void sessionLost() {
		for (QueuedWaiter waiter : this.waiting) {
			waiter.lost("its session was lost");
		}
	}

	/**
	 * The connection is back: a waiter of an earlier session is lost; the others watch their znode
	 * again, in case the watch could not be set while the connection was down.
	 */
	void reconnected() {
		for (QueuedWaiter waiter : this.waiting) {
			waiter.watch();
		}
	}

	/**
	 * Wake the longest other waiter of a lock path in the background, for a waiter that was lost: a
	 * signal may have gone to its znode while its session was ending (a paused process, a cut
	 * network). A signal is never lost that way; at worst a waiter wakes spuriously, which a
	 * {@code Condition} allows. Best effort: a failed request is not retried.
	 * @param lockPath the lock path
	 * @param lostPath the lost waiter's znode, passed over
	 */
	private void passOn(String lockPath, String lostPath) {
		this.znodes.children(queuePath(lockPath), null, (code, children) -> {
			if (code == OK && children != null) {
				List<String> others = new ArrayList<>();
				for (String child : children) {
					if (isWaiter(child) && !lostPath.endsWith("/" + child)) {
						others.add(child);
					}
				}
				others.sort(Comparator.comparing(ConditionQueues::sequence));
				wakeFirst(lockPath, others, 0);
			}
		});
	}

	/** Delete the first of the waiters that is still there, without waiting for the answers. */
	private void wakeFirst(String lockPath, List<String> waiters, int index) {
		if (index < waiters.size()) {
			this.znodes.deleteOnce(queuePath(lockPath) + "/" + waiters.get(index), (code, nothing) -> {
				if (code == NONODE) {
					wakeFirst(lockPath, waiters, index + 1);
				}
			});
		}
	}

	/** The waiters' znodes of a lock path, longest waiting first (by sequence number). */
	private List<String> waiters(String lockPath) {
		CompletableFuture<List<String>> listed = new CompletableFuture<>();
		this.znodes.children(queuePath(lockPath), null, (code, children) -> {
			if (code == OK && children != null) {
				listed.complete(children);
			}
			else if (code == NONODE) {
				listed.complete(List.of());
			}
			else {
				listed.completeExceptionally(KeeperException.create(KeeperException.Code.get(code)));
			}
		});
		int code = answered(listed);
		if (code != OK) {
			throw this.failures.failed("Could not signal the condition of lock '" + lockPath + "': ", code);
		}
		List<String> waiters = new ArrayList<>();
		for (String child : listed.join()) {
			if (isWaiter(child)) {
				waiters.add(child);
			}
		}
		waiters.sort(Comparator.comparing(ConditionQueues::sequence));
		return waiters;
	}

	/** A sequential znode's sequence number: the ten digits ZooKeeper appends to its name. */
	private static String sequence(String name) {
		return name.substring(Math.max(0, name.length() - 10));
	}

	/** Send a delete that reports a znode already gone, and wait for its answer. */
	private int delete(String path) {
		CompletableFuture<Integer> deleted = new CompletableFuture<>();
		this.znodes.deleteOnce(path, (code, nothing) -> deleted.complete(code));
		int code = answered(deleted);
		return (code == OK) ? deleted.join() : code;
	}

	/**
	 * Wait for an answer at most the connection timeout, not interruptibly (an interrupt is kept in
	 * the flag, for the caller's wait to see).
	 * @return {@code OK} when it came, else the error code it failed with ({@code CONNECTIONLOSS}
	 * for none in time)
	 */
	private int answered(CompletableFuture<?> answer) {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(this.znodes.connectionTimeoutMs());
		boolean interrupted = false;
		try {
			while (true) {
				try {
					answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
					return OK;
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
				catch (ExecutionException ex) {
					return (ex.getCause() instanceof KeeperException failure) ? failure.code().intValue() : CONNECTIONLOSS;
				}
				catch (TimeoutException ex) {
					return CONNECTIONLOSS;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Says a failed request in the library's terms. */
	@FunctionalInterface
	interface Failures {

		/**
		 * @param what the start of the message, ending with {@code ": "}
		 * @param code ZooKeeper's error code
		 * @return the exception to throw
		 */
		LockException failed(String what, int code);

	}

	/**
	 * One waiter's znode and its wake-up: completed {@code true} when its znode was deleted in its
	 * session (a signal, or a spurious wake-up), {@code false} when it left the queue, exceptionally
	 * when its session ended first.
	 */
	private final class QueuedWaiter implements Waiter, Watcher {

		private final String lockPath;

		private final LockMode mode;

		private final String path;

		/** The session the znode was created in. */
		private final long session;

		private final CompletableFuture<Boolean> woken = new CompletableFuture<>();

		/**
		 * Set before the waiter's own delete is sent ({@link #leave()}): the deletion its watch then
		 * reports, before the delete's answer, is its own, not a signal; the answer tells which.
		 */
		private volatile boolean leaving;

		QueuedWaiter(String lockPath, LockMode mode, String path, long session) {
			this.lockPath = lockPath;
			this.mode = mode;
			this.path = path;
			this.session = session;
		}

		/** Watch the znode: a {@code getData} that leaves a watch, or finds it gone. */
		void watch() {
			if (this.woken.isDone()) {
				return;
			}
			if (ConditionQueues.this.znodes.sessionInstance() != this.session) {
				lost("its session ended");
				return;
			}
			ConditionQueues.this.znodes.watch(this.path, this, (code, exists) -> {
				if (code == OK && Boolean.FALSE.equals(exists)) {
					gone();
				}
				// Not watched for now (the connection is down): watched again once it is back.
			});
		}

		@Override
		public void process(WatchedEvent event) {
			if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
				gone();
			}
			else if (event.getState() == Watcher.Event.KeeperState.Expired) {
				lost("its session expired");
			}
			else if (event.getType() != Watcher.Event.EventType.None) {
				// Its data changed (nobody writes it): the watch is spent, set it again.
				watch();
			}
		}

		/** The znode is gone: signalled, unless it went with its session. */
		private void gone() {
			if (this.leaving) {
				return;
			}
			if (ConditionQueues.this.znodes.sessionInstance() != this.session) {
				// Deleted already (by a signal, seen late): nothing left to delete.
				lost("its session ended", false);
			}
			else if (this.woken.complete(Boolean.TRUE)) {
				ConditionQueues.this.waiting.remove(this);
			}
		}

		void lost(String why) {
			lost(why, true);
		}

		/**
		 * The waiter is lost: its wait fails, and a signal it may have taken is passed on.
		 * @param why the end of the message
		 * @param znodeThere whether its znode may still be there (not seen deleted)
		 */
		private void lost(String why, boolean znodeThere) {
			if (this.woken.completeExceptionally(new LockLostException(this.lockPath, this.mode,
					"the waiter on its condition (" + this.path + ") was lost, " + why
							+ "; a signal may have gone to it"))) {
				ConditionQueues.this.waiting.remove(this);
				if (znodeThere) {
					// The server may keep the znode until it expires the old session: deleted now,
					// it takes no signal meant for a waiter that still waits.
					ConditionQueues.this.znodes.delete(this.path, (code, nothing) -> {
					});
				}
				passOn(this.lockPath, this.path);
			}
		}

		@Override
		public boolean await(long nanos) throws InterruptedException {
			try {
				if (nanos == Long.MAX_VALUE) {
					return this.woken.get();
				}
				if (nanos <= 0) {
					return this.woken.isDone() && this.woken.get();
				}
				return this.woken.get(nanos, TimeUnit.NANOSECONDS);
			}
			catch (TimeoutException ex) {
				return false;
			}
			catch (ExecutionException ex) {
				throw (ex.getCause() instanceof LockLostException lost) ? lost
						: new LockException("Could not wait on the condition of lock '" + this.lockPath + "'", ex);
			}
		}

		@Override
		public boolean leave() {
			if (!this.woken.isDone()) {
				this.leaving = true;
				int code = delete(this.path);
				if (code == OK) {
					if (this.woken.complete(Boolean.FALSE)) {
						ConditionQueues.this.waiting.remove(this);
						return true;
					}
				}
				else if (code == NONODE) {
					this.leaving = false;
					gone();
				}
				else {
					// Not answered: deleted in the background, and woken as if signalled.
					ConditionQueues.this.znodes.delete(this.path, (deleted, nothing) -> {
					});
					if (this.woken.complete(Boolean.TRUE)) {
						ConditionQueues.this.waiting.remove(this);
					}
				}
			}
			try {
				return !this.woken.join();
			}
			catch (java.util.concurrent.CompletionException ex) {
				throw (ex.getCause() instanceof LockLostException lost) ? lost : ex;
			}
		}

		@Override
		public String toString() {
			return "waiter " + this.path;
		}

	}

}
