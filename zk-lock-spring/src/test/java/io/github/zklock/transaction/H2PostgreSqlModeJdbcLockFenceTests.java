package io.github.zklock.transaction;

/**
 * {@link JdbcLockFence} on H2 in PostgreSQL compatibility mode, with unquoted names folded to lower
 * case as PostgreSQL does: every case of {@link AbstractJdbcLockFenceTests}. The fence takes H2's
 * statements here (it tells H2 by its product name in any mode); a real PostgreSQL runs them all
 * in {@link PostgreSqlJdbcLockFenceTests}.
 */
class H2PostgreSqlModeJdbcLockFenceTests extends AbstractH2JdbcLockFenceTests {

	@Override
	String urlSettings() {
		return ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;DEFAULT_NULL_ORDERING=HIGH";
	}

}
