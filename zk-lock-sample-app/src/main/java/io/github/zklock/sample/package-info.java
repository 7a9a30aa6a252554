/**
 * zk-lock sample application: a flash-sale stock service whose purchase is a deliberate
 * read-then-write on a table shared by every instance, made safe by
 * {@link io.github.zklock.annotation.DistributedLock @DistributedLock} on the SKU, with each sale
 * recorded with its lock's fencing token; the same purchase without the lock for comparison; and a
 * REST API over it.
 */
@NullMarked
package io.github.zklock.sample;

import org.jspecify.annotations.NullMarked;
