/**
 * zk-lock sample application: a flash-sale stock service whose purchase is a deliberate
 * read-then-write on a table shared by every instance, made safe by
 * {@link io.github.zklock.annotation.DistributedLock @DistributedLock} on the SKU, with each sale
 * recorded with its lock's fencing token; the same purchase without the lock for comparison; the
 * same purchase as a {@code Mono} on R2DBC under the same lock and fence; and a REST API over
 * them.
 */
@NullMarked
package io.github.zklock.sample;

import org.jspecify.annotations.NullMarked;
