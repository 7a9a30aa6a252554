package io.github.zklock.curator;

/**
 * The operator side of a registry in tests, which check what a registry holds, caches and waits
 * for through it ({@link CuratorLockAdmin}: a view of the registry that holds nothing itself).
 */
public final class Admins {

	private Admins() {
	}

	/**
	 * Return the operator side of a registry.
	 * @param registry the registry
	 * @return a new view of it
	 */
	public static CuratorLockAdmin admin(CuratorLockRegistry registry) {
		return new CuratorLockAdmin(registry);
	}

}
