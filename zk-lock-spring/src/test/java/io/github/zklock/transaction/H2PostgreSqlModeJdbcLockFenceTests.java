package io.github.zklock.transaction;

/**
 * {@link JdbcLockFence} on H2 in PostgreSQL compatibility mode, with unquoted names folded to lower
 * case as PostgreSQL does: every case of {@link AbstractJdbcLockFenceTests}. A real PostgreSQL is
 * not used: the build runs as root, where an embedded PostgreSQL cannot run {@code initdb}.
 */
class H2PostgreSqlModeJdbcLockFenceTests extends AbstractH2JdbcLockFenceTests {

	@Override
	String urlSettings() {
		return ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;DEFAULT_NULL_ORDERING=HIGH";
	}

}
