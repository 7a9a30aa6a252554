/**
 * The zk-lock API: {@link io.github.zklock.LockTemplate}, {@link io.github.zklock.LockHandle},
 * {@link io.github.zklock.LockCallback}, the {@link io.github.zklock.LockProvider} backend
 * interface and the exceptions rooted at {@link io.github.zklock.LockException}. No Spring Boot
 * and no Curator types here.
 */
@NullMarked
package io.github.zklock;

import org.jspecify.annotations.NullMarked;
