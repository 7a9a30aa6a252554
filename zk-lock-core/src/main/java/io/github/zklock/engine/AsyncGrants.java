package io.github.zklock.engine;

import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Helpers for the futures and stages of asynchronous grants.
 */
public final class AsyncGrants {

	private AsyncGrants() {
	}

	/**
	 * Return the cause of a {@link CompletionException}, else the exception itself.
	 * @param ex what a stage completed with
	 * @return the failure to report
	 */
	public static Throwable unwrap(Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

	/**
	 * Cancel a stage when it is a {@code CompletableFuture}; one that cannot be cancelled ends on its
	 * own.
	 * @param stage the stage
	 */
	public static void cancel(CompletionStage<?> stage) {
		try {
			stage.toCompletableFuture().cancel(true);
		}
		catch (UnsupportedOperationException ex) {
			// A stage that cannot be cancelled ends on its own; the grant is released then.
		}
	}

	static RuntimeException asRuntime(Throwable ex) {
		Throwable cause = unwrap(ex);
		if (cause instanceof RuntimeException runtime) {
			return runtime;
		}
		if (cause instanceof Error error) {
			throw error;
		}
		return new CompletionException(cause);
	}

}
