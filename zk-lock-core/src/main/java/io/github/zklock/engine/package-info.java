/**
 * Internal: the engine behind {@link io.github.zklock.LockTemplate}, not API (its types may change
 * in any release; public only where the template must reach them: {@code LockEngine},
 * {@code Attempt}, {@code LockObservations}). It resolves a
 * {@link io.github.zklock.LockRequest} into one handle per grant ({@code Grant}) over the
 * {@link io.github.zklock.spi.LockRegistry}'s grants: multi-locks ({@code LockEngine}), grants kept
 * at least some time, asynchronous grants (the registry's own, made without a thread, a
 * multi-lock's keys one after the other in {@code AsyncKeys}; or on grant threads,
 * {@code GrantThreads}, for a registry that cannot), observations ({@code LockObservations}, the
 * only Micrometer user) and the {@code java.util.concurrent} views ({@code LockView}).
 */
@NullMarked
package io.github.zklock.engine;

import org.jspecify.annotations.NullMarked;
