package io.github.zklock;

import java.time.Duration;
import java.util.Optional;

import io.github.zklock.annotation.LockMode;

/**
 * The backend that grants locks; {@link LockTemplate} and the {@code @DistributedLock} advice
 * call it. The Curator implementation is {@code io.github.zklock.curator.CuratorLockRegistry}.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface LockProvider {

	/**
	 * Try to acquire a lock.
	 * @param path the lock path below the root path, starting with {@code /}
	 * @param mode the lock mode
	 * @param reentrant whether an EXCLUSIVE lock is reentrant (ignored for READ and WRITE)
	 * @param waitTime how long to wait: zero for one attempt, negative to wait without limit
	 * @return the grant, or empty when another owner held the lock for the whole wait time
	 * @throws InvalidLockPathException if the path is not a legal lock path
	 * @throws LockUpgradeException if the thread holds READ on the path and asks for WRITE
	 * @throws LockException if ZooKeeper cannot serve the request, or the thread was interrupted
	 * while waiting (its interrupt flag is set again)
	 */
	Optional<LockHandle> tryAcquire(String path, LockMode mode, boolean reentrant, Duration waitTime);

	/**
	 * Return the full znode path a lock path maps to, for messages. No ZooKeeper request.
	 * @param path the lock path below the root path
	 * @return the full path, the given path by default
	 */
	default String fullPath(String path) {
		return path;
	}

}
