package io.github.zklock;

import org.jspecify.annotations.Nullable;

/**
 * Code run by {@link LockTemplate#execute} while the lock is held.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface LockCallback<T> {

	/**
	 * Run while the lock is held, on the thread that acquired it.
	 * @param handle the grant, for its fencing token or to check it is still held
	 * @return the result handed back by {@code execute}, may be {@code null}
	 * @throws Exception any failure; unchecked exceptions propagate unchanged from
	 * {@code execute}, checked ones wrapped in {@link java.lang.reflect.UndeclaredThrowableException}
	 */
	@Nullable T doInLock(LockHandle handle) throws Exception;

}
