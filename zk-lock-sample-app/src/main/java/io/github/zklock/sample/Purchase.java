package io.github.zklock.sample;

import org.jspecify.annotations.Nullable;

/**
 * A completed sale, as recorded in the {@code orders} table.
 *
 * @param orderId the order's id; ids grow in the order the sales were written
 * @param sku the SKU
 * @param quantity how many were bought
 * @param remaining the stock this sale wrote back
 * @param fencingToken the fencing token of the lock grant the sale ran under, {@code null} for a
 * sale made without the lock
 * @param instanceId the application instance that made the sale
 */
public record Purchase(long orderId, String sku, int quantity, int remaining, @Nullable Long fencingToken,
		String instanceId) {
}
