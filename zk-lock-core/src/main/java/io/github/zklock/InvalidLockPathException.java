package io.github.zklock;

/**
 * Thrown when a lock's key, or a value a key template resolves to, is {@code null}, empty or
 * not a legal ZooKeeper path, or when the key joined to the root path would be too long. Thrown
 * before any ZooKeeper request; the guarded method is not invoked. Also thrown at start-up for a
 * malformed {@code @DistributedLock} key template, or an illegal root path.
 */
public class InvalidLockPathException extends LockException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create an exception with a message.
	 * @param message what is wrong with the path, naming the path or template
	 */
	public InvalidLockPathException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a message and a cause.
	 * @param message what is wrong with the path, naming the path or template
	 * @param cause the parse or validation failure
	 */
	public InvalidLockPathException(String message, Throwable cause) {
		super(message, cause);
	}

}
