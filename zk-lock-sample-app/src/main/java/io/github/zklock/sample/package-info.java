/**
 * zk-lock sample application: a stock service whose purchase is a deliberate read-then-write on
 * a shared table, made safe by {@link io.github.zklock.annotation.DistributedLock @DistributedLock}
 * on the SKU, and a REST API over it.
 */
@NullMarked
package io.github.zklock.sample;

import org.jspecify.annotations.NullMarked;
