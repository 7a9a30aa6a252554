package io.github.zklock.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.github.zklock.InvalidLockPathException;

/**
 * Explains an {@link InvalidLockPathException} that failed the start: a malformed path template
 * or an illegal static path on a {@code @DistributedLock} or {@code @DistributedSemaphore} method
 * (checked as each bean is created), or an illegal lock root path. The exception's message names
 * the method or path.
 */
class InvalidLockPathFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLockPathException> {

	/** How {@code LockOperationSource} starts the message of a rejected annotation. */
	private static final List<String> ANNOTATIONS = List.of("@DistributedLock", "@DistributedSemaphore");

	private static final String PATH_RULES = "A lock path starts with '/', has no empty, '.' or '..' segment, "
			+ "does not end with '/' and holds no control characters.";

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidLockPathException cause) {
		String message = cause.getMessage();
		String annotation = (message != null) ? rejectedAnnotation(message) : null;
		if (annotation != null) {
			return new FailureAnalysis("A " + annotation + " path is invalid: " + message,
					"Fix the path of the " + annotation + " annotation on that method. " + PATH_RULES
							+ " Values come from #{...} SpEL templates over the method's arguments or beans, "
							+ "for example path = \"/orders/#{#orderId}\" or \"/stock/#{#item.sku}\"; each template "
							+ "must be a complete, well-formed expression.",
					cause);
		}
		if (message != null && message.contains("root path")) {
			return new FailureAnalysis("The lock root path is invalid: " + message,
					"Set zk.lock.root-path to an absolute ZooKeeper path such as /locks or /my-app/locks. "
							+ PATH_RULES,
					cause);
		}
		return new FailureAnalysis("A lock path used at start-up is invalid: " + message,
				"Fix the lock path named above. " + PATH_RULES, cause);
	}

	private static @Nullable String rejectedAnnotation(String message) {
		for (String annotation : ANNOTATIONS) {
			if (message.startsWith(annotation + " on ")) {
				return annotation;
			}
		}
		return null;
	}

}
