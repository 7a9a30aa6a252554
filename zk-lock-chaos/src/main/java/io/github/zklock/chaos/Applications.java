package io.github.zklock.chaos;

import java.io.Closeable;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;

/**
 * The sample application in several JVMs of its own (its executable jar, Spring profile
 * {@code chaos}), each connected to the ensemble through its own proxies and to one database, and
 * what the nemesis does to them: SIGKILL and restart, SIGSTOP and SIGCONT (a process pause), a jump
 * of the wall clock (Debian's libfaketime, preloaded, reading an offset from a file of its own,
 * the monotonic clock left alone), and a low CPU priority (every thread reniced) while
 * {@code stress-ng} takes the CPUs.
 *
 * <p>Application {@code a} (0-based) is instance {@code app-<a+1>}, listening on 127.0.0.1 on a
 * free port, logging to {@code app-<a+1>.log} in the work directory (appended over restarts).
 *
 * <p>Not thread-safe: the campaign's nemesis thread drives it; {@link #baseUrl(int)} may be read by
 * any thread.
 */
final class Applications implements Closeable {

	/** Debian's libfaketime, the variant for multi-threaded programs. */
	static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1");

	/**
	 * What the instances run with.
	 * @param jar the sample application's executable jar
	 * @param java the {@code java} launcher
	 * @param jdbcUrl the shared database
	 * @param dbUser its user
	 * @param dbPassword its password
	 * @param sessionTimeout {@code zk.lock.session-timeout}
	 * @param extraArguments further application arguments for every instance
	 * @param workDir where the logs and the clock files go
	 */
	record Settings(Path jar, Path java, String jdbcUrl, String dbUser, String dbPassword, Duration sessionTimeout,
			List<String> extraArguments, Path workDir) {
	}

	private final Settings settings;

	private final IntFunction<String> connectString;

	private final @Nullable Process[] processes;

	private final int[] ports;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

	/**
	 * @param settings what the instances run with
	 * @param count how many instances
	 * @param connectString the connect string of application {@code a} (through its proxies)
	 * @throws IOException if no free ports can be found
	 */
	Applications(Settings settings, int count, IntFunction<String> connectString) throws IOException {
		this.settings = settings;
		this.connectString = connectString;
		this.processes = new Process[count];
		this.ports = new int[count];
		for (int a = 0; a < count; a++) {
			this.ports[a] = freePort();
			Files.writeString(clockFile(a), "+0\n");
		}
		// An interrupted campaign (Ctrl-C, SIGTERM) leaves no instance behind.
		Runtime.getRuntime().addShutdownHook(new Thread(this::close, "chaos-applications-shutdown"));
	}

	/** Whether libfaketime is installed (Debian's {@code libfaketime}). */
	static boolean clockJumpsAvailable() {
		return Files.isReadable(LIBFAKETIME);
	}

	int size() {
		return this.ports.length;
	}

	String name(int a) {
		return "app-" + (a + 1);
	}

	String baseUrl(int a) {
		return "http://127.0.0.1:" + this.ports[a];
	}

	/**
	 * Start instance {@code a} (its clock at the true time) and return without waiting for it.
	 * @throws IOException if the process cannot be started
	 */
	void start(int a) throws IOException {
		Files.writeString(clockFile(a), "+0\n");
		List<String> command = new ArrayList<>(List.of(this.settings.java().toString(), "-Xms64m", "-Xmx256m",
				"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-jar",
				this.settings.jar().toString(), "--spring.profiles.active=chaos", "--server.address=127.0.0.1",
				"--server.port=" + this.ports[a], "--zk.lock.embedded.enabled=false",
				"--zk.lock.connect-string=" + this.connectString.apply(a),
				"--zk.lock.session-timeout=" + this.settings.sessionTimeout().toMillis() + "ms",
				"--spring.datasource.url=" + this.settings.jdbcUrl(),
				"--spring.datasource.username=" + this.settings.dbUser(),
				"--spring.datasource.password=" + this.settings.dbPassword(), "--sample.instance-id=" + name(a)));
		command.addAll(this.settings.extraArguments());
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(this.settings.workDir().resolve(name(a) + ".log").toFile()));
		if (clockJumpsAvailable()) {
			builder.environment().put("LD_PRELOAD", LIBFAKETIME.toString());
			builder.environment().put("FAKETIME_TIMESTAMP_FILE", clockFile(a).toString());
			builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
			// The file is read again at most once a second.
			builder.environment().put("FAKETIME_CACHE_DURATION", "1");
			// Without these two the JVM starts ten times slower or not at all: libfaketime's fix of
			// pthread_cond_timedwait on the monotonic clock (which it leaves alone here anyway), and
			// its faking of file times on every stat of a class path jar.
			builder.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
			builder.environment().put("NO_FAKE_STAT", "1");
		}
		this.processes[a] = builder.start();
	}

	/**
	 * Wait until instance {@code a} is up: its health UP (HTTP 200), which needs its database and
	 * its ZooKeeper connection.
	 * @return whether it was within {@code timeout}
	 */
	boolean awaitReady(int a, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() - deadline < 0) {
			Process process = this.processes[a];
			if (process == null || !process.isAlive()) {
				return false;
			}
			if (answers(a)) {
				return true;
			}
			Thread.sleep(200);
		}
		return false;
	}

	/** Whether instance {@code a}'s health is UP, answered within a second. */
	boolean answers(int a) {
		try {
			HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl(a) + "/actuator/health"))
				.timeout(Duration.ofSeconds(1))
				.GET()
				.build();
			return this.http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	boolean running(int a) {
		Process process = this.processes[a];
		return process != null && process.isAlive();
	}

	long pid(int a) {
		Process process = this.processes[a];
		if (process == null) {
			throw new IllegalStateException(name(a) + " was not started");
		}
		return process.pid();
	}

	/** SIGKILL instance {@code a} and wait (bounded) until it is gone. */
	void kill(int a) throws InterruptedException {
		Process process = this.processes[a];
		if (process != null) {
			process.destroyForcibly();
			process.waitFor(10, TimeUnit.SECONDS);
		}
	}

	/** SIGSTOP instance {@code a}: every thread stops, sockets stay open. */
	void pause(int a) throws IOException, InterruptedException {
		signal(a, "STOP");
	}

	/** SIGCONT instance {@code a}. */
	void resume(int a) throws IOException, InterruptedException {
		signal(a, "CONT");
	}

	/**
	 * Move instance {@code a}'s wall clock to {@code offset} from the true time (within a second:
	 * libfaketime reads its file again at most once a second); {@link Duration#ZERO} sets it back.
	 */
	void shiftClock(int a, Duration offset) throws IOException {
		long seconds = offset.toSeconds();
		Files.writeString(clockFile(a), ((seconds >= 0) ? "+" : "") + seconds + "\n");
	}

	/** Set the nice value of every thread of instance {@code a} (19 lowest priority, 0 normal). */
	void nice(int a, int niceness) throws IOException, InterruptedException {
		Path tasks = Path.of("/proc", Long.toString(pid(a)), "task");
		List<String> command = new ArrayList<>(List.of("renice", "-n", Integer.toString(niceness), "-p"));
		try (var each = Files.list(tasks)) {
			each.forEach((task) -> command.add(task.getFileName().toString()));
		}
		run(command);
	}

	@Override
	public void close() {
		for (int a = 0; a < this.processes.length; a++) {
			Process process = this.processes[a];
			if (process != null && process.isAlive()) {
				try {
					// A paused instance does not end on SIGTERM; SIGKILL ends any.
					process.destroyForcibly();
					process.waitFor(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}
	}

	private void signal(int a, String signal) throws IOException, InterruptedException {
		run(List.of("kill", "-" + signal, Long.toString(pid(a))));
	}

	private Path clockFile(int a) {
		return this.settings.workDir().resolve(name(a) + ".faketime");
	}

	static void run(List<String> command) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		if (!process.waitFor(10, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			throw new IOException("Timed out: " + String.join(" ", command));
		}
		if (process.exitValue() != 0) {
			throw new IOException("Exit " + process.exitValue() + ": " + String.join(" ", command));
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
