package io.github.zklock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * The lock grants the current thread runs under, innermost last: gives a {@code @DistributedLock}
 * method (or any code it calls) the {@link LockHandle} of its lock, for example to pass the
 * {@linkplain LockHandle#fencingToken() fencing token} to the store it writes.
 *
 * <p>Filled by {@link LockTemplate#execute(LockRequest, LockCallback)} (and so by the annotation)
 * for the duration of the callback; grants taken with {@link LockTemplate#acquire} are not
 * registered here, their caller already holds the handle. Thread-confined: a task handed to
 * another thread does not see the grants of the thread that submitted it.
 */
public final class LockContext {

	private static final ThreadLocal<Deque<LockHandle>> handles = ThreadLocal.withInitial(ArrayDeque::new);

	private LockContext() {
	}

	/**
	 * Return the innermost grant the current thread runs under.
	 * @return the handle, or empty outside any locked callback
	 */
	public static Optional<LockHandle> current() {
		return Optional.ofNullable(handles.get().peekLast());
	}

	/**
	 * Return the innermost grant the current thread runs under, failing outside one.
	 * @return the handle
	 * @throws IllegalStateException if the thread runs under no lock
	 */
	public static LockHandle require() {
		LockHandle handle = handles.get().peekLast();
		if (handle == null) {
			throw new IllegalStateException("No lock is held by this thread: call from within a @DistributedLock "
					+ "method or a LockTemplate.execute callback");
		}
		return handle;
	}

	/**
	 * Return every grant the current thread runs under, outermost first.
	 * @return a snapshot, empty outside any locked callback
	 */
	public static List<LockHandle> held() {
		return List.copyOf(handles.get());
	}

	static void push(LockHandle handle) {
		handles.get().addLast(handle);
	}

	static void pop(LockHandle handle) {
		// The empty deque stays with the thread: no allocation per locked call. It holds only JDK
		// types, so it pins no application class loader.
		handles.get().removeLastOccurrence(handle);
	}

}
