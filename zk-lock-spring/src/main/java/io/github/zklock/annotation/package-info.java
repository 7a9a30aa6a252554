/**
 * The {@link io.github.zklock.annotation.DistributedLock @DistributedLock} annotation, and
 * {@link io.github.zklock.annotation.EnableDistributedLocks @EnableDistributedLocks}, which turns
 * its advice on in an application without Spring Boot.
 */
@NullMarked
package io.github.zklock.annotation;

import org.jspecify.annotations.NullMarked;
