package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} process for the Redisson contender of the hot-key scenario: started by the
 * runner on a free port of 127.0.0.1, without persistence ({@code --save ''}, {@code --appendonly
 * no}), stopped by {@link #close()} (and, through the runner's process group, by
 * {@code bench.sh}'s clean-up). Its log goes to {@code redis/redis.log} in the work directory.
 */
final class RedisServer implements AutoCloseable {

	private final Process process;

	private final int port;

	private final String version;

	private RedisServer(Process process, int port, String version) {
		this.process = process;
		this.port = port;
		this.version = version;
	}

	/**
	 * Find {@code redis-server}: the given executable, or the first on the {@code PATH}.
	 * @param configured the executable given on the command line, or {@code null}
	 * @return the executable, if there is one
	 */
	static Optional<Path> find(@Nullable String configured) {
		if (configured != null && !configured.isEmpty()) {
			Path path = Path.of(configured);
			return Files.isExecutable(path) ? Optional.of(path) : Optional.empty();
		}
		String searchPath = System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/bin"
				+ File.pathSeparator + "/usr/local/bin";
		for (String directory : searchPath.split(File.pathSeparator)) {
			if (!directory.isEmpty()) {
				Path candidate = Path.of(directory, "redis-server");
				if (Files.isExecutable(candidate)) {
					return Optional.of(candidate);
				}
			}
		}
		return Optional.empty();
	}

	/**
	 * Start a server and wait until it answers {@code PING}.
	 * @param executable {@code redis-server}
	 * @param workDir the work directory
	 * @return the running server
	 * @throws IOException if it cannot be started or does not answer within 15 seconds
	 * @throws InterruptedException if interrupted while waiting for it
	 */
	static RedisServer start(Path executable, Path workDir) throws IOException, InterruptedException {
		String version = version(executable);
		Path dir = Files.createDirectories(workDir.resolve("redis"));
		int port;
		try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = probe.getLocalPort();
		}
		Process process = new ProcessBuilder(executable.toString(), "--port", Integer.toString(port), "--bind",
				"127.0.0.1", "--protected-mode", "yes", "--save", "", "--appendonly", "no", "--daemonize", "no",
				"--dir", dir.toString())
			.redirectErrorStream(true)
			.redirectOutput(dir.resolve("redis.log").toFile())
			.start();
		RedisServer server = new RedisServer(process, port, version);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (!server.answersPing()) {
			if (!process.isAlive() || System.nanoTime() - deadline > 0) {
				server.close();
				throw new IOException("redis-server did not start on 127.0.0.1:" + port + ", see "
						+ dir.resolve("redis.log"));
			}
			Thread.sleep(50);
		}
		return server;
	}

	/** The address Redisson connects to. */
	String address() {
		return "127.0.0.1:" + this.port;
	}

	/** The server's version, e.g. {@code 7.0.15}. */
	String version() {
		return this.version;
	}

	private boolean answersPing() {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 500);
			socket.setSoTimeout(1000);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] reply = in.readNBytes(5);
			return new String(reply, StandardCharsets.US_ASCII).equals("+PONG");
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static String version(Path executable) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(executable.toString(), "--version").redirectErrorStream(true).start();
		String line;
		try (BufferedReader output = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			line = output.readLine();
		}
		if (!process.waitFor(10, TimeUnit.SECONDS)) {
			process.destroyForcibly();
		}
		// "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=..."
		if (line != null) {
			for (String field : List.of(line.split(" "))) {
				if (field.startsWith("v=")) {
					return field.substring(2);
				}
			}
		}
		return "unknown";
	}

	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
			this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
	}

}
