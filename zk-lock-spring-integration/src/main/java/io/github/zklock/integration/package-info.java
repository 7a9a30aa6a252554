/**
 * Spring Integration on zk-lock: {@link io.github.zklock.integration.ZkLockRegistry}, Spring
 * Integration's lock registry backed by a {@link io.github.zklock.LockTemplate}.
 */
@NullMarked
package io.github.zklock.integration;

import org.jspecify.annotations.NullMarked;
