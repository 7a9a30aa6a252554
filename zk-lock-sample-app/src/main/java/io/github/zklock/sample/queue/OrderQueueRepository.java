package io.github.zklock.sample.queue;

import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Plain JDBC access to the order queues ({@code order_queue}, see {@code schema.sql}). Each method
 * is one statement, auto-committed, with no locking of its own: {@link OrderQueueService} calls
 * them under the queue's lock.
 */
@Repository
public class OrderQueueRepository {

	private final JdbcClient jdbcClient;

	/**
	 * Create a repository.
	 * @param jdbcClient the client on the application's data source
	 */
	public OrderQueueRepository(JdbcClient jdbcClient) {
		this.jdbcClient = jdbcClient;
	}

	/**
	 * Return how many items wait in a queue.
	 * @param queue the queue's name
	 * @return the number of items
	 */
	public int count(String queue) {
		return this.jdbcClient.sql("SELECT COUNT(*) FROM order_queue WHERE queue_name = :queue")
			.param("queue", queue)
			.query(Integer.class)
			.single();
	}

	/**
	 * Add an item at the end of a queue.
	 * @param queue the queue's name
	 * @param item the item
	 * @param producer the instance that adds it
	 * @param enqueuedAtMillis the producer's clock, in epoch milliseconds
	 */
	public void add(String queue, String item, String producer, long enqueuedAtMillis) {
		this.jdbcClient
			.sql("INSERT INTO order_queue (queue_name, item, producer, enqueued_at_ms) "
					+ "VALUES (:queue, :item, :producer, :enqueuedAt)")
			.param("queue", queue)
			.param("item", item)
			.param("producer", producer)
			.param("enqueuedAt", enqueuedAtMillis)
			.update();
	}

	/**
	 * Return the oldest item of a queue.
	 * @param queue the queue's name
	 * @return the item, or empty if the queue is empty
	 */
	public Optional<QueuedItem> oldest(String queue) {
		return this.jdbcClient
			.sql("SELECT id, item, producer, enqueued_at_ms FROM order_queue WHERE queue_name = :queue "
					+ "ORDER BY id FETCH FIRST 1 ROWS ONLY")
			.param("queue", queue)
			.query((rs, row) -> new QueuedItem(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4)))
			.optional();
	}

	/**
	 * Remove an item.
	 * @param id the item's row id
	 * @return whether it was there
	 */
	public boolean remove(long id) {
		return this.jdbcClient.sql("DELETE FROM order_queue WHERE id = :id").param("id", id).update() == 1;
	}

	/**
	 * An item waiting in a queue.
	 *
	 * @param id its row id, in the order the items were added
	 * @param item the item
	 * @param producer the instance that added it
	 * @param enqueuedAtMillis the producer's clock when it added it, in epoch milliseconds
	 */
	public record QueuedItem(long id, String item, String producer, long enqueuedAtMillis) {
	}

}
