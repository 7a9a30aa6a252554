package io.github.zklock.chaos;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The operations of a campaign as the clients saw them: each invoked, then completed ok, failed
 * (an answer that says nothing was committed) or unknown (no answer in time, a broken connection,
 * an unexpected error: it may or may not have been committed). The checkers compare it with what
 * the database holds.
 *
 * <p>Thread-safe.
 */
final class History {

	/** How an operation ended, for its client. */
	enum Outcome {

		/** Answered with success: it must be in the database. */
		OK,

		/** Answered with an error that means nothing was committed: it must not be in the database. */
		FAIL,

		/** No usable answer: either is allowed. */
		UNKNOWN

	}

	/**
	 * One operation.
	 * @param id the operation id, stored with its rows
	 * @param workload the workload it belongs to
	 * @param client the client thread that made it
	 * @param application the instance it was sent to (0-based)
	 * @param invokedNanos when it was sent, {@link System#nanoTime()}
	 * @param completedNanos when its answer (or the give-up) came
	 * @param outcome how it ended
	 * @param status the HTTP status, 0 without an answer
	 * @param token the fencing token answered, -1 if none
	 * @param reason why it did not succeed: the answer's {@code error} value ({@code stale-token},
	 * {@code lock-lost}, ...), {@code status-<n>} without one, {@code connection-refused},
	 * {@code timeout} or the I/O failure's name; empty on success
	 * @param detail a short error text, empty on success
	 */
	record Operation(String id, Workload workload, int client, int application, long invokedNanos, long completedNanos,
			Outcome outcome, int status, long token, String reason, String detail) {
	}

	private final List<Operation> operations = new ArrayList<>();

	private volatile int lastHolder = -1;

	void add(Operation operation) {
		synchronized (this.operations) {
			this.operations.add(operation);
		}
		if (operation.workload() == Workload.FENCED_COUNTER && operation.outcome() == Outcome.OK) {
			this.lastHolder = operation.application();
		}
	}

	/** The instance that last answered a fenced increment with success (a holder of its key), -1 if none. */
	int lastHolder() {
		return this.lastHolder;
	}

	List<Operation> operations() {
		synchronized (this.operations) {
			return List.copyOf(this.operations);
		}
	}

	List<Operation> of(Workload workload) {
		return operations().stream().filter((operation) -> operation.workload() == workload).toList();
	}

	/**
	 * Write the history as CSV, times in milliseconds from {@code originNanos}.
	 * @throws IOException if the file cannot be written
	 */
	void write(Path file, long originNanos) throws IOException {
		try (Writer out = Files.newBufferedWriter(file)) {
			out.write("id,workload,client,application,invoked_ms,completed_ms,outcome,status,token,reason,detail\n");
			for (Operation operation : operations()) {
				out.write(String.join(",", operation.id(), operation.workload().label(),
						Integer.toString(operation.client()), Integer.toString(operation.application()),
						millis(operation.invokedNanos(), originNanos), millis(operation.completedNanos(), originNanos),
						operation.outcome().name(), Integer.toString(operation.status()), Long.toString(operation.token()),
						operation.reason(), csv(operation.detail())));
				out.write('\n');
			}
		}
	}

	private static String millis(long nanos, long originNanos) {
		return String.format(java.util.Locale.ROOT, "%.1f", (nanos - originNanos) / 1e6);
	}

	private static String csv(@Nullable String text) {
		if (text == null || text.isEmpty()) {
			return "";
		}
		return '"' + text.replace("\"", "'").replace('\n', ' ') + '"';
	}

}
