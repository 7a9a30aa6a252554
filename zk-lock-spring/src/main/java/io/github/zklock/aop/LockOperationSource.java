package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.expression.LockPathExpressionEvaluator;

/**
 * Finds and validates {@link DistributedLock @DistributedLock} on methods, building one
 * {@link LockOperation} per method and target class and caching it (the path template is parsed
 * there, once).
 *
 * <p>Thread-safe.
 */
public class LockOperationSource {

	private final Map<MethodClassKey, Optional<LockOperation>> operations = new ConcurrentHashMap<>(64);

	private final Map<String, LockOperation> operationsByPath = new ConcurrentHashMap<>(64);

	private final LockPathExpressionEvaluator evaluator;

	/**
	 * Create a source.
	 * @param evaluator parses and resolves path templates
	 */
	public LockOperationSource(LockPathExpressionEvaluator evaluator) {
		this.evaluator = evaluator;
	}

	/**
	 * Return the lock operation of a method, or {@code null} if it is not annotated.
	 * @param method the invoked method (may be an interface method)
	 * @param targetClass the target class, or {@code null} if unknown
	 * @return the operation, or {@code null}
	 * @throws InvalidLockPathException if the path template is malformed or not a legal path
	 * @throws IllegalStateException if the declaration is otherwise invalid: an asynchronous or
	 * reactive return type, a negative wait time other than {@code WAIT_FOREVER}, or
	 * {@code reentrant = false} on READ or WRITE, or the same path template already used by another
	 * method with a lock kind that would not exclude this one (EXCLUSIVE vs READ/WRITE, reentrant vs
	 * not)
	 */
	public @Nullable LockOperation getOperation(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey key = new MethodClassKey(method, targetClass);
		Optional<LockOperation> operation = this.operations.get(key);
		if (operation == null) {
			operation = Optional.ofNullable(buildOperation(method, targetClass));
			this.operations.put(key, operation);
		}
		return operation.orElse(null);
	}

	/**
	 * Resolve the key of one call.
	 * @param operation the method's operation
	 * @param args the call's arguments
	 * @param target the target object, may be {@code null}
	 * @return the key below the root path
	 * @throws InvalidLockPathException if a template value is {@code null}, empty or fails
	 */
	public String resolvePath(LockOperation operation, @Nullable Object[] args, @Nullable Object target) {
		return this.evaluator.resolve(operation.path(), operation.method(), args, target);
	}

	private @Nullable LockOperation buildOperation(Method method, @Nullable Class<?> targetClass) {
		Method specificMethod = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specificMethod, DistributedLock.class);
		if (annotation == null && specificMethod != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		if (annotation == null) {
			return null;
		}
		String where = ClassUtils.getQualifiedMethodName(specificMethod, targetClass);
		rejectAsyncReturnType(specificMethod, where);
		if (!annotation.reentrant() && annotation.mode() != LockMode.EXCLUSIVE) {
			throw new IllegalStateException("@DistributedLock on " + where + ": reentrant = false applies to "
					+ LockMode.EXCLUSIVE + " only; " + annotation.mode() + " locks are always reentrant");
		}
		LockOperation operation;
		try {
			operation = new LockOperation(specificMethod, this.evaluator.parse(annotation.path()), annotation.mode(),
					annotation.reentrant(), waitTime(annotation, where));
		}
		catch (InvalidLockPathException ex) {
			throw new InvalidLockPathException("@DistributedLock on " + where + ": " + ex.getMessage(), ex);
		}
		rejectConflictingKind(operation, where);
		return operation;
	}

	/**
	 * Each kind keeps its own znodes below the path, so an EXCLUSIVE and a WRITE lock (or a
	 * reentrant and a non-reentrant one) on one path would not exclude each other.
	 */
	private void rejectConflictingKind(LockOperation operation, String where) {
		LockOperation first = this.operationsByPath.putIfAbsent(operation.path().getSource(), operation);
		if (first != null && !recipeKind(first).equals(recipeKind(operation))) {
			throw new IllegalStateException("@DistributedLock on " + where + " locks '" + operation.path()
					+ "' as " + recipeKind(operation) + ", but " + ClassUtils.getQualifiedMethodName(first.method())
					+ " locks the same path as " + recipeKind(first)
					+ "; the two kinds do not exclude each other. Use one kind per path (READ/WRITE for readers and "
					+ "writers)");
		}
	}

	private static String recipeKind(LockOperation operation) {
		if (operation.mode() != LockMode.EXCLUSIVE) {
			return "READ/WRITE";
		}
		return operation.reentrant() ? "EXCLUSIVE" : "EXCLUSIVE (reentrant = false)";
	}

	private static @Nullable Duration waitTime(DistributedLock annotation, String where) {
		long waitTime = annotation.waitTime();
		if (waitTime == DistributedLock.DEFAULT_WAIT_TIME) {
			return null;
		}
		if (waitTime == DistributedLock.WAIT_FOREVER) {
			return LockRequest.WAIT_FOREVER;
		}
		if (waitTime < 0) {
			throw new IllegalStateException("@DistributedLock on " + where + ": waitTime " + waitTime
					+ " is not allowed; use 0 for one attempt, a positive value, WAIT_FOREVER (-1) to wait without "
					+ "limit, or leave it out for zk.lock.default-wait-time");
		}
		return Duration.of(waitTime, annotation.timeUnit().toChronoUnit());
	}

	private static boolean isReactiveStreamsPublisher(Class<?> type) {
		// By name: Reactive Streams is not a dependency, and the registry above only knows the
		// libraries that are present.
		return ClassUtils.getAllInterfacesForClassAsSet(type)
			.stream()
			.anyMatch((candidate) -> candidate.getName().equals("org.reactivestreams.Publisher"));
	}

	private static void rejectAsyncReturnType(Method method, String where) {
		Class<?> returnType = method.getReturnType();
		if (CompletionStage.class.isAssignableFrom(returnType) || Future.class.isAssignableFrom(returnType)
				|| Flow.Publisher.class.isAssignableFrom(returnType) || isReactiveStreamsPublisher(returnType)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
			throw new IllegalStateException("@DistributedLock on " + where + ": return type "
					+ returnType.getName() + " is asynchronous; the lock is bound to the calling thread and would be "
					+ "released before the work completes. Lock inside the asynchronous task instead");
		}
	}

}
