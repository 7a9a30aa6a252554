package io.github.zklock.sample;

import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Plain JDBC access to the {@code stock} table ({@code schema.sql}). Each method is a single
 * statement with no locking of its own: callers that read and then write must serialize
 * themselves, as {@link StockService} does with a distributed lock. The row's
 * {@code fencing_token} column is written by the fence ({@code JdbcLockFence}), not here, except
 * when a row is added.
 */
@Repository
public class StockRepository {

	private final JdbcClient jdbcClient;

	/**
	 * Create a repository.
	 * @param jdbcClient the client on the application's data source
	 */
	public StockRepository(JdbcClient jdbcClient) {
		this.jdbcClient = jdbcClient;
	}

	/**
	 * Return the stock of a SKU.
	 * @param sku the SKU
	 * @return the quantity in stock, or empty if the SKU is unknown
	 */
	public Optional<Integer> findQuantity(String sku) {
		return this.jdbcClient.sql("SELECT quantity FROM stock WHERE sku = :sku")
			.param("sku", sku)
			.query(Integer.class)
			.optional();
	}

	/**
	 * Overwrite the stock of a SKU with an absolute value.
	 * @param sku the SKU
	 * @param quantity the new quantity
	 * @return whether the SKU existed
	 */
	public boolean updateQuantity(String sku, int quantity) {
		return this.jdbcClient.sql("UPDATE stock SET quantity = :quantity WHERE sku = :sku")
			.param("quantity", quantity)
			.param("sku", sku)
			.update() > 0;
	}

	/**
	 * Add a SKU with its stock.
	 * @param sku the SKU, not yet present
	 * @param quantity the quantity
	 * @param fencingToken the fencing token of the grant that adds it, the first value of the row's
	 * fence ({@code stock.fencing_token})
	 */
	public void insert(String sku, int quantity, long fencingToken) {
		this.jdbcClient.sql("INSERT INTO stock (sku, quantity, fencing_token) VALUES (:sku, :quantity, :fencingToken)")
			.param("sku", sku)
			.param("quantity", quantity)
			.param("fencingToken", fencingToken)
			.update();
	}

}
