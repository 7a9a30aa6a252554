package io.github.zklock.transaction;

/**
 * {@link JdbcLockFence} on H2 in its own mode (unquoted names folded to upper case): every case
 * of {@link AbstractJdbcLockFenceTests}.
 */
class H2JdbcLockFenceTests extends AbstractH2JdbcLockFenceTests {

	@Override
	String urlSettings() {
		return "";
	}

}
