package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a test's Curator clients at once rather than one after the other. Closing a client
 * returns only once its ZooKeeper client's send thread has ended, and on the default NIO socket
 * that thread first sleeps 100 ms ({@code ClientCnxnSocketNIO.cleanup()}) when the server closes
 * the connection after the session's close: closed one after the other, as the
 * {@link io.github.zklock.test.ZooKeeperExtension} closes a test's clients, a test of k clients
 * waited k times that (issue 45). Closing a client again does nothing, so the extension's own
 * close afterwards finds them closed. Close what uses a client (a registry) before it.
 */
public final class ClosedTogether {

	/** The longest one close may take. */
	private static final long BOUND_SECONDS = 30;

	private ClosedTogether() {
	}

	/**
	 * Close each, each on a thread of its own, and return once all are closed.
	 * @param closeables what to close; {@code null}s (never made) are skipped
	 * @throws IllegalStateException if one failed to close, or did not within 30 s (the others
	 * are closed all the same)
	 */
	public static void close(AutoCloseable... closeables) {
		close(Arrays.asList(closeables));
	}

	/**
	 * Close each, each on a thread of its own, and return once all are closed.
	 * @param closeables what to close; {@code null}s (never made) are skipped
	 * @throws IllegalStateException if one failed to close, or did not within 30 s (the others
	 * are closed all the same)
	 */
	public static void close(Collection<? extends AutoCloseable> closeables) {
		List<CompletableFuture<Void>> closing = new ArrayList<>();
		for (AutoCloseable closeable : closeables) {
			if (closeable == null) {
				continue;
			}
			CompletableFuture<Void> closed = new CompletableFuture<>();
			Thread thread = new Thread(() -> {
				try {
					closeable.close();
					closed.complete(null);
				}
				catch (Throwable ex) {
					closed.completeExceptionally(ex);
				}
			}, "close-" + closeable);
			thread.setDaemon(true);
			thread.start();
			closing.add(closed);
		}
		IllegalStateException failure = null;
		for (CompletableFuture<Void> closed : closing) {
			try {
				closed.get(BOUND_SECONDS, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				if (ex instanceof InterruptedException) {
					Thread.currentThread().interrupt();
				}
				if (failure == null) {
					failure = new IllegalStateException("Could not close everything a test made", ex);
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

}
