/**
 * The zk-lock API, without Spring: {@link io.github.zklock.LockTemplate},
 * {@link io.github.zklock.LockHandle}, {@link io.github.zklock.LockCallback},
 * {@link io.github.zklock.LockRequest}, {@link io.github.zklock.LockMode}, the
 * {@link io.github.zklock.LockRegistry} backend interface, lock state listeners, leader election
 * per group ({@link io.github.zklock.Leadership}, its events and listener) and the exceptions
 * rooted at {@link io.github.zklock.LockException}. No Spring and no Curator types here; the
 * Curator backend is in {@code io.github.zklock.curator}.
 */
@NullMarked
package io.github.zklock;

import org.jspecify.annotations.NullMarked;
