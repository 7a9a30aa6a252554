/**
 * The {@code @DistributedLock} and {@code @DistributedSemaphore} advice: advisor, interceptor,
 * per-method operation cache (each operation holds its key templates, a prototype
 * {@link io.github.zklock.LockRequest} and the invoker chosen once for its return type: blocking,
 * {@code CompletionStage} or Reactor), the start-up validator, and the configuration that
 * {@code @EnableDistributedLocks} imports.
 */
@NullMarked
package io.github.zklock.aop;

import org.jspecify.annotations.NullMarked;
