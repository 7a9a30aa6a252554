package io.github.zklock.autoconfigure;

import java.util.function.Function;

/**
 * The fence table of the fence auto-configurations ({@link ZkLockFenceAutoConfiguration},
 * {@link ZkLockR2dbcFenceAutoConfiguration}), kept apart from both so that neither loads the
 * other's optional classes (spring-jdbc, spring-r2dbc).
 */
final class FenceTables {

	private FenceTables() {
	}

	/**
	 * Create a fence on the configured table; a name that is not a plain identifier fails the start
	 * naming its property.
	 * @param settings the {@code zk.lock.fence.*} properties
	 * @param fenceTable creates the fence on a table name
	 * @return the fence
	 * @throws IllegalStateException if the table name is not a plain SQL identifier
	 */
	static <F> F create(ZkLockProperties.Fence settings, Function<String, F> fenceTable) {
		try {
			return fenceTable.apply(settings.getTableName());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("zk.lock.fence.table-name: " + ex.getMessage(), ex);
		}
	}

}
