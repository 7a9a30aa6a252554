package io.github.zklock.transaction;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * How a {@link JdbcLockFence} is defined, before any database is involved: table and column names
 * must be plain SQL identifiers (the table optionally qualified), so that nothing but an
 * identifier ever reaches the SQL text, and the fence table's DDL. What the fence does on a
 * database is tested by the subclasses of {@link AbstractJdbcLockFenceTests}.
 */
class JdbcLockFenceDefinitionTests {

	/**
	 * Connected to only by {@code createTableSql()}, which learns the database (H2 here): a fence
	 * touches its DataSource only for that and when it advances.
	 */
	private final DataSource dataSource = new DriverManagerDataSource("jdbc:h2:mem:fence-definition");

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "zk lock fence", "fence; DROP TABLE orders", "fence--", "\"fence\"", "`fence`",
			"1fence", "fence.", ".fence", "a..b", "a.b.c.d", "fence(x)", "fence'", "zk-lock-fence", "fence\n" })
	void rejectsATableNameThatIsNotAnIdentifier(String tableName) {
		assertThatIllegalArgumentException().isThrownBy(() -> JdbcLockFence.fenceTable(this.dataSource, tableName))
			.withMessageContaining("Table name")
			.withMessageContaining("not a plain SQL identifier");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcLockFence.guardedRows(this.dataSource, tableName, "id", "fencing_token"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "stock.id", "id = id OR 1", "\"id\"", "9id", "id;" })
	void rejectsAColumnNameThatIsNotAPlainIdentifier(String column) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcLockFence.guardedRows(this.dataSource, "stock", column, "fencing_token"))
			.withMessageContaining("Key column");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcLockFence.guardedRows(this.dataSource, "stock", "id", column))
			.withMessageContaining("Token column");
	}

	@Test
	void rejectsOneColumnAsKeyAndToken() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcLockFence.guardedRows(this.dataSource, "stock", "version", "VERSION"))
			.withMessageContaining("must differ");
	}

	@Test
	void rejectsMissingArguments() {
		assertThatNullPointerException().isThrownBy(() -> JdbcLockFence.fenceTable(null));
		assertThatNullPointerException().isThrownBy(() -> JdbcLockFence.fenceTable(this.dataSource, null));
		assertThatNullPointerException()
			.isThrownBy(() -> JdbcLockFence.guardedRows(this.dataSource, "stock", null, "fencing_token"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "zk_lock_fence", "ZK_LOCK_FENCE", "_fence2", "locks.zk_lock_fence", "app.locks.fence" })
	void acceptsPlainAndQualifiedTableNames(String tableName) {
		assertThat(JdbcLockFence.fenceTable(this.dataSource, tableName).getTableName()).isEqualTo(tableName);
		assertThat(JdbcLockFence.guardedRows(this.dataSource, tableName, "id", "fencing_token").isFenceTable())
			.isFalse();
	}

	@Test
	void fenceTableDdlIsKeyedByLockPath() {
		JdbcLockFence fence = JdbcLockFence.fenceTable(this.dataSource);
		assertThat(fence.getTableName()).isEqualTo(JdbcLockFence.DEFAULT_TABLE).isEqualTo("zk_lock_fence");
		assertThat(fence.isFenceTable()).isTrue();
		assertThat(fence.createTableSql()).isEqualTo("CREATE TABLE IF NOT EXISTS zk_lock_fence "
				+ "(lock_path VARCHAR(1024) PRIMARY KEY, fencing_token BIGINT NOT NULL)");
		assertThat(JdbcLockFence.fenceTable(this.dataSource, "locks.fence").createTableSql())
			.startsWith("CREATE TABLE IF NOT EXISTS locks.fence (");
	}

}
