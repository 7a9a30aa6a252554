package io.github.zklock.docs.lost;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.transaction.JdbcLockFence;

/**
 * The guide's guarded-rows fence: each stock row keeps the highest fencing token that wrote it, in
 * its own {@code fencing_token} column, found by its {@code sku}.
 */
// tag::guarded-rows[]
@Configuration(proxyBeanMethods = false)
public class StockFenceConfiguration {

	@Bean
	JdbcLockFence stockFence(DataSource dataSource) {
		return JdbcLockFence.guardedRows(dataSource, "stock", "sku", "fencing_token");
	}

}
// end::guarded-rows[]
