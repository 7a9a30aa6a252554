/**
 * Transaction support: the commit guard that rolls back when a lock was lost before commit (for
 * thread-bound transactions, and for reactive transactions inside a locked {@code Mono} or
 * {@code Flux}), and the post-processor that adds it to the application's transaction managers.
 */
@NullMarked
package io.github.zklock.transaction;

import org.jspecify.annotations.NullMarked;
