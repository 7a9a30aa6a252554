package io.github.zklock.sample.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.entry;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * How {@link SalesAudit} reads a run from the sample's tables ({@code schema.sql}, on an in-memory
 * H2 database): the stock left, the orders of one SKU after a mark, and the fencing tokens checked
 * as a store that fences its writes checks them, accepting a token equal to the one before (grants
 * handed over locally share their znode's token) and rejecting a lower one.
 */
class SalesAuditTests {

	private final String jdbcUrl = "jdbc:h2:mem:sales-audit-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";

	private final SalesAudit audit = new SalesAudit(this.jdbcUrl, "sa", "");

	private Connection connection;

	@BeforeEach
	void createSchema() throws SQLException {
		this.connection = DriverManager.getConnection(this.jdbcUrl, "sa", "");
		try (Statement statement = this.connection.createStatement()) {
			statement.execute("RUNSCRIPT FROM 'classpath:/schema.sql'");
		}
	}

	@AfterEach
	void dropDatabase() throws SQLException {
		try (Statement statement = this.connection.createStatement()) {
			statement.execute("SHUTDOWN");
		}
		this.connection.close();
	}

	@Test
	void acceptsEqualTokensAndCountsTheSalesOnTheTokenOfTheSaleBefore() throws SQLException {
		// app-1 sold three in one chain of local hand-offs on znode 10, then app-2 on 12 and 15.
		SalesAudit.Sales sales = ordersAfterMark("apple", 4, sale("app-1", 10L), sale("app-1", 10L),
				sale("app-1", 10L), sale("app-2", 12L), sale("app-2", 15L), sale("app-2", 15L));

		assertThat(sales.fencingTokensNonDecreasing()).isTrue();
		assertThat(sales.ordersSharingPreviousToken()).isEqualTo(3);
		assertThat(sales.orders()).isEqualTo(6);
		assertThat(sales.sold()).isEqualTo(6);
		assertThat(sales.remaining()).isEqualTo(4);
		assertThat(sales.ordersWithoutToken()).isZero();
		assertThat(sales.ordersByInstance()).containsExactly(entry("app-1", 3L), entry("app-2", 3L));
	}

	static Stream<Arguments> tokenOrders() {
		return Stream.of(
				// A zombie holder of the grant on znode 11 wrote after the holder of 12.
				arguments(named("rejects a token lower than the one before",
						List.of(sale("app-1", 10L), sale("app-2", 12L), sale("app-3", 11L), sale("app-3", 20L))),
						false, 0, 0),
				arguments(named("strictly increasing tokens share none",
						List.of(sale("app-1", 3L), sale("app-2", 4L), sale("app-1", 9L))), true, 0, 0),
				arguments(named("orders without token are counted and left out of the token order",
						List.of(sale("app-1", 7L), sale("app-2", null), sale("app-1", 7L))), true, 1, 1));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("tokenOrders")
	void checksTheTokensInTheOrderOfTheSales(List<Sale> sales, boolean nonDecreasing, long sharingPreviousToken,
			long withoutToken) throws SQLException {
		SalesAudit.Sales read = ordersAfterMark("banana", 0, sales.toArray(Sale[]::new));

		assertThat(read.fencingTokensNonDecreasing()).isEqualTo(nonDecreasing);
		assertThat(read.ordersSharingPreviousToken()).isEqualTo(sharingPreviousToken);
		assertThat(read.ordersWithoutToken()).isEqualTo(withoutToken);
	}

	@Test
	void readsOnlyTheOrdersOfTheSkuAfterTheMark() throws SQLException {
		stock("elder", 0);
		stock("fig", 0);
		order("elder", "app-1", 50L);
		long mark = this.audit.mark();
		order("elder", "app-1", 20L);
		order("fig", "app-2", 5L);
		order("elder", "app-2", 30L);

		SalesAudit.Sales sales = this.audit.read("elder", mark);

		// Token 50 before the mark and 5 of another SKU would each break the order if counted.
		assertThat(sales.orders()).isEqualTo(2);
		assertThat(sales.fencingTokensNonDecreasing()).isTrue();
		assertThat(sales.ordersByInstance()).containsExactly(entry("app-1", 1L), entry("app-2", 1L));
	}

	@Test
	void unknownSkuIsAnError() throws SQLException {
		long mark = this.audit.mark();
		assertThatIllegalStateException().isThrownBy(() -> this.audit.read("grape", mark))
			.withMessageContaining("'grape'");
	}

	/** A SKU's stock, a mark, then its orders in the order given; the audit of what followed the mark. */
	private SalesAudit.Sales ordersAfterMark(String sku, int stock, Sale... sales) throws SQLException {
		stock(sku, stock);
		long mark = this.audit.mark();
		for (Sale sale : sales) {
			order(sku, sale.instanceId(), sale.fencingToken());
		}
		return this.audit.read(sku, mark);
	}

	private static Sale sale(String instanceId, @Nullable Long fencingToken) {
		return new Sale(instanceId, fencingToken);
	}

	private void stock(String sku, int quantity) throws SQLException {
		try (PreparedStatement statement = this.connection
			.prepareStatement("INSERT INTO stock (sku, quantity) VALUES (?, ?)")) {
			statement.setString(1, sku);
			statement.setInt(2, quantity);
			statement.executeUpdate();
		}
	}

	private void order(String sku, String instanceId, @Nullable Long fencingToken) throws SQLException {
		try (PreparedStatement statement = this.connection
			.prepareStatement("INSERT INTO orders (sku, quantity, instance_id, fencing_token) VALUES (?, 1, ?, ?)")) {
			statement.setString(1, sku);
			statement.setString(2, instanceId);
			if (fencingToken != null) {
				statement.setLong(3, fencingToken);
			}
			else {
				statement.setNull(3, Types.BIGINT);
			}
			statement.executeUpdate();
		}
	}

	/** An order of one unit by an instance, with its grant's token ({@code null}: without the lock). */
	record Sale(String instanceId, @Nullable Long fencingToken) {
	}

}
