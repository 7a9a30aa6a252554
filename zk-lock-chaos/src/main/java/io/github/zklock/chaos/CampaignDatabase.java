package io.github.zklock.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The campaign's reads of the shared database: the rows the workloads committed (the tables of the
 * sample application's {@code schema.sql} and {@code chaos-schema.sql}), read after the clients
 * stopped, for {@link Checks}. Each call opens and closes its own connection. Not thread-safe.
 */
final class CampaignDatabase {

	private final String url;

	private final String user;

	private final String password;

	CampaignDatabase(String url, String user, String password) {
		this.url = url;
		this.user = user;
		this.password = password;
	}

	/**
	 * Drop and create a PostgreSQL database, connecting to the server's {@code postgres} database.
	 * @param serverUrl the server, {@code jdbc:postgresql://host:port/}
	 * @param name the database
	 * @throws SQLException if it cannot be done
	 */
	static void recreatePostgres(String serverUrl, String name, String user, String password) throws SQLException {
		try (Connection connection = DriverManager.getConnection(serverUrl + "postgres", user, password);
				Statement statement = connection.createStatement()) {
			statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
			statement.execute("CREATE DATABASE " + name);
		}
	}

	/** A counter's committed increments. */
	List<Checks.Increment> increments(String counter) throws SQLException {
		List<Checks.Increment> increments = new ArrayList<>();
		try (Connection connection = connect();
				PreparedStatement statement = connection
					.prepareStatement("SELECT op, new_value, fencing_token FROM chaos_counter_op WHERE counter_name = ?")) {
			statement.setString(1, counter);
			try (ResultSet rows = statement.executeQuery()) {
				while (rows.next()) {
					increments.add(new Checks.Increment(rows.getString(1), rows.getLong(2), rows.getLong(3)));
				}
			}
		}
		return increments;
	}

	/** A counter's value, 0 if it was never written. */
	long counterValue(String counter) throws SQLException {
		try (Connection connection = connect();
				PreparedStatement statement = connection
					.prepareStatement("SELECT counter_value FROM chaos_counter WHERE name = ?")) {
			statement.setString(1, counter);
			try (ResultSet rows = statement.executeQuery()) {
				return rows.next() ? rows.getLong(1) : 0;
			}
		}
	}

	/** The operation ids of the committed transfers. */
	Set<String> transfers() throws SQLException {
		Set<String> committed = new HashSet<>();
		try (Connection connection = connect();
				PreparedStatement statement = connection.prepareStatement("SELECT op FROM chaos_transfer");
				ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				committed.add(rows.getString(1));
			}
		}
		return committed;
	}

	/** Every account's balance. */
	List<Long> balances() throws SQLException {
		List<Long> balances = new ArrayList<>();
		try (Connection connection = connect();
				PreparedStatement statement = connection.prepareStatement("SELECT balance FROM chaos_account");
				ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				balances.add(rows.getLong(1));
			}
		}
		return balances;
	}

	/** The stock left of a SKU. */
	long stockLeft(String sku) throws SQLException {
		try (Connection connection = connect();
				PreparedStatement statement = connection.prepareStatement("SELECT quantity FROM stock WHERE sku = ?")) {
			statement.setString(1, sku);
			try (ResultSet rows = statement.executeQuery()) {
				if (!rows.next()) {
					throw new SQLException("No stock row for " + sku);
				}
				return rows.getLong(1);
			}
		}
	}

	/** The units sold of a SKU (its orders). */
	long unitsSold(String sku) throws SQLException {
		try (Connection connection = connect();
				PreparedStatement statement = connection
					.prepareStatement("SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE sku = ?")) {
			statement.setString(1, sku);
			try (ResultSet rows = statement.executeQuery()) {
				rows.next();
				return rows.getLong(1);
			}
		}
	}

	/** Per job and tick of the scheduled jobs, how many runs committed (rows of {@code job_runs}). */
	Map<String, Integer> committedRunsPerTick() throws SQLException {
		Map<String, Integer> runs = new LinkedHashMap<>();
		try (Connection connection = connect();
				PreparedStatement statement = connection
					.prepareStatement("SELECT job, tick, COUNT(*) FROM job_runs GROUP BY job, tick ORDER BY job, tick");
				ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				runs.put(rows.getString(1) + "@" + rows.getLong(2), rows.getInt(3));
			}
		}
		return runs;
	}

	/** Per outcome, how many attempts the scheduled jobs made (rows of {@code job_attempts}). */
	Map<String, Integer> jobAttempts() throws SQLException {
		Map<String, Integer> attempts = new LinkedHashMap<>();
		try (Connection connection = connect();
				PreparedStatement statement = connection
					.prepareStatement("SELECT outcome, COUNT(*) FROM job_attempts GROUP BY outcome ORDER BY outcome");
				ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				attempts.put(rows.getString(1), rows.getInt(2));
			}
		}
		return attempts;
	}

	private Connection connect() throws SQLException {
		return DriverManager.getConnection(this.url, this.user, this.password);
	}

}
