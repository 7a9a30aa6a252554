/**
 * Transaction support: the commit guard that rolls back when a lock was lost before commit.
 */
@NullMarked
package io.github.zklock.transaction;

import org.jspecify.annotations.NullMarked;
