package io.github.zklock.curator;

import io.github.zklock.LockHandle;
import io.github.zklock.spi.RegistryGrant;

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

	/**
	 * Return whether a registry's grant was handed over locally, on the znode of an earlier grant
	 * of the application ({@link RegistryGrant#isLocalHandoff()}).
	 * @param grant a grant the registry made
	 * @return whether it rides an earlier grant's znode
	 */
	public static boolean handedOver(LockHandle grant) {
		return ((RegistryGrant) grant).isLocalHandoff();
	}

	/**
	 * Return how many grants the znode of a template's grant has served, this one included, as the
	 * operators' view tells ({@link HeldLock#chainLength()}): 1 for a grant made through ZooKeeper.
	 * @param registry the registry behind the template
	 * @param handle a grant held on a key of which it is the only one held
	 * @return the chain length
	 */
	public static int chainLength(CuratorLockRegistry registry, LockHandle handle) {
		return admin(registry).describeHeldLocks()
			.stream()
			.filter((held) -> held.path().equals(handle.path()))
			.mapToInt(HeldLock::chainLength)
			.max()
			.orElseThrow(() -> new AssertionError("Not held: " + handle));
	}

}
