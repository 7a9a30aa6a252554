/**
 * The {@code @DistributedLock} and {@code @DistributedSemaphore} advice: advisor, interceptor,
 * per-method operation cache, the start-up validator, and the configuration that
 * {@code @EnableDistributedLocks} imports.
 */
@NullMarked
package io.github.zklock.aop;

import org.jspecify.annotations.NullMarked;
