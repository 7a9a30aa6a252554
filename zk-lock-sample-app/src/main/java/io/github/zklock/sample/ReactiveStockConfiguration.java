package io.github.zklock.sample;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;

import io.github.zklock.transaction.R2dbcLockFence;
import io.github.zklock.transaction.ReactiveLockCommitGuard;

/**
 * The R2DBC side of the sample, for {@link ReactiveStockService}: a {@link ConnectionFactory} on
 * the database of the application's JDBC DataSource (its URL, user and password, turned into
 * R2DBC options by {@link R2dbcConnectionOptions}), the store-side fence of the stock rows on it,
 * and the reactive transactions of the reactive purchase.
 *
 * <p>Two choices keep the JDBC side as Spring Boot configures it:
 * <ul>
 * <li>The ConnectionFactory is not a default candidate for injection: Boot's DataSource
 * auto-configuration backs off when the application has a ConnectionFactory it can inject (an R2DBC
 * application needs no DataSource), which would leave the JDBC purchase, its fence and the schema's
 * initialization without one. It is injected by its name, {@value #CONNECTION_FACTORY}. (The
 * starter's own R2DBC fence,
 * {@code ZkLockR2dbcFenceAutoConfiguration}, which needs a single candidate ConnectionFactory,
 * does not apply then: the sample defines its fence on the stock rows itself, as it does for
 * JDBC.)</li>
 * <li>The {@link R2dbcTransactionManager} is no bean: Boot's JDBC transaction manager backs off
 * when there is any transaction manager bean, and {@code @Transactional} on the JDBC services would
 * find two. The reactive transactions go through a {@link TransactionalOperator} instead, on a
 * manager wrapped in the commit guard ({@link ReactiveLockCommitGuard#guard}), which the starter
 * adds by itself to the ReactiveTransactionManager beans it sees: a transaction committed inside a
 * locked {@code Mono} whose grant is in doubt or lost is rolled back instead.</li>
 * </ul>
 * The connections are pooled (r2dbc-pool, at most 10), as Boot's R2DBC auto-configuration would pool
 * them: opening one is a session of the H2 engine in this JVM, over TCP to the instance that serves
 * an {@code AUTO_SERVER} file, or a PostgreSQL connection.
 */
@Configuration(proxyBeanMethods = false)
public class ReactiveStockConfiguration {

	/** The name of the reactive purchase's ConnectionFactory bean, its qualifier. */
	public static final String CONNECTION_FACTORY = "stockConnectionFactory";

	/**
	 * The ConnectionFactory of the reactive purchase, on the JDBC DataSource's database: a pool of
	 * at most 10 connections, closed with the application.
	 * @param jdbc the JDBC URL, user and password the application was given
	 * @return the ConnectionFactory
	 */
	@Bean(name = CONNECTION_FACTORY, defaultCandidate = false, destroyMethod = "dispose")
	ConnectionPool stockConnectionFactory(JdbcConnectionDetails jdbc) {
		ConnectionFactory database = ConnectionFactories
			.get(R2dbcConnectionOptions.fromJdbcUrl(jdbc.getJdbcUrl(), jdbc.getUsername(), jdbc.getPassword()));
		return new ConnectionPool(ConnectionPoolConfiguration.builder(database).initialSize(1).maxSize(10).build());
	}

	/**
	 * The store-side fence of the reactive purchases: the same column as the JDBC purchases'
	 * ({@code stock.fencing_token}), so that a stale grant of either kind is refused by the row.
	 * @param connectionFactory the reactive purchase's ConnectionFactory
	 * @return the fence
	 */
	@Bean
	R2dbcLockFence reactiveStockFence(@Qualifier(CONNECTION_FACTORY) ConnectionFactory connectionFactory) {
		return R2dbcLockFence.guardedRows(connectionFactory, "stock", "sku", "fencing_token");
	}

	/**
	 * The reactive transactions of the reactive purchase, with the commit guard of locked
	 * {@code Mono}s.
	 * @param connectionFactory the reactive purchase's ConnectionFactory
	 * @return the operator
	 */
	@Bean
	TransactionalOperator reactiveStockTransactions(
			@Qualifier(CONNECTION_FACTORY) ConnectionFactory connectionFactory) {
		return TransactionalOperator
			.create(ReactiveLockCommitGuard.guard(new R2dbcTransactionManager(connectionFactory)));
	}

}
