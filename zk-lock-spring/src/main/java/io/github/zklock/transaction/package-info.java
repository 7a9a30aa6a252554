/**
 * Transaction support: the commit guard that rolls back when a lock was lost before commit (for
 * thread-bound transactions, and for reactive transactions inside a locked {@code Mono} or
 * {@code Flux}), the post-processor that adds it to the application's transaction managers, and
 * {@link io.github.zklock.transaction.JdbcLockFence}, which makes a JDBC store reject writes
 * carrying a stale fencing token (with spring-jdbc, an optional dependency), and
 * {@link io.github.zklock.transaction.R2dbcLockFence}, the same fence in a reactive R2DBC
 * transaction (with spring-r2dbc, an optional dependency).
 */
@NullMarked
package io.github.zklock.transaction;

import org.jspecify.annotations.NullMarked;
