/**
 * The {@link io.github.zklock.annotation.DistributedLock @DistributedLock} (one key or a
 * multi-lock), {@link io.github.zklock.annotation.DistributedSemaphore @DistributedSemaphore} and
 * {@link io.github.zklock.annotation.LeaderOnly @LeaderOnly} annotations, and
 * {@link io.github.zklock.annotation.EnableDistributedLocks @EnableDistributedLocks}, which turns
 * their advice on in an application without Spring Boot. What a busy call does is
 * {@link io.github.zklock.OnBusy}, shared with the programmatic API.
 */
@NullMarked
package io.github.zklock.annotation;

import org.jspecify.annotations.NullMarked;
