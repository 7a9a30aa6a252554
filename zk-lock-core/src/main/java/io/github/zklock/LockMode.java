package io.github.zklock;

/**
 * The kind of ZooKeeper lock taken for a path.
 *
 * <p>The modes map onto Apache Curator recipes:
 * <ul>
 * <li>{@link #EXCLUSIVE}: {@code InterProcessMutex} (reentrant), or Curator's single-lease
 * semaphore ({@code InterProcessSemaphoreMutex}'s recipe) when reentrancy is switched off;</li>
 * <li>{@link #READ} and {@link #WRITE}: the two sides of one {@code InterProcessReadWriteLock} on
 * the path.</li>
 * </ul>
 * A path must be used with one kind of recipe: an {@code EXCLUSIVE} lock and a {@code WRITE} lock
 * on the same path keep different znodes and do not exclude each other.
 */
public enum LockMode {

	/**
	 * One holder at a time across every process.
	 */
	EXCLUSIVE,

	/**
	 * Shared with other readers; excluded by a writer that queued earlier.
	 */
	READ,

	/**
	 * Excludes readers and other writers. A write holder may also take the read side of the same
	 * path (downgrade); a read holder asking for the write side fails at once.
	 */
	WRITE

}
