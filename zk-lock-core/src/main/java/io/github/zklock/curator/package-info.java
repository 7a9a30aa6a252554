/**
 * The Curator-backed lock registry ({@link io.github.zklock.curator.CuratorLockRegistry}): one
 * cached recipe instance per lock path and kind, grants that follow the ZooKeeper connection
 * state, and fencing tokens from znode creation ids; asynchronous EXCLUSIVE, READ and WRITE grants
 * queued without a thread, in the znode protocols of {@code InterProcessMutex} and
 * {@code InterProcessReadWriteLock}; its operator side
 * ({@link io.github.zklock.curator.CuratorLockAdmin}: holders, waiters, participants, revocation,
 * counters, and the records it answers with); and leader election per group on Curator's
 * {@code LeaderLatch} ({@link io.github.zklock.curator.CuratorLeadership}).
 */
@NullMarked
package io.github.zklock.curator;

import org.jspecify.annotations.NullMarked;
