package io.github.zklock.transaction;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * How an {@link R2dbcLockFence} is defined, before any statement: the name rules of
 * {@link JdbcLockFenceDefinitionTests} (the two fences share them), and the fence table's DDL,
 * learned from the first connection. What the fence does on a database is tested by the
 * subclasses of {@link AbstractR2dbcLockFenceTests}.
 */
class R2dbcLockFenceDefinitionTests {

	/** Connected to only by {@code createTableSql()}, which learns the database (H2 here). */
	private final ConnectionFactory connectionFactory = new H2ConnectionFactory(
			H2ConnectionConfiguration.builder().inMemory("r2dbc-fence-definition").build());

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "zk lock fence", "fence; DROP TABLE orders", "fence--", "\"fence\"", "`fence`",
			"1fence", "fence.", ".fence", "a..b", "a.b.c.d", "fence(x)", "fence'", "zk-lock-fence", "fence\n" })
	void rejectsATableNameThatIsNotAnIdentifier(String tableName) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcLockFence.fenceTable(this.connectionFactory, tableName))
			.withMessageContaining("Table name")
			.withMessageContaining("not a plain SQL identifier");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcLockFence.guardedRows(this.connectionFactory, tableName, "id", "fencing_token"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "stock.id", "id = id OR 1", "\"id\"", "9id", "id;" })
	void rejectsAColumnNameThatIsNotAPlainIdentifier(String column) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcLockFence.guardedRows(this.connectionFactory, "stock", column, "fencing_token"))
			.withMessageContaining("Key column");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcLockFence.guardedRows(this.connectionFactory, "stock", "id", column))
			.withMessageContaining("Token column");
	}

	@Test
	void rejectsOneColumnAsKeyAndToken() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcLockFence.guardedRows(this.connectionFactory, "stock", "version", "VERSION"))
			.withMessageContaining("must differ");
	}

	@Test
	void rejectsMissingArguments() {
		assertThatNullPointerException().isThrownBy(() -> R2dbcLockFence.fenceTable(null));
		assertThatNullPointerException().isThrownBy(() -> R2dbcLockFence.fenceTable(this.connectionFactory, null));
		assertThatNullPointerException()
			.isThrownBy(() -> R2dbcLockFence.guardedRows(this.connectionFactory, "stock", null, "fencing_token"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "zk_lock_fence", "ZK_LOCK_FENCE", "_fence2", "locks.zk_lock_fence", "app.locks.fence" })
	void acceptsPlainAndQualifiedTableNames(String tableName) {
		assertThat(R2dbcLockFence.fenceTable(this.connectionFactory, tableName).getTableName()).isEqualTo(tableName);
		assertThat(R2dbcLockFence.guardedRows(this.connectionFactory, tableName, "id", "fencing_token").isFenceTable())
			.isFalse();
	}

	@Test
	void fenceTableDdlIsKeyedByLockPath() {
		R2dbcLockFence fence = R2dbcLockFence.fenceTable(this.connectionFactory);
		assertThat(fence.getTableName()).isEqualTo(R2dbcLockFence.DEFAULT_TABLE).isEqualTo("zk_lock_fence");
		assertThat(fence.isFenceTable()).isTrue();
		assertThat(fence.createTableSql().block()).isEqualTo("CREATE TABLE IF NOT EXISTS zk_lock_fence "
				+ "(lock_path VARCHAR(1024) PRIMARY KEY, fencing_token BIGINT NOT NULL)");
		assertThat(R2dbcLockFence.fenceTable(this.connectionFactory, "locks.fence").createTableSql().block())
			.startsWith("CREATE TABLE IF NOT EXISTS locks.fence (");
		assertThat(fence).hasToString("R2dbcLockFence[fence table zk_lock_fence(lock_path, fencing_token)]");
	}

}
