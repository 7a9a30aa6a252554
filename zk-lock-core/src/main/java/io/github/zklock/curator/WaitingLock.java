package io.github.zklock.curator;

import java.time.Instant;

import io.github.zklock.LockMode;

/**
 * A thread of this application waiting for a lock ({@link CuratorLockAdmin#describeWaitingLocks()}).
 *
 * @param path the full znode path of the lock
 * @param mode the requested mode
 * @param waiter the name of the waiting thread
 * @param since when it started waiting
 */
public record WaitingLock(String path, LockMode mode, String waiter, Instant since) {
}
