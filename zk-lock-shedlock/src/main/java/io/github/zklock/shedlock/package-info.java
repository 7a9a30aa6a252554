/**
 * ShedLock on zk-lock: {@link io.github.zklock.shedlock.ZkLockProvider}, ShedLock's
 * {@code LockProvider} backed by a {@link io.github.zklock.LockTemplate}, so that
 * {@code @SchedulerLock} jobs lock with ephemeral ZooKeeper znodes. {@code lockAtMostFor} is
 * honoured as a ceiling that the holder's application enforces (the lock is free for others once
 * it has passed, and an expired lock cannot be extended); {@code lockAtLeastFor} keeps the lock
 * after a quick unlock while the holder's session lives.
 */
@NullMarked
package io.github.zklock.shedlock;

import org.jspecify.annotations.NullMarked;
