package io.github.zklock.spi;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;

/**
 * The condition queues of a registry's locks: the ZooKeeper side of a distributed
 * {@link java.util.concurrent.locks.Condition} ({@link LockCondition}). One queue per key: every
 * application's waiters of a key queue in one order, whichever lock view they came through.
 *
 * <p>The ZooKeeper implementation ({@code io.github.zklock.curator.CuratorLockRegistry#conditions()})
 * follows menagerie's {@code ZkCondition} and the queue recipe of the ZooKeeper recipes page: a
 * waiter is an ephemeral sequential znode {@code waiter-} in a container {@code condition} below
 * the lock path (Curator's lock recipes sort the container after the lock's own znodes, so it never
 * queues for the lock); a signal deletes the waiter with the lowest sequence number, the longest
 * waiting; the waiter watches its own znode and wakes when it is deleted.
 *
 * <p>Thread-safe. The caller holds the key's lock when it enqueues and signals:
 * {@link LockCondition} checks that.
 */
public interface LockConditions {

	/**
	 * Put a waiter in the key's queue: its znode exists when this returns, so that a signal sent
	 * after the caller lets the lock go finds it. Waits for ZooKeeper's answer at most the client's
	 * connection timeout.
	 * @param key the key below the root path
	 * @param mode the mode of the lock the caller holds (EXCLUSIVE or WRITE), for its messages
	 * @return the waiter, which the calling thread waits with
	 * @throws InvalidLockPathException if the key is not a legal lock key (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve the create or did not answer in time (no waiter
	 * is left behind: a create that lands later is deleted)
	 */
	Waiter enqueue(String key, LockMode mode);

	/**
	 * Wake the longest waiter of the key's queue, of any application: delete its znode. A waiter
	 * that left the queue meanwhile (its time ran out) is passed over for the next one. Waits for
	 * ZooKeeper's answers at most the client's connection timeout each.
	 * @param key the key below the root path
	 * @return whether a waiter was woken
	 * @throws InvalidLockPathException if the key is not a legal lock key (nothing requested)
	 * @throws LockException if ZooKeeper cannot serve the listing or a delete, or did not answer in
	 * time (the signal may or may not have reached a waiter)
	 */
	boolean signal(String key);

	/**
	 * Wake every waiter of the key's queue that is there now: delete each znode.
	 * @param key the key below the root path
	 * @return how many waiters were woken
	 * @throws InvalidLockPathException if the key is not a legal lock key (nothing requested)
	 * @throws LockException as {@link #signal(String)} says
	 */
	int signalAll(String key);

	/**
	 * One waiter in a key's queue, for one call of {@code await}: used by the thread that enqueued
	 * it, once.
	 */
	interface Waiter {

		/**
		 * Wait until a signal deletes the waiter's znode, or the time runs out.
		 * @param nanos the longest wait, in nanoseconds; {@link Long#MAX_VALUE} for no limit, 0 or
		 * less to look without waiting
		 * @return {@code true} when signalled (also when the znode could no longer be watched: a
		 * spurious wake-up, which {@link java.util.concurrent.locks.Condition} allows; the waiter
		 * left the queue then), {@code false} when the time ran out first (still queued: call
		 * {@link #leave()})
		 * @throws InterruptedException if the thread was interrupted while waiting (still queued:
		 * call {@link #leave()})
		 * @throws LockLostException if the session ended before a signal was seen: the znode went
		 * with it
		 */
		boolean await(long nanos) throws InterruptedException;

		/**
		 * Leave the queue after the time ran out or an interrupt: delete the waiter's znode unless a
		 * signal deleted it first. Waits for ZooKeeper's answer at most the client's connection
		 * timeout; when it cannot be reached, the znode is deleted in the background (Curator's
		 * guaranteed delete) and the waiter counts as signalled.
		 * @return {@code true} when the waiter left before any signal, {@code false} when a signal
		 * came first (the caller goes on as signalled)
		 * @throws LockLostException if the session ended first: the znode went with it
		 */
		boolean leave();

	}

}
