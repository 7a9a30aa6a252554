package io.github.zklock.sample;

import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;
import org.springframework.util.Assert;

/**
 * Plain JDBC access to the {@code orders} table ({@code schema.sql}): one row per sale.
 *
 * <p>The table records each sale's fencing token without checking it; the demo's audit
 * ({@link io.github.zklock.sample.demo.SalesAudit}) checks them afterwards as a fencing store
 * would: in order-id order a token may equal the one before (grants handed over locally share the
 * token of their znode) but never be lower.
 */
@Repository
public class OrderRepository {

	private final JdbcClient jdbcClient;

	/**
	 * Create a repository.
	 * @param jdbcClient the client on the application's data source
	 */
	public OrderRepository(JdbcClient jdbcClient) {
		this.jdbcClient = jdbcClient;
	}

	/**
	 * Record a sale.
	 * @param sku the SKU
	 * @param quantity how many were bought
	 * @param instanceId the application instance that made the sale
	 * @param fencingToken the fencing token of the lock grant, {@code null} without a lock
	 * @return the generated order id
	 */
	public long insert(String sku, int quantity, String instanceId, @Nullable Long fencingToken) {
		KeyHolder keyHolder = new GeneratedKeyHolder();
		this.jdbcClient
			.sql("INSERT INTO orders (sku, quantity, instance_id, fencing_token) "
					+ "VALUES (:sku, :quantity, :instanceId, :fencingToken)")
			.param("sku", sku)
			.param("quantity", quantity)
			.param("instanceId", instanceId)
			.param("fencingToken", fencingToken)
			.update(keyHolder, "id");
		Number id = keyHolder.getKey();
		Assert.state(id != null, "No order id was generated");
		return id.longValue();
	}

}
