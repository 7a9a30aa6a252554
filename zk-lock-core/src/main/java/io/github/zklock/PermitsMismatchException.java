package io.github.zklock;

/**
 * Thrown when a permit of a semaphore is requested with another number of permits than the one
 * stored with the key: every participant of a semaphore must agree on how many holders it lets
 * in, and Curator's {@code InterProcessSemaphoreV2} does not check it (each participant would
 * count against its own limit). Nothing was acquired; the method or callback was not invoked.
 *
 * <p>The number is stored in the data of the key's znode by the participant that creates the
 * znode (or first finds it without a number); ZooKeeper removes the znode, and with it the
 * number, once the semaphore has had no lease and no waiter for a while (it is a container
 * znode), after which a new number may be used.
 */
public class PermitsMismatchException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String path;

	private final int requestedPermits;

	private final int storedPermits;

	/**
	 * Create an exception.
	 * @param path the full znode path of the semaphore
	 * @param requestedPermits the number of permits this request names
	 * @param storedPermits the number stored with the key by another participant
	 */
	public PermitsMismatchException(String path, int requestedPermits, int storedPermits) {
		super("Semaphore '" + path + "' has " + storedPermits + " permits (stored with the key by the participant "
				+ "that first used it), but this request names " + requestedPermits
				+ "; every participant of a semaphore must name the same number of permits");
		this.path = path;
		this.requestedPermits = requestedPermits;
		this.storedPermits = storedPermits;
	}

	/**
	 * Return the full znode path of the semaphore.
	 * @return the semaphore's path
	 */
	public String getPath() {
		return this.path;
	}

	/**
	 * Return the number of permits the failed request named.
	 * @return the requested number of permits
	 */
	public int getRequestedPermits() {
		return this.requestedPermits;
	}

	/**
	 * Return the number of permits stored with the key.
	 * @return the stored number of permits
	 */
	public int getStoredPermits() {
		return this.storedPermits;
	}

}
