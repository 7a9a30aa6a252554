package io.github.zklock.docs.operations;

import java.time.Duration;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.LockQueue;
import io.github.zklock.curator.Revocation;
import io.github.zklock.curator.RevocationMode;

/**
 * The guide's operator side in code: what the {@code zklocks} endpoint does.
 */
public class AdminUsage {

	private final CuratorLockAdmin admin;

	/**
	 * @param admin the operator side of the application's registry (a bean with the starter)
	 */
	public AdminUsage(CuratorLockAdmin admin) {
		this.admin = admin;
	}

	/**
	 * Revoke the lock of a key when more than a given number wait for it.
	 * @param key the key
	 * @param maxWaiters how many waiters are tolerated
	 * @return what was done, {@code null} when nothing was
	 */
	public Revocation unstick(String key, int maxWaiters) {
		// tag::admin[]
		LockQueue queue = this.admin.describeQueue(key); // holders and waiters across the ensemble
		if (queue.waiters() > maxWaiters) {
			return this.admin.revoke(key, RevocationMode.REQUEST, Duration.ofSeconds(5));
		}
		// end::admin[]
		return null;
	}

}
