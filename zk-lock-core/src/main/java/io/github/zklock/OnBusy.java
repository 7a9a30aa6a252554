package io.github.zklock;

/**
 * What a request does when its lock (a key of a multi-lock, or every permit of a semaphore) stays
 * busy for the whole wait time: the {@link LockRequest#onBusy() on-busy policy} of
 * {@link LockTemplate#execute(LockRequest, LockCallback)}, of the asynchronous and reactive forms
 * and of {@code @DistributedLock(onBusy = ...)}.
 *
 * <p>Only "busy" is covered: a failure to reach ZooKeeper, an illegal key or a
 * {@link LockUpgradeException} always throws, whatever is chosen here, so that "ZooKeeper is
 * down" is never mistaken for "another instance is doing the work".
 */
public enum OnBusy {

	/**
	 * Fail with {@link LockAcquisitionException} without running the work.
	 */
	FAIL,

	/**
	 * Skip the work: {@code execute} returns {@link LockResult#skipped()}, an annotated method
	 * returns {@code null} ({@code Optional.empty()} for an {@code Optional}, nothing for
	 * {@code void}, an empty {@code Mono} or {@code Flux}), for work that one instance at a time
	 * is enough to do, such as a scheduled job. A skip is logged at debug level and observed as
	 * the outcome {@code skipped} of {@code zk.lock.acquire} (a busy {@code FAIL} request as
	 * {@code timeout}).
	 */
	SKIP

}
