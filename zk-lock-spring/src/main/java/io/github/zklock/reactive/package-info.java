/**
 * Locks for Reactor's {@code Mono} and {@code Flux}: the
 * {@link io.github.zklock.reactive.ReactiveLockOperator} (a grant per subscription, as Spring's
 * {@code TransactionalOperator} is a transaction per subscription) and
 * {@link io.github.zklock.reactive.ReactiveLockContext}, the grants of the Reactor context. Needs
 * {@code io.projectreactor:reactor-core}.
 */
@NullMarked
package io.github.zklock.reactive;

import org.jspecify.annotations.NullMarked;
