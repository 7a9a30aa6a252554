package io.github.zklock.sample;

import javax.sql.DataSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

import io.github.zklock.sample.queue.OrderQueueProperties;
import io.github.zklock.transaction.JdbcLockFence;

/**
 * Entry point of the zk-lock sample: a flash-sale stock REST service whose purchases are
 * serialized per SKU by a ZooKeeper lock, across every instance that shares its ZooKeeper and its
 * database. By default it runs on an embedded ZooKeeper and an in-memory H2 database (see
 * {@code application.yml}); {@code ./demo.sh} runs several instances on one ZooKeeper server and
 * one H2 file database, or one PostgreSQL server with {@code --database postgres}.
 *
 * <p>The same purchase also runs reactively ({@link ReactiveStockService}: a {@code Mono} under
 * the same lock, on R2DBC, fenced by the same row), and the instances share bounded order queues
 * whose producers and consumers wait on the distributed condition of the queue's lock
 * ({@link io.github.zklock.sample.queue.OrderQueueService}).
 */
@SpringBootApplication
@EnableScheduling
@EnableConfigurationProperties({ SampleProperties.class, OrderQueueProperties.class })
public class SampleApplication {

	/**
	 * Start the application.
	 * @param args command line arguments, for example {@code --server.port=18080}
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

	/**
	 * The store-side fence of the purchases: each SKU's stock row keeps the highest fencing token
	 * that wrote it ({@code stock.fencing_token}), and a write carrying a lower one is rejected.
	 * @param dataSource the shared database
	 * @return the fence
	 */
	@Bean
	JdbcLockFence stockFence(DataSource dataSource) {
		return JdbcLockFence.guardedRows(dataSource, "stock", "sku", "fencing_token");
	}

}
