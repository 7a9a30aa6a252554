package io.github.zklock;

import java.util.Optional;

/**
 * The backend that grants locks: {@link LockTemplate}, and through it the
 * {@code @DistributedLock} advice, asks it for every grant. The ZooKeeper implementation is
 * {@code io.github.zklock.curator.CuratorLockRegistry}, on Apache Curator's lock recipes.
 *
 * <p>Keys and paths: a request names a <em>key</em> below the registry's root path, such as
 * {@code /stock/apple}; the registry maps it to the <em>path</em> of the lock's znode, such as
 * {@code /locks/stock/apple}, below which the lock's own sequential znodes live.
 *
 * <p>Implementations are thread-safe.
 */
public interface LockRegistry {

	/**
	 * Try to acquire a lock within the request's wait time.
	 * @param request what to lock; its wait time must be given: zero for one attempt,
	 * {@link LockRequest#WAIT_FOREVER} to wait without limit, or a positive duration
	 * ({@link LockTemplate} fills in its default wait time before calling)
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * @throws IllegalArgumentException if the request gives no wait time
	 * @throws InvalidLockPathException if the key is not a legal lock key
	 * @throws LockUpgradeException if the thread holds READ on the key and asks for WRITE
	 * @throws LockLostException if the request would be nested in a grant of the key that this
	 * thread holds and that was lost with its session (a re-entry, or READ under WRITE, would stand
	 * on a znode that is gone); release that grant first
	 * @throws LockException if ZooKeeper cannot serve the request, or the thread was interrupted
	 * while waiting (its interrupt flag is set again); never reported as an empty result
	 */
	Optional<LockHandle> tryAcquire(LockRequest request);

	/**
	 * Return the znode path a key maps to: the root path joined with the key. Sends no request.
	 * @param key the key below the root path, starting with {@code /}
	 * @return the lock's znode path
	 * @throws InvalidLockPathException if the key is not a legal lock key
	 */
	String lockPath(String key);

}
