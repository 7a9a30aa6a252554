package io.github.zklock.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link LockWorker} running in a child JVM on the test class path. Its output goes to a log
 * file; the lines of the worker protocol ({@value LockWorker#PREFIX}...) are also queued for
 * {@link #awaitLine}. Close it in a {@code finally} block: {@link #close()} kills the JVM if it
 * still runs.
 */
final class ChildJvm implements AutoCloseable {

	private final String name;

	private final Process process;

	private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

	private final Map<String, String> latest = new ConcurrentHashMap<>();

	private final Writer stdin;

	private volatile boolean outputEnded;

	private ChildJvm(String name, Process process, Path log) {
		this.name = name;
		this.process = process;
		this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
		Thread reader = new Thread(() -> read(log), "child-jvm-" + name);
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Start {@link LockWorker} with the given arguments in a new JVM. The class path is this JVM's
	 * {@code java.class.path}: surefire sets it to the test class path (its booter jar only
	 * carries it in a manifest, which the child would read just as well).
	 * @param name a name for the log file and messages
	 * @param args the worker's arguments
	 */
	static ChildJvm start(String name, String... args) throws IOException {
		Files.createDirectories(Chaos.OUTPUT_DIR);
		String java = ProcessHandle.current().info().command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		List<String> command = new ArrayList<>(List.of(java, "-Xmx192m", "-XX:+UseSerialGC",
				"-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), LockWorker.class.getName()));
		command.addAll(List.of(args));
		Path log = Chaos.OUTPUT_DIR.resolve(name + ".log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		return new ChildJvm(name, process, log);
	}

	String name() {
		return this.name;
	}

	long pid() {
		return this.process.pid();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Wait for the next protocol line with the given keyword and return what follows it.
	 * @throws TimeoutException if none comes in time or the JVM exits first
	 */
	String awaitLine(String keyword, Duration timeout) throws InterruptedException, TimeoutException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			long remaining = deadline - System.nanoTime();
			String line = this.lines.poll(Math.min(Math.max(remaining, 0), TimeUnit.MILLISECONDS.toNanos(200)),
					TimeUnit.NANOSECONDS);
			if (line != null && line.equals(keyword)) {
				return "";
			}
			if (line != null && line.startsWith(keyword + " ")) {
				return line.substring(keyword.length() + 1);
			}
			if (line == null && (remaining <= 0 || (this.outputEnded && this.lines.isEmpty()))) {
				throw new TimeoutException(this.name + ": no '" + keyword + "' line within " + timeout
						+ (this.process.isAlive() ? "" : " (exited with " + this.process.exitValue() + ")")
						+ "; see " + Chaos.OUTPUT_DIR.resolve(this.name + ".log"));
			}
		}
	}

	/** The last value seen for a protocol keyword, for example the current session, or null. */
	String latest(String keyword) {
		return this.latest.get(keyword);
	}

	/** Send a line to the worker's standard input. */
	void send(String line) throws IOException {
		this.stdin.write(line + "\n");
		this.stdin.flush();
	}

	/**
	 * Wait for the JVM to exit.
	 * @return its exit code
	 * @throws TimeoutException if it still runs after the timeout
	 */
	int awaitExit(Duration timeout) throws InterruptedException, TimeoutException {
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new TimeoutException(this.name + " still running after " + timeout);
		}
		return this.process.exitValue();
	}

	/**
	 * Kill the JVM with SIGKILL ({@link Process#destroyForcibly()} on Linux) and wait for it to go.
	 */
	void kill() throws InterruptedException {
		this.process.destroyForcibly();
		this.process.waitFor(30, TimeUnit.SECONDS);
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			kill();
		}
	}

	private void read(Path log) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8));
				Writer out = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
			String line;
			while ((line = reader.readLine()) != null) {
				out.write(line);
				out.write('\n');
				if (line.startsWith(LockWorker.PREFIX)) {
					out.flush();
					String message = line.substring(LockWorker.PREFIX.length());
					int space = message.indexOf(' ');
					if (space > 0) {
						this.latest.put(message.substring(0, space), message.substring(space + 1));
					}
					this.lines.add(message);
				}
			}
		}
		catch (IOException ex) {
			// The pipe closes when the JVM dies; what was read is in the log.
		}
		finally {
			this.outputEnded = true;
		}
	}

	@Override
	public String toString() {
		return "child JVM " + this.name + " (pid " + this.process.pid() + ")";
	}

}
