package io.github.zklock.sample.chaos;

import java.util.Optional;

import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Plain JDBC access to the counters ({@code chaos_counter}) and their increments
 * ({@code chaos_counter_op}), see {@code chaos-schema.sql}. Each method is one statement with no
 * locking of its own; {@link CounterService} serializes the writers. The counter row's
 * {@code fencing_token} is written by the fence, except when the row is created.
 */
@Repository
@Profile(ChaosConfiguration.PROFILE)
public class CounterRepository {

	private final JdbcClient jdbcClient;

	/**
	 * Create a repository.
	 * @param jdbcClient the client on the application's data source
	 */
	public CounterRepository(JdbcClient jdbcClient) {
		this.jdbcClient = jdbcClient;
	}

	/**
	 * Return the value of a counter.
	 * @param name the counter's name
	 * @return its value, or empty when it has no row yet
	 */
	public Optional<Long> findValue(String name) {
		return this.jdbcClient.sql("SELECT counter_value FROM chaos_counter WHERE name = :name")
			.param("name", name)
			.query(Long.class)
			.optional();
	}

	/**
	 * Add a counter at 0.
	 * @param name the counter's name, not yet present
	 * @param fencingToken the first value of the row's fence: the token of the grant that adds it,
	 * or 0 for an unfenced increment
	 */
	public void create(String name, long fencingToken) {
		this.jdbcClient
			.sql("INSERT INTO chaos_counter (name, counter_value, fencing_token) VALUES (:name, 0, :fencingToken)")
			.param("name", name)
			.param("fencingToken", fencingToken)
			.update();
	}

	/**
	 * Overwrite the value of a counter.
	 * @param name the counter's name
	 * @param value the new value
	 */
	public void updateValue(String name, long value) {
		this.jdbcClient.sql("UPDATE chaos_counter SET counter_value = :value WHERE name = :name")
			.param("value", value)
			.param("name", name)
			.update();
	}

	/**
	 * Record an increment.
	 * @param increment the increment
	 */
	public void insertOp(CounterIncrement increment) {
		this.jdbcClient
			.sql("INSERT INTO chaos_counter_op (op, counter_name, new_value, fencing_token, instance_id, via) "
					+ "VALUES (:op, :counter, :value, :token, :instance, :via)")
			.param("op", increment.op())
			.param("counter", increment.counter())
			.param("value", increment.value())
			.param("token", increment.token())
			.param("instance", increment.instance())
			.param("via", increment.via())
			.update();
	}

	/**
	 * Read a counter's value and how many increments of it are recorded, in one statement (one
	 * snapshot on PostgreSQL).
	 * @param name the counter's name
	 * @return its state; value 0 and no increments for a counter without a row
	 */
	public CounterState state(String name) {
		return this.jdbcClient
			.sql("SELECT (SELECT counter_value FROM chaos_counter WHERE name = :name), "
					+ "(SELECT COUNT(*) FROM chaos_counter_op WHERE counter_name = :name)")
			.param("name", name)
			.query((rs, row) -> {
				long value = rs.getLong(1);
				return new CounterState(name, rs.wasNull() ? 0 : value, rs.getLong(2));
			})
			.single();
	}

}
