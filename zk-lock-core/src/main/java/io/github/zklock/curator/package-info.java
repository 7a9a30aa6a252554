/**
 * The Curator-backed lock registry ({@link io.github.zklock.curator.CuratorLockRegistry}): one
 * local queue per lock path ({@code LockKey}) for threads and asynchronous requests alike, each
 * znode's life an explicit state machine ({@code ZnodeAcquisition}) in the znode protocols of
 * Curator's {@code InterProcessMutex}, {@code InterProcessReadWriteLock} and
 * {@code InterProcessSemaphoreV2}, sent through Curator's background operations; grants that
 * follow the ZooKeeper connection state, and fencing tokens from znode creation ids; its operator
 * side
 * ({@link io.github.zklock.curator.CuratorLockAdmin}: holders, waiters, participants, revocation,
 * counters, and the records it answers with); and leader election per group on Curator's
 * {@code LeaderLatch} ({@link io.github.zklock.curator.CuratorLeadership}).
 */
@NullMarked
package io.github.zklock.curator;

import org.jspecify.annotations.NullMarked;
