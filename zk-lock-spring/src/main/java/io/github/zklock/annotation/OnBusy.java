package io.github.zklock.annotation;

/**
 * What a {@link DistributedLock @DistributedLock} or {@link DistributedSemaphore @DistributedSemaphore}
 * method does when its lock (or a permit) stays busy for the whole wait time.
 *
 * <p>Only "busy" is covered: a failure to reach ZooKeeper, an illegal key or a
 * {@link io.github.zklock.LockUpgradeException} always throws, whatever is chosen here, so that
 * "ZooKeeper is down" is never mistaken for "another instance is doing the work".
 */
public enum OnBusy {

	/**
	 * Throw {@link io.github.zklock.LockAcquisitionException} without invoking the method.
	 */
	FAIL,

	/**
	 * Do not invoke the method and return {@code null} ({@code Optional.empty()} for a method
	 * returning {@link java.util.Optional}; nothing for a {@code void} method), for work that one
	 * instance at a time is enough to do, such as a scheduled job. A method with a primitive return
	 * type other than {@code void} cannot return "nothing" and is rejected at start-up. The skip is
	 * logged at debug level and observed as the outcome {@code skipped} of {@code zk.lock.acquire}.
	 */
	SKIP

}
