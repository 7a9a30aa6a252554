/**
 * The {@link io.github.zklock.annotation.DistributedLock @DistributedLock} annotation and the
 * {@link io.github.zklock.annotation.LockMode lock modes}.
 */
package io.github.zklock.annotation;
