package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockMode;
import io.github.zklock.expression.LockPathTemplate;

/**
 * A validated {@code @DistributedLock} declaration, built once per method.
 *
 * @param method the most specific method, whose parameter names the path template uses
 * @param path the parsed path template
 * @param mode the lock mode
 * @param reentrant whether an EXCLUSIVE lock is reentrant
 * @param waitTime the wait time, {@code null} for the default, {@code LockRequest.WAIT_FOREVER} for no
 * limit
 */
public record LockOperation(Method method, LockPathTemplate path, LockMode mode, boolean reentrant,
		@Nullable Duration waitTime) {
}
