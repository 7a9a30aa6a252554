/**
 * Spring Integration on zk-lock: {@link io.github.zklock.integration.ZkLockRegistry}, Spring
 * Integration's renewable lock registry backed by a {@link io.github.zklock.LockTemplate}, whose
 * {@code DistributedLock}s take a time to live that the holder's application enforces as the
 * grant's {@code lockAtMostFor}.
 */
@NullMarked
package io.github.zklock.integration;

import org.jspecify.annotations.NullMarked;
