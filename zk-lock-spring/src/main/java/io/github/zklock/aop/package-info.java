/**
 * The {@code @DistributedLock} and {@code @DistributedSemaphore} advice: advisor, interceptor,
 * per-method operation cache, the start-up validator, the support of {@code Mono} and {@code Flux}
 * methods with the Reactor context key of their grant ({@link io.github.zklock.aop.ReactiveLockContext}),
 * and the configuration that {@code @EnableDistributedLocks} imports.
 */
@NullMarked
package io.github.zklock.aop;

import org.jspecify.annotations.NullMarked;
