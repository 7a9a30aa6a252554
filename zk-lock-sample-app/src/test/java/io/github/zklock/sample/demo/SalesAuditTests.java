package io.github.zklock.sample.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.UUID;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.entry;

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
		stock("apple", 4);
		long mark = this.audit.mark();
		// app-1 sold three in one chain of local hand-offs on znode 10, then app-2 on 12 and 15.
		order("apple", "app-1", 10L);
		order("apple", "app-1", 10L);
		order("apple", "app-1", 10L);
		order("apple", "app-2", 12L);
		order("apple", "app-2", 15L);
		order("apple", "app-2", 15L);

		SalesAudit.Sales sales = this.audit.read("apple", mark);

		assertThat(sales.fencingTokensNonDecreasing()).isTrue();
		assertThat(sales.ordersSharingPreviousToken()).isEqualTo(3);
		assertThat(sales.orders()).isEqualTo(6);
		assertThat(sales.sold()).isEqualTo(6);
		assertThat(sales.remaining()).isEqualTo(4);
		assertThat(sales.ordersWithoutToken()).isZero();
		assertThat(sales.ordersByInstance()).containsExactly(entry("app-1", 3L), entry("app-2", 3L));
	}

	@Test
	void rejectsATokenLowerThanTheOneBefore() throws SQLException {
		stock("banana", 0);
		long mark = this.audit.mark();
		order("banana", "app-1", 10L);
		order("banana", "app-2", 12L);
		// A zombie holder of the grant on znode 11 wrote after the holder of 12.
		order("banana", "app-3", 11L);
		order("banana", "app-3", 20L);

		SalesAudit.Sales sales = this.audit.read("banana", mark);

		assertThat(sales.fencingTokensNonDecreasing()).isFalse();
		assertThat(sales.ordersSharingPreviousToken()).isZero();
	}

	@Test
	void strictlyIncreasingTokensShareNone() throws SQLException {
		stock("cherry", 0);
		long mark = this.audit.mark();
		order("cherry", "app-1", 3L);
		order("cherry", "app-2", 4L);
		order("cherry", "app-1", 9L);

		SalesAudit.Sales sales = this.audit.read("cherry", mark);

		assertThat(sales.fencingTokensNonDecreasing()).isTrue();
		assertThat(sales.ordersSharingPreviousToken()).isZero();
	}

	@Test
	void ordersWithoutTokenAreCountedAndLeftOutOfTheTokenOrder() throws SQLException {
		stock("damson", 1);
		long mark = this.audit.mark();
		order("damson", "app-1", 7L);
		order("damson", "app-2", null);
		order("damson", "app-1", 7L);

		SalesAudit.Sales sales = this.audit.read("damson", mark);

		assertThat(sales.ordersWithoutToken()).isOne();
		assertThat(sales.fencingTokensNonDecreasing()).isTrue();
		assertThat(sales.ordersSharingPreviousToken()).isOne();
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

}
