package io.github.zklock.sample.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the outcome of a load run straight from the shared database (the {@code stock} and
 * {@code orders} tables of the sample's {@code schema.sql}) rather than trusting the HTTP answers.
 * Only the orders of one SKU recorded after a {@linkplain #mark() mark} are counted, so that runs
 * can repeat against the same database.
 *
 * <p>The fencing tokens of the orders are checked as a store that fences its writes would check
 * them (DESIGN.md, semantics 8): in order-id order a token may equal the one before (grants handed
 * over locally within one application share the token of the znode they ride on) but must never be
 * lower than it.
 *
 * <p>Not thread-safe; each call opens and closes its own connection.
 */
public class SalesAudit {

	private final String jdbcUrl;

	private final String user;

	private final String password;

	/**
	 * Create an audit of a database.
	 * @param jdbcUrl the JDBC URL, for example
	 * {@code jdbc:h2:file:/abs/zk-lock-sample-app/target/demo/db/stock;AUTO_SERVER=TRUE}
	 * @param user the database user
	 * @param password the password
	 */
	public SalesAudit(String jdbcUrl, String user, String password) {
		this.jdbcUrl = jdbcUrl;
		this.user = user;
		this.password = password;
	}

	/**
	 * Return the id of the newest order of any SKU: orders after it belong to the coming run.
	 * @return the highest order id, 0 when there is none
	 * @throws SQLException if the database cannot be read
	 */
	public long mark() throws SQLException {
		try (Connection connection = connect();
				PreparedStatement statement = connection.prepareStatement("SELECT COALESCE(MAX(id), 0) FROM orders");
				ResultSet rs = statement.executeQuery()) {
			rs.next();
			return rs.getLong(1);
		}
	}

	/**
	 * Read the outcome of the orders of one SKU recorded after a mark.
	 * @param sku the SKU
	 * @param mark the value of {@link #mark()} taken before the run
	 * @return the stock left, the orders and how they were made
	 * @throws SQLException if the database cannot be read
	 * @throws IllegalStateException if the SKU has no stock row
	 */
	public Sales read(String sku, long mark) throws SQLException {
		try (Connection connection = connect()) {
			long remaining = remaining(connection, sku);
			long orders = 0;
			long sold = 0;
			Map<String, Long> ordersByInstance = new LinkedHashMap<>();
			long previousToken = Long.MIN_VALUE;
			boolean tokensInOrder = true;
			long sharingPreviousToken = 0;
			long withoutToken = 0;
			try (PreparedStatement statement = connection.prepareStatement(
					"SELECT quantity, instance_id, fencing_token FROM orders WHERE sku = ? AND id > ? ORDER BY id")) {
				statement.setString(1, sku);
				statement.setLong(2, mark);
				try (ResultSet rs = statement.executeQuery()) {
					while (rs.next()) {
						orders++;
						sold += rs.getInt(1);
						ordersByInstance.merge(rs.getString(2), 1L, Long::sum);
						long token = rs.getLong(3);
						if (rs.wasNull()) {
							withoutToken++;
							continue;
						}
						tokensInOrder &= token >= previousToken;
						if (token == previousToken) {
							sharingPreviousToken++;
						}
						previousToken = token;
					}
				}
			}
			return new Sales(remaining, orders, sold, ordersByInstance, withoutToken, tokensInOrder,
					sharingPreviousToken);
		}
	}

	private static long remaining(Connection connection, String sku) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement("SELECT quantity FROM stock WHERE sku = ?")) {
			statement.setString(1, sku);
			try (ResultSet rs = statement.executeQuery()) {
				if (!rs.next()) {
					throw new IllegalStateException("No stock row for SKU '" + sku + "'");
				}
				return rs.getLong(1);
			}
		}
	}

	private Connection connect() throws SQLException {
		return DriverManager.getConnection(this.jdbcUrl, this.user, this.password);
	}

	/**
	 * The orders of one SKU recorded during a run, and its stock afterwards.
	 *
	 * @param remaining the stock row's quantity
	 * @param orders how many orders were recorded
	 * @param sold their total quantity
	 * @param ordersByInstance how many orders each application instance recorded, in order of
	 * first appearance
	 * @param ordersWithoutToken how many orders carry no fencing token (made without the lock)
	 * @param fencingTokensNonDecreasing whether the fencing tokens of the orders that carry one never
	 * decrease in order-id order: no sale ran under an earlier lock grant than the one before it, as
	 * a store that rejects only lower tokens requires
	 * @param ordersSharingPreviousToken how many orders carry the same token as the order with a
	 * token before them: sales whose grant was handed over locally on the znode of the sale before
	 */
	public record Sales(long remaining, long orders, long sold, Map<String, Long> ordersByInstance,
			long ordersWithoutToken, boolean fencingTokensNonDecreasing, long ordersSharingPreviousToken) {
	}

}
