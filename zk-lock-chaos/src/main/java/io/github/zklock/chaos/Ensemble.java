package io.github.zklock.chaos;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.stream.Collectors;

import io.github.zklock.chaos.FourLetterWords.Role;
import io.github.zklock.chaos.FourLetterWords.Status;
import io.github.zklock.test.TcpProxy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A ZooKeeper ensemble of real servers from Debian's {@code zookeeper} package (3.8), each a child
 * process of this JVM on the loopback interface, every link of which, between two servers or
 * between an application and a server, passes through a {@link TcpProxy}: a partition is a set of
 * frozen proxies, no root or firewall needed.
 *
 * <h2>Servers</h2>
 * <p>Servers are numbered from 1 to {@link #size()}: the number is the server's {@code myid}, as
 * its logs show it. Each runs ZooKeeper's {@code QuorumPeerMain} (through {@link ServerLauncher})
 * in a JVM of its own ({@code -Xmx128m}, serial collector), with its files in
 * {@code workDir/server-<id>/}: {@code zoo.cfg}, {@code data/}, {@code server.log} (ZooKeeper's
 * log) and {@code stdout.log}. The transaction log is forced to disk before each acknowledgement
 * ({@code forceSync=yes}). {@link Options} sets the tick and the limits counted in ticks; a
 * client's session timeout is held between ZooKeeper's default bounds, 2 and 20 ticks (1 s and
 * 10 s at the default tick of 500 ms). The four-letter words {@code srvr}, {@code mntr},
 * {@code ruok}, {@code stat} and {@code cons} are allowed; the AdminServer is off. The work
 * directory stays after {@link #close()}.
 *
 * <h2>Links</h2>
 * <p>Applications are numbered from 0. Application {@code a} reaches server {@code s} through a
 * proxy of its own to {@code s}'s client port; {@link #connectString(int)} names them.
 *
 * <p>Server {@code i} reaches server {@code j}'s quorum and election ports through two proxies of
 * the ordered pair {@code (i, j)}: each server has a configuration of its own, whose entry for
 * itself has its real ports and whose other entries name the proxies of its links. Servers keep
 * that view:
 * <ul>
 * <li>With {@code reconfigEnabled=false} a server takes its quorum configuration from its file
 * once: the configuration that a new leader sends with NEWLEADER and that election notifications
 * carry is ignored (ZooKeeper's {@code processReconfig} and {@code setLastSeenQuorumVerifier}
 * return at once), and a follower finds its leader's address in its own view.</li>
 * <li>ZooKeeper keeps one election connection per pair of servers, one that the server with the
 * higher id opened: when the lower id opens one, the higher closes it and opens its own. It opens
 * it to the address that the first message of the closed connection named, the lower id's own
 * election address, not to the one its configuration names: with 127.0.0.1 in a server's own
 * entry, those connections would bypass the proxies. A server's own entry therefore has the wildcard address 0.0.0.0, which
 * ZooKeeper leaves out of that message, so that the peer takes the address from its own
 * configuration. Quorum and election ports hence listen on every interface; client ports on
 * 127.0.0.1 only.</li>
 * </ul>
 *
 * <h2>Faults</h2>
 * <p>{@link #kill(int)} and {@link #start(int)}; {@link #partition(Collection)} freezes every proxy
 * between two servers on different sides, in both directions; {@link #isolateApplication(int)}
 * freezes an application's proxies. A frozen proxy forwards nothing and passes no close on, as a
 * partition would; unlike a partition, it accepts new connections and opens its own to the
 * server, so that a connection opened across a partition looks open at both ends instead of
 * timing out. ZooKeeper's election listener reads the first message of a connection before it
 * accepts the next, and waits up to {@code syncLimit} ticks for it: a server that opens a new
 * election connection across a partition (after a restart, say) holds up its peer's listener that
 * long. Existing connections stay open through a partition, as TCP's would, and carry what was
 * held once it heals. A proxy to a quorum port tries a refusing server again for up to 4 seconds
 * (or {@code initLimit} ticks), as ZooKeeper's follower does when it connects directly and is
 * refused by a leader that has not bound its port yet.
 *
 * <p>Thread-safe: faults, restarts and {@link #close()} are serialized; the probes
 * ({@link #leader()}, {@link #serving(int)}, {@link #mntr(int)} ...) and
 * {@link #awaitQuorum(Duration)} may run concurrently with them.
 */
public final class Ensemble implements Closeable {

	private static final Log logger = LogFactory.getLog(Ensemble.class);

	private static final long POLL_MILLIS = 100;

	private final Path workDir;

	private final Options options;

	private final List<ServerProcess> servers;

	private final QuorumLinks links;

	/** {@code [application][server - 1]}. */
	private final TcpProxy[][] applicationLinks;

	private final ZooKeeperPackage.Command command;

	private final Thread shutdownHook = new Thread(this::destroyServersNow, "ensemble-shutdown");

	/** Guarded by this. */
	private boolean closed;

	private Ensemble(int size, int applications, Path workDir, Options options) throws IOException {
		this.workDir = workDir;
		this.options = options;
		Files.createDirectories(workDir);
		this.command = ZooKeeperPackage.prepare(workDir);
		this.servers = ServerProcess.allocate(size, workDir);
		int[] quorumPorts = new int[size + 1];
		int[] electionPorts = new int[size + 1];
		for (ServerProcess server : this.servers) {
			quorumPorts[server.id()] = server.quorumPort();
			electionPorts[server.id()] = server.electionPort();
		}
		// ZooKeeper's own retries of a refused connection to the leader: 5, a second apart, within initLimit.
		Duration initLimit = options.tickTime().multipliedBy(options.initLimit());
		Duration leaderPatience = (initLimit.compareTo(Duration.ofSeconds(4)) < 0) ? initLimit : Duration.ofSeconds(4);
		this.links = QuorumLinks.open(quorumPorts, electionPorts, leaderPatience);
		this.applicationLinks = new TcpProxy[applications][size];
		try {
			for (int a = 0; a < applications; a++) {
				for (ServerProcess server : this.servers) {
					this.applicationLinks[a][server.id() - 1] = TcpProxy.start(server.clientPort());
				}
			}
			for (ServerProcess server : this.servers) {
				server.configure(options, this.links, size);
			}
		}
		catch (IOException | RuntimeException ex) {
			closeProxies();
			throw ex;
		}
	}

	/**
	 * Whether Debian's ZooKeeper server is installed ({@code /usr/share/java/zookeeper.jar}).
	 * @return whether {@link #start(int, int, Path, Options)} can find the server
	 */
	public static boolean packageAvailable() {
		return ZooKeeperPackage.available();
	}

	/**
	 * Start an ensemble and wait until a leader and all followers serve.
	 * @param servers how many servers, 3 or more (3 or 5 make sense: an odd number)
	 * @param applications how many applications get proxies of their own to every server, 0 or more
	 * @param workDir the directory for configurations, data and logs; created if missing, kept after
	 * {@link #close()}; the data of an earlier ensemble of the same size in it is taken up again
	 * (its configurations are rewritten with new ports)
	 * @param options the timing
	 * @return the running ensemble; the caller closes it
	 * @throws IllegalArgumentException if {@code servers} is below 3 or {@code applications} negative
	 * @throws IllegalStateException if Debian's {@code zookeeper} package is not installed (the
	 * message says what to install), if a server exits while the ensemble starts, or if no leader
	 * with all followers serves within {@link Options#startTimeout()} (the message has the end of
	 * the servers' logs); whatever started is closed
	 * @throws IOException if a file cannot be written, a port bound or a process started
	 * @throws InterruptedException if interrupted while waiting; whatever started is closed
	 */
	public static Ensemble start(int servers, int applications, Path workDir, Options options)
			throws IOException, InterruptedException {
		if (servers < 3) {
			throw new IllegalArgumentException("An ensemble needs 3 servers or more, not " + servers);
		}
		if (applications < 0) {
			throw new IllegalArgumentException("Applications must not be negative: " + applications);
		}
		long started = System.nanoTime();
		Ensemble ensemble = new Ensemble(servers, applications, workDir.toAbsolutePath(), options);
		try {
			Runtime.getRuntime().addShutdownHook(ensemble.shutdownHook);
			for (ServerProcess server : ensemble.servers) {
				server.start(ensemble.command);
			}
			ensemble.awaitFormed(started);
		}
		catch (IOException | InterruptedException | RuntimeException ex) {
			ensemble.close();
			throw ex;
		}
		logger.info("ZooKeeper ensemble of " + servers + " servers in " + ensemble.workDir + " formed in "
				+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms, leader " + ensemble.leader());
		return ensemble;
	}

	/** The number of servers, numbered from 1 to this. */
	public int size() {
		return this.servers.size();
	}

	/**
	 * The connect string an application uses: its proxies to every server.
	 * @param application the application, from 0
	 * @return {@code 127.0.0.1:port,...} in the order of the servers
	 * @throws IllegalArgumentException if there is no such application
	 */
	public String connectString(int application) {
		List<Integer> all = this.servers.stream().map(ServerProcess::id).toList();
		return connectString(application, all);
	}

	/**
	 * The connect string that reaches some servers only, through an application's proxies.
	 * @param application the application, from 0
	 * @param servers the servers to name, in the order to name them
	 * @return {@code 127.0.0.1:port,...}
	 * @throws IllegalArgumentException if there is no such application or server
	 */
	public String connectString(int application, Collection<Integer> servers) {
		TcpProxy[] proxies = applicationProxies(application);
		return servers.stream().map((id) -> proxies[server(id).id() - 1].connectString())
			.collect(Collectors.joining(","));
	}

	/**
	 * The server that says it leads ({@code srvr} on its own client port). A leader that a
	 * partition cut off from its quorum says so until it notices, about {@code syncLimit} ticks;
	 * of two that say so, the one with the newer epoch is returned.
	 * @return the leader's id, or -1 if no server says it leads
	 */
	public int leader() {
		return leaderOf(statuses());
	}

	/**
	 * The servers that say they follow a leader.
	 * @return their ids, in ascending order
	 */
	public List<Integer> followers() {
		return statuses().entrySet().stream().filter((entry) -> entry.getValue().role() == Role.FOLLOWER)
			.map(Map.Entry::getKey).toList();
	}

	/**
	 * Whether a server serves clients, as leader or follower ({@code srvr} on its own client port,
	 * answered within about 3 seconds).
	 * @param server the server's id
	 * @return whether it serves; false if it is down, paused, looking for a leader or too slow
	 * @throws IllegalArgumentException if there is no such server
	 */
	public boolean serving(int server) {
		ServerProcess process = server(server);
		return process.running() && FourLetterWords.srvr(process.clientPort()).serving();
	}

	/**
	 * A server's monitoring values ({@code mntr} on its own client port).
	 * @param server the server's id
	 * @return the values by name, as ZooKeeper orders them; empty if the server does not serve
	 * or does not answer
	 * @throws IllegalArgumentException if there is no such server
	 */
	public Map<String, String> mntr(int server) {
		ServerProcess process = server(server);
		return process.running() ? FourLetterWords.mntr(process.clientPort()) : Map.of();
	}

	/**
	 * Kill a server's JVM with {@code SIGKILL} ({@link Process#destroyForcibly()}) and wait until
	 * it is gone; its data stays for {@link #start(int)}.
	 * @param server the server's id
	 * @throws IllegalArgumentException if there is no such server
	 * @throws IllegalStateException if it is not running, if it still runs 10 s later, or if the
	 * ensemble is closed
	 * @throws InterruptedException if interrupted while waiting for the process to end
	 */
	public synchronized void kill(int server) throws InterruptedException {
		checkOpen();
		server(server).kill();
	}

	/**
	 * Start a server again with the same configuration and data. Does not wait: see
	 * {@link #serving(int)} and {@link #awaitQuorum(Duration)}.
	 * @param server the server's id
	 * @throws IllegalArgumentException if there is no such server
	 * @throws IllegalStateException if it is running or the ensemble is closed
	 * @throws IOException if the process cannot be started
	 */
	public synchronized void start(int server) throws IOException {
		checkOpen();
		server(server).start(this.command);
	}

	/**
	 * Whether a server's JVM is alive (it may not serve yet).
	 * @param server the server's id
	 * @return whether its process runs
	 * @throws IllegalArgumentException if there is no such server
	 */
	public boolean running(int server) {
		return server(server).running();
	}

	/**
	 * The process id of a server's JVM, for signals (pausing, for example).
	 * @param server the server's id
	 * @return the pid of its running process
	 * @throws IllegalArgumentException if there is no such server
	 * @throws IllegalStateException if it is not running
	 */
	public long pid(int server) {
		return server(server).pid();
	}

	/**
	 * Cut the links between servers on different sides: every proxy between them freezes, in both
	 * directions. Links within a side, and links of servers named on no side, stay as they are (a
	 * server on no side bridges the sides). Adds to the cuts in place.
	 * @param sides the sides, each a collection of server ids
	 * @throws IllegalArgumentException if there is no such server, or a server is on two sides
	 * @throws IllegalStateException if the ensemble is closed
	 */
	public synchronized void partition(Collection<? extends Collection<Integer>> sides) {
		checkOpen();
		Map<Integer, Integer> sideOf = new HashMap<>();
		int side = 0;
		for (Collection<Integer> members : sides) {
			for (Integer id : members) {
				server(id);
				if (sideOf.put(id, side) != null) {
					throw new IllegalArgumentException("Server " + id + " is on two sides of " + sides);
				}
			}
			side++;
		}
		sideOf.forEach((a, sideOfA) -> sideOf.forEach((b, sideOfB) -> {
			if (a < b && !sideOfA.equals(sideOfB)) {
				this.links.cut(a, b);
			}
		}));
		logger.info("Partitioned ZooKeeper servers " + sides);
	}

	/**
	 * Heal every cut between servers; the bytes the proxies held are delivered first.
	 * @throws IllegalStateException if the ensemble is closed
	 */
	public synchronized void healPartitions() {
		checkOpen();
		this.links.healAll();
		logger.info("Healed the links between the ZooKeeper servers");
	}

	/**
	 * Cut an application off from every server: its proxies freeze.
	 * @param application the application, from 0
	 * @throws IllegalArgumentException if there is no such application
	 * @throws IllegalStateException if the ensemble is closed
	 */
	public synchronized void isolateApplication(int application) {
		checkOpen();
		for (TcpProxy proxy : applicationProxies(application)) {
			proxy.freeze();
		}
		logger.info("Isolated application " + application + " from ZooKeeper");
	}

	/**
	 * Heal an application's links to every server; the bytes its proxies held are delivered
	 * first.
	 * @param application the application, from 0
	 * @throws IllegalArgumentException if there is no such application
	 * @throws IllegalStateException if the ensemble is closed
	 */
	public synchronized void healApplication(int application) {
		checkOpen();
		for (TcpProxy proxy : applicationProxies(application)) {
			proxy.heal();
		}
		logger.info("Healed application " + application + "'s links to ZooKeeper");
	}

	/**
	 * Heal every link: between servers and between applications and servers.
	 * @throws IllegalStateException if the ensemble is closed
	 */
	public synchronized void healAll() {
		checkOpen();
		this.links.healAll();
		for (TcpProxy[] proxies : this.applicationLinks) {
			for (TcpProxy proxy : proxies) {
				proxy.heal();
			}
		}
		logger.info("Healed every link to and between the ZooKeeper servers");
	}

	/**
	 * Wait until the ensemble serves: a server says it leads and is linked (no cut) to a majority
	 * of all servers, itself included, and every other running server linked to it says it
	 * follows. Servers cut off from the leader, or down, are not waited for.
	 * @param timeout how long to wait at most
	 * @return whether the ensemble served within the timeout
	 * @throws InterruptedException if interrupted while waiting
	 */
	public boolean awaitQuorum(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!quorumServes(statuses())) {
			if (System.nanoTime() - deadline >= 0) {
				return false;
			}
			Thread.sleep(POLL_MILLIS);
		}
		return true;
	}

	/**
	 * Kill every server (and wait until they are gone) and close every proxy. The work directory
	 * stays. Calling it again has no effect.
	 */
	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		destroyServersNow();
		boolean interrupted = false;
		for (ServerProcess server : this.servers) {
			try {
				if (!server.awaitGone()) {
					logger.warn("ZooKeeper server " + server.id() + " still runs 10 s after SIGKILL");
				}
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		closeProxies();
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// The JVM is shutting down: the hook runs anyway, and finds the servers gone.
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
		logger.info("Closed the ZooKeeper ensemble in " + this.workDir);
	}

	/**
	 * The server with the given id, for tests of this package.
	 * @throws IllegalArgumentException if there is no such server
	 */
	ServerProcess server(int id) {
		if (id < 1 || id > this.servers.size()) {
			throw new IllegalArgumentException("No server " + id + ": servers are 1 to " + this.servers.size());
		}
		return this.servers.get(id - 1);
	}

	private void awaitFormed(long startedNanos) throws InterruptedException {
		long deadline = startedNanos + this.options.startTimeout().toNanos();
		Map<Integer, Status> statuses = statuses();
		while (!quorumServes(statuses)) {
			for (ServerProcess server : this.servers) {
				if (!server.running()) {
					throw new IllegalStateException("ZooKeeper server " + server.id() + " exited (code "
							+ server.exitCode() + ") while the ensemble started\n" + server.logTail(30));
				}
			}
			if (System.nanoTime() - deadline >= 0) {
				StringJoiner tails = new StringJoiner("\n");
				this.servers.forEach((server) -> tails.add(server.logTail(15)));
				throw new IllegalStateException("No leader with all followers serving within "
						+ this.options.startTimeout() + ": " + statuses + "\n" + tails);
			}
			Thread.sleep(POLL_MILLIS);
			statuses = statuses();
		}
	}

	private boolean quorumServes(Map<Integer, Status> statuses) {
		int leader = leaderOf(statuses);
		if (leader < 0) {
			return false;
		}
		long linked = statuses.keySet().stream().filter((id) -> !this.links.isCut(id, leader)).count();
		if (2 * linked <= size()) {
			return false;
		}
		return statuses.entrySet().stream()
			.filter((entry) -> entry.getKey() != leader && !this.links.isCut(entry.getKey(), leader))
			.filter((entry) -> server(entry.getKey()).running())
			.allMatch((entry) -> entry.getValue().role() == Role.FOLLOWER);
	}

	private Map<Integer, Status> statuses() {
		Map<Integer, Status> statuses = new LinkedHashMap<>();
		for (ServerProcess server : this.servers) {
			Status status = server.running() ? FourLetterWords.srvr(server.clientPort())
					: new Status(Role.NOT_SERVING, -1);
			statuses.put(server.id(), status);
		}
		return statuses;
	}

	private static int leaderOf(Map<Integer, Status> statuses) {
		return statuses.entrySet().stream().filter((entry) -> entry.getValue().role() == Role.LEADER)
			.max(Comparator.comparingLong((Map.Entry<Integer, Status> entry) -> entry.getValue().zxid()))
			.map(Map.Entry::getKey).orElse(-1);
	}

	private TcpProxy[] applicationProxies(int application) {
		if (application < 0 || application >= this.applicationLinks.length) {
			throw new IllegalArgumentException("No application " + application + ": applications are 0 to "
					+ (this.applicationLinks.length - 1));
		}
		return this.applicationLinks[application];
	}

	private void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("The ensemble is closed");
		}
	}

	/** SIGKILL to every server, without locking or waiting: {@link #close()} and the shutdown hook. */
	private void destroyServersNow() {
		this.servers.forEach(ServerProcess::destroyNow);
	}

	private void closeProxies() {
		this.links.close();
		for (TcpProxy[] proxies : this.applicationLinks) {
			for (TcpProxy proxy : proxies) {
				if (proxy != null) {
					proxy.close();
				}
			}
		}
	}

	/**
	 * How an ensemble runs. Failover takes a few ticks after a fault is noticed: a dead leader's
	 * followers notice at once (their connection closes), a partitioned one's after
	 * {@code syncLimit} ticks.
	 *
	 * @param tickTime ZooKeeper's tick, in whole milliseconds: the unit of the limits and of the
	 * session timeout bounds (2 to 20 ticks)
	 * @param initLimit how many ticks a follower may take to connect to a new leader and sync with
	 * it
	 * @param syncLimit how many ticks a follower and its leader may go without hearing each other
	 * before they give up on each other
	 * @param startTimeout how long {@link Ensemble#start(int, int, Path, Options)} waits for a
	 * leader and all followers to serve, counted from the start of the first server
	 */
	public record Options(Duration tickTime, int initLimit, int syncLimit, Duration startTimeout) {

		/**
		 * Check the values.
		 * @throws IllegalArgumentException if the tick is not a positive whole number of
		 * milliseconds, a limit is below 1, or the timeout not positive
		 */
		public Options {
			if (tickTime.isNegative() || tickTime.isZero() || tickTime.toNanos() % 1_000_000 != 0) {
				throw new IllegalArgumentException("tickTime must be a positive whole number of milliseconds: " + tickTime);
			}
			if (initLimit < 1 || syncLimit < 1) {
				throw new IllegalArgumentException("initLimit and syncLimit must be 1 tick or more: " + initLimit
						+ ", " + syncLimit);
			}
			if (startTimeout.isNegative() || startTimeout.isZero()) {
				throw new IllegalArgumentException("startTimeout must be positive: " + startTimeout);
			}
		}

		/**
		 * Ticks of 500 ms, {@code initLimit} 10 (5 s), {@code syncLimit} 5 (2.5 s), 60 s to start.
		 * @return the defaults
		 */
		public static Options defaults() {
			return new Options(Duration.ofMillis(500), 10, 5, Duration.ofSeconds(60));
		}

		/**
		 * These options with another tick.
		 * @param tickTime the tick, in whole milliseconds
		 * @return new options
		 */
		public Options withTickTime(Duration tickTime) {
			return new Options(tickTime, this.initLimit, this.syncLimit, this.startTimeout);
		}

		/**
		 * These options with other limits.
		 * @param initLimit ticks to connect to and sync with a new leader
		 * @param syncLimit ticks without hearing each other
		 * @return new options
		 */
		public Options withLimits(int initLimit, int syncLimit) {
			return new Options(this.tickTime, initLimit, syncLimit, this.startTimeout);
		}

		/**
		 * These options with another start timeout.
		 * @param startTimeout how long to wait for the ensemble to form
		 * @return new options
		 */
		public Options withStartTimeout(Duration startTimeout) {
			return new Options(this.tickTime, this.initLimit, this.syncLimit, startTimeout);
		}

	}

}
