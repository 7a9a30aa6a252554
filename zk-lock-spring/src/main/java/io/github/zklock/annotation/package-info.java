/**
 * The {@link io.github.zklock.annotation.DistributedLock @DistributedLock} (one key or a
 * multi-lock) and {@link io.github.zklock.annotation.DistributedSemaphore @DistributedSemaphore}
 * annotations, {@link io.github.zklock.annotation.OnBusy} for what a busy call does, and
 * {@link io.github.zklock.annotation.EnableDistributedLocks @EnableDistributedLocks}, which turns
 * their advice on in an application without Spring Boot.
 */
@NullMarked
package io.github.zklock.annotation;

import org.jspecify.annotations.NullMarked;
