/**
 * Internal: the engine behind {@link io.github.zklock.LockTemplate}, not API (its types may change
 * in any release). It resolves a {@link io.github.zklock.LockRequest} into grants of the
 * {@link io.github.zklock.LockRegistry}: multi-locks ({@code LockEngine}), grants kept at least
 * some time ({@code KeptLockHandle}), asynchronous grants on grant threads ({@code AsyncGrant},
 * {@code GrantThreads}), observations ({@code LockObservations}, the only Micrometer user) and
 * the {@code java.util.concurrent} views ({@code LockView}).
 */
@NullMarked
package io.github.zklock.engine;

import org.jspecify.annotations.NullMarked;
