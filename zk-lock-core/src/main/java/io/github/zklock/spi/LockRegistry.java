package io.github.zklock.spi;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockUpgradeException;
import io.github.zklock.PermitsMismatchException;

/**
 * The backend that grants locks, one key at a time: {@link io.github.zklock.LockTemplate}, and through it every
 * other way of locking (the annotations, the asynchronous and reactive forms, the adapters), asks
 * it for every grant. The ZooKeeper implementation is
 * {@code io.github.zklock.curator.CuratorLockRegistry}, on Apache Curator's lock recipes.
 *
 * <p>What the template keeps to itself: the default wait time, multi-locks (several keys, in
 * canonical order, within one wait budget), the on-busy policy, {@code lockAtLeastFor}, metric
 * names and observations. A registry sees one {@link LockTarget} at a time, with its wait time
 * resolved.
 *
 * <p>Keys and paths: a target names a <em>key</em> below the registry's root path, such as
 * {@code /stock/apple}; the registry maps it to the <em>path</em> of the lock's znode, such as
 * {@code /locks/stock/apple}, below which the lock's own sequential znodes live.
 *
 * <p>Implementations are thread-safe. A grant of a {@link LockTarget#reentrant() reentrant}
 * target is bound to the acquiring thread and must be released by it.
 */
public interface LockRegistry {

	/**
	 * Try to acquire a lock within the target's wait time, on the calling thread.
	 * @param target what to lock, with its wait time
	 * @return the grant, or empty when the wait time ran out while another owner held the lock (or
	 * every permit), as ZooKeeper's answers or this application's own holders showed
	 * @throws InvalidLockPathException if the key is not a legal lock key (nothing requested)
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws PermitsMismatchException if another number of permits is stored with the key
	 * @throws LockLostException if the request would be nested in a grant of the key that this
	 * thread holds and that was lost (a re-entry, or READ under WRITE, would stand on a znode that
	 * is gone); release that grant first
	 * @throws LockException if ZooKeeper cannot serve the request or gave no answer that showed the
	 * lock held before the wait time ran out (not connected, or connected and silent), or the
	 * thread was interrupted while waiting (its interrupt flag is set again); never reported as an
	 * empty result
	 */
	Optional<RegistryGrant> tryAcquire(LockTarget target);

	/**
	 * Acquire a lock without a thread waiting for it, for an asynchronous grant, if this registry
	 * can for the target: the returned future completes when the lock is granted or the wait time
	 * runs out, on a thread of the registry's (never block in a callback of it). The grant is an
	 * {@link RegistryGrant} (an {@link io.github.zklock.AsyncLockHandle}), owned by no thread. Cancelling the future gives up the wait (a grant
	 * made meanwhile is released). The default can for no target: asynchronous grants are then
	 * made by {@link #tryAcquire(LockTarget)} on a thread of the template's.
	 * @param target what to lock, with its wait time
	 * @return the grant, empty when the wait time ran out while another owner held the lock (as
	 * {@link #tryAcquire(LockTarget)} says), or exceptionally with a {@link LockException} when
	 * ZooKeeper could not serve the request or did not answer in time;
	 * {@code null} when this registry cannot acquire the target without a thread
	 * @throws InvalidLockPathException if the key is not a legal lock key (nothing requested)
	 */
	default @Nullable CompletableFuture<Optional<RegistryGrant>> submit(LockTarget target) {
		return null;
	}

	/**
	 * Return the condition queues of this registry's locks, for the distributed
	 * {@link java.util.concurrent.locks.Condition} of the lock views ({@link LockCondition}), or
	 * {@code null} when this registry has none (the views' {@code newCondition()} then throws
	 * {@link UnsupportedOperationException}). The default has none.
	 * @return the condition queues, or {@code null}
	 */
	default @Nullable LockConditions conditions() {
		return null;
	}

	/**
	 * Return the znode path a key maps to: the root path joined with it. Sends no request.
	 * @param key the key below the root path, starting with {@code /}
	 * @return the lock's znode path
	 * @throws InvalidLockPathException if the key is not a legal lock key
	 */
	String lockPath(String key);

}
