/**
 * The {@code @DistributedLock} advice: advisor, interceptor, per-method operation cache and the
 * start-up validator.
 */
@NullMarked
package io.github.zklock.aop;

import org.jspecify.annotations.NullMarked;
