package io.github.zklock.chaos;

import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One server of an {@link Ensemble}: its directory, its real ports on the loopback interface, its
 * configuration, and the process that runs it, started again with the same configuration and data
 * after a kill.
 *
 * <p>The directory, {@code server-<id>/}, holds {@code zoo.cfg}, {@code data/} (with
 * {@code myid}, snapshots and the transaction log), {@code server.log} (ZooKeeper's log through
 * log4j) and {@code stdout.log} (the JVM's own output). Logs are appended across restarts.
 *
 * <p>Thread-safe: starting and killing are serialized on this object; {@link #running()},
 * {@link #pid()} and {@link #destroyNow()} read the current process without the lock.
 */
final class ServerProcess {

	private static final Log logger = LogFactory.getLog(ServerProcess.class);

	private static final long KILL_TIMEOUT_SECONDS = 10;

	private final int id;

	private final Path directory;

	private final int clientPort;

	private final int quorumPort;

	private final int electionPort;

	private volatile @Nullable Process process;

	private ServerProcess(int id, Path directory, int clientPort, int quorumPort, int electionPort) {
		this.id = id;
		this.directory = directory;
		this.clientPort = clientPort;
		this.quorumPort = quorumPort;
		this.electionPort = electionPort;
	}

	/**
	 * Servers with free ports, numbered from 1. The ports lie below the range the kernel picks
	 * from for port 0 and for outgoing connections (Linux's {@code net.ipv4.ip_local_port_range}),
	 * so that neither a proxy nor a connection of some client takes the port of a server that is
	 * down between a kill and its restart. Each is checked free on the wildcard address (where
	 * quorum and election ports listen), all being held until all are found; another process that
	 * binds one explicitly before its server does makes that server fail to start.
	 * @param size how many servers
	 * @param workDir the ensemble's directory; each server's is {@code server-<id>} in it
	 * @return the servers, not configured, not started
	 * @throws IOException if not enough free ports are found
	 */
	static List<ServerProcess> allocate(int size, Path workDir) throws IOException {
		int low = 10_000;
		int high = Math.max(low + 1000, firstEphemeralPort());
		int span = high - low;
		int start = ThreadLocalRandom.current().nextInt(span);
		List<ServerSocket> held = new ArrayList<>();
		try {
			for (int i = 0; i < span && held.size() < 3 * size; i++) {
				int port = low + (start + i) % span;
				ServerSocket socket = new ServerSocket();
				try {
					socket.bind(new InetSocketAddress(port));
					held.add(socket);
				}
				catch (IOException ex) {
					socket.close(); // taken
				}
			}
		}
		finally {
			for (ServerSocket socket : held) {
				socket.close();
			}
		}
		if (held.size() < 3 * size) {
			throw new IOException("Found " + held.size() + " free ports between " + low + " and " + high + ", not "
					+ 3 * size);
		}
		List<ServerProcess> servers = new ArrayList<>();
		for (int id = 1; id <= size; id++) {
			int first = 3 * (id - 1);
			servers.add(new ServerProcess(id, workDir.resolve("server-" + id), held.get(first).getLocalPort(),
					held.get(first + 1).getLocalPort(), held.get(first + 2).getLocalPort()));
		}
		return servers;
	}

	/** The low end of the kernel's range for port 0 and outgoing connections. */
	private static int firstEphemeralPort() {
		try {
			String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
			return Integer.parseInt(range.split("\\s+")[0]);
		}
		catch (IOException | NumberFormatException ex) {
			return 32768; // Linux's default
		}
	}

	int id() {
		return this.id;
	}

	/** The port this server serves clients on, on 127.0.0.1 (the one four-letter words go to). */
	int clientPort() {
		return this.clientPort;
	}

	int quorumPort() {
		return this.quorumPort;
	}

	int electionPort() {
		return this.electionPort;
	}

	Path directory() {
		return this.directory;
	}

	/**
	 * Write {@code zoo.cfg} and {@code data/myid}.
	 * @param options the ensemble's timing
	 * @param links the proxies that carry this server's links to the others
	 * @param size the number of servers, numbered from 1
	 * @throws IOException if a file cannot be written
	 */
	void configure(Ensemble.Options options, QuorumLinks links, int size) throws IOException {
		Path data = this.directory.resolve("data");
		Files.createDirectories(data);
		Files.writeString(data.resolve("myid"), this.id + "\n", StandardCharsets.US_ASCII);
		List<String> lines = new ArrayList<>();
		lines.add("# Server " + this.id + " of " + size + ", written by zk-lock-chaos's Ensemble.");
		lines.add("tickTime=" + options.tickTime().toMillis());
		lines.add("initLimit=" + options.initLimit());
		lines.add("syncLimit=" + options.syncLimit());
		lines.add("dataDir=" + data.toAbsolutePath());
		lines.add("clientPortAddress=127.0.0.1");
		lines.add("clientPort=" + this.clientPort);
		lines.add("forceSync=yes");
		// Each server keeps the view of this file: no reconfiguration, and so no adopting the
		// addresses that the leader's NEWLEADER or an election notification carries.
		lines.add("reconfigEnabled=false");
		// Every client comes from 127.0.0.1 (a proxy): the limit per address would be one for all.
		lines.add("maxClientCnxns=0");
		lines.add("4lw.commands.whitelist=srvr,mntr,ruok,stat,cons");
		lines.add("admin.enableServer=false");
		for (int other = 1; other <= size; other++) {
			if (other == this.id) {
				// The wildcard address, not 127.0.0.1: a server names its own election address in
				// the first message of each election connection it opens, and a peer with a higher id
				// answers by connecting back to that address, bypassing its own configuration (and
				// so the proxy). ZooKeeper leaves a wildcard address out of that message, and the
				// peer then takes the address from its own configuration.
				lines.add("server." + other + "=0.0.0.0:" + this.quorumPort + ":" + this.electionPort);
			}
			else {
				lines.add("server." + other + "=127.0.0.1:" + links.quorumPort(this.id, other) + ":"
						+ links.electionPort(this.id, other));
			}
		}
		Files.write(configFile(), lines, StandardCharsets.UTF_8);
	}

	/**
	 * Start the server's JVM; does not wait for it to serve.
	 * @param jvm the java launcher, the options every server's JVM gets, and the class path
	 * @throws IOException if the process cannot be started
	 * @throws IllegalStateException if the server is running
	 */
	synchronized void start(ZooKeeperPackage.Command jvm) throws IOException {
		if (running()) {
			throw new IllegalStateException("Server " + this.id + " is running (pid " + pid() + ")");
		}
		List<String> command = new ArrayList<>(jvm.javaAndOptions());
		// The log4j configuration writes to ${zookeeper.log.dir}/server.log.
		command.add("-Dzookeeper.log.dir=" + this.directory.toAbsolutePath());
		command.add("-cp");
		command.add(jvm.classPath());
		command.add(ServerLauncher.class.getName());
		command.add(configFile().toAbsolutePath().toString());
		// Standard input stays a pipe from this JVM: ServerLauncher halts the server when it closes.
		Process started = new ProcessBuilder(command).directory(this.directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(Redirect.appendTo(this.directory.resolve("stdout.log").toFile()))
			.start();
		this.process = started;
		logger.info("Started ZooKeeper server " + this.id + " (pid " + started.pid() + ", client port "
				+ this.clientPort + ")");
	}

	/**
	 * Kill the server's JVM with {@code SIGKILL} and wait until it is gone.
	 * @throws IllegalStateException if the server is not running, or still runs after 10 seconds
	 * @throws InterruptedException if interrupted while waiting for the process to end
	 */
	synchronized void kill() throws InterruptedException {
		Process running = this.process;
		if (running == null || !running.isAlive()) {
			throw new IllegalStateException("Server " + this.id + " is not running");
		}
		running.destroyForcibly();
		if (!running.waitFor(KILL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
			throw new IllegalStateException("Server " + this.id + " (pid " + running.pid()
					+ ") still runs " + KILL_TIMEOUT_SECONDS + " s after SIGKILL");
		}
		closeStandardInput(running);
		logger.info("Killed ZooKeeper server " + this.id + " (pid " + running.pid() + ")");
	}

	/** Send {@code SIGKILL} without waiting or locking: for a shutdown hook. */
	void destroyNow() {
		Process running = this.process;
		if (running != null) {
			running.destroyForcibly();
		}
	}

	/**
	 * Wait for the process to end after {@link #destroyNow()}.
	 * @return whether it is gone (or there never was one)
	 * @throws InterruptedException if interrupted while waiting
	 */
	boolean awaitGone() throws InterruptedException {
		Process running = this.process;
		if (running == null) {
			return true;
		}
		boolean gone = running.waitFor(KILL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
		if (gone) {
			closeStandardInput(running);
		}
		return gone;
	}

	/** Whether the server's JVM is alive (it may still be starting, or not serving). */
	boolean running() {
		Process running = this.process;
		return running != null && running.isAlive();
	}

	/**
	 * The process id of the server's JVM.
	 * @return the pid of the running process
	 * @throws IllegalStateException if the server is not running
	 */
	long pid() {
		Process running = this.process;
		if (running == null || !running.isAlive()) {
			throw new IllegalStateException("Server " + this.id + " is not running");
		}
		return running.pid();
	}

	/**
	 * How the last process ended, for error messages.
	 * @return its exit code, or {@code null} if it runs or never ran
	 */
	@Nullable Integer exitCode() {
		Process last = this.process;
		return (last == null || last.isAlive()) ? null : last.exitValue();
	}

	/**
	 * The end of the server's logs, for error messages.
	 * @param lines how many lines of each log
	 * @return the last lines of {@code stdout.log} and {@code server.log}
	 */
	String logTail(int lines) {
		StringBuilder tail = new StringBuilder();
		for (String name : List.of("stdout.log", "server.log")) {
			Path log = this.directory.resolve(name);
			tail.append("--- ").append(log).append('\n');
			try {
				List<String> all = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
				all.subList(Math.max(0, all.size() - lines), all.size()).forEach((line) -> tail.append(line).append('\n'));
			}
			catch (IOException ex) {
				tail.append("(unreadable: ").append(ex.getMessage()).append(")\n");
			}
		}
		return tail.toString();
	}

	private Path configFile() {
		return this.directory.resolve("zoo.cfg");
	}

	private static void closeStandardInput(Process ended) {
		try {
			ended.getOutputStream().close();
		}
		catch (IOException ex) {
			// the process is gone; its pipe with it
		}
	}

}
