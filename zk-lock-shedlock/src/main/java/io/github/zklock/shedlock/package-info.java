/**
 * ShedLock on zk-lock: {@link io.github.zklock.shedlock.ZkLockProvider}, ShedLock's
 * {@code LockProvider} backed by a {@link io.github.zklock.LockTemplate}, so that
 * {@code @SchedulerLock} jobs lock with ephemeral ZooKeeper znodes.
 */
@NullMarked
package io.github.zklock.shedlock;

import org.jspecify.annotations.NullMarked;
