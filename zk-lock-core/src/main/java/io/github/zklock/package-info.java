/**
 * The zk-lock API, without Spring: what applications call and implement.
 * <ul>
 * <li>{@link io.github.zklock.LockRequest}: what to lock and how, the one options object (one key
 * or several, mode, reentrancy, permits, wait time, {@link io.github.zklock.OnBusy on-busy policy},
 * lockAtLeastFor);</li>
 * <li>{@link io.github.zklock.LockTemplate}: the synchronous verbs {@code execute},
 * {@code acquire}, {@code tryAcquire} on a request (plus key-first shortcuts and
 * {@code java.util.concurrent} views), and {@link io.github.zklock.AsyncLockTemplate}, the same
 * verbs without blocking; {@link io.github.zklock.LockResult} tells a skipped run from a
 * result;</li>
 * <li>grants: {@link io.github.zklock.LockHandle}, {@link io.github.zklock.AsyncLockHandle},
 * {@link io.github.zklock.LockContext}, {@link io.github.zklock.LockAssert}, lock state
 * listeners and events;</li>
 * <li>the backend interface {@link io.github.zklock.spi.LockRegistry}, which grants one
 * {@link io.github.zklock.spi.LockTarget} at a time;</li>
 * <li>leader election per group ({@link io.github.zklock.Leadership}, its events and listener);</li>
 * <li>the exceptions, rooted at {@link io.github.zklock.LockException}.</li>
 * </ul>
 * No Spring and no Curator types here. The Curator backend is in {@code io.github.zklock.curator};
 * the engine behind the template, in {@code io.github.zklock.engine}, is internal.
 */
@NullMarked
package io.github.zklock;

import org.jspecify.annotations.NullMarked;
