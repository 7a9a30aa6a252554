package io.github.zklock.test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit Jupiter extension that runs a real, in-process ZooKeeper server (Curator's
 * {@link TestingServer}, data and configuration in a temporary directory deleted on stop) for the
 * tests of a class, and hands out Curator clients connected to it. Registered on a {@code static} field, one server
 * serves the whole class and stops after its last test (after {@code @AfterAll} methods, so
 * contexts closed there still reach it), also the tests of its {@code @Nested} classes; on an
 * instance field, each test gets a fresh server.
 *
 * <pre class="code">
 * &#64;RegisterExtension
 * static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();
 *
 * &#64;Test
 * void twoClientsExcludeEachOther() {
 * 	CuratorFramework first = zooKeeper.newClient(); // started, connected, closed after the test
 * 	...
 * }
 *
 * &#64;DynamicPropertySource // with &#64;SpringBootTest
 * static void zooKeeper(DynamicPropertyRegistry registry) {
 * 	registry.add("zk.lock.connect-string", zooKeeper::getConnectString);
 * }
 * </pre>
 *
 * <p>With {@code @SpringBootTest}, also annotate the class {@code @DirtiesContext}: the Spring
 * TestContext Framework would otherwise keep the context cached, its client retrying a server
 * that stopped with the class.
 *
 * <p>Use it when several application contexts (two "instances" of an application), or plain
 * Curator clients, must share one server; {@link AutoConfigureEmbeddedZooKeeper} is shorter when
 * one context is enough.
 *
 * <p><b>Another server.</b> With the system property {@value #EXTERNAL_SERVER_PROPERTY} set to a
 * connect string ({@code host:port[,host:port...]}), no server is started: the tests run against
 * that server or ensemble (for example another ZooKeeper version, or the one production uses), and
 * a test that needs the in-process server ({@link #getServer()}, to stop or restart it) is
 * aborted, reported as skipped. The server's settings of this extension ({@link #withTickTime},
 * {@link #withServerProperty}, {@link #withContainerCheckInterval}) are then not applied. Tests on
 * a shared server should use keys of their own.
 *
 * <p>The extension's methods are meant for the test thread, except {@link #getConnectString()},
 * which any thread may call; the extension is not meant to be shared by test classes running in
 * parallel.
 */
public class ZooKeeperExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

	/** How long {@link #newClient()} waits for the client's first connection. */
	public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

	/** How long the extension waits for the clients of a test (or of the class) to close. */
	private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

	/** The system property ZooKeeper reads its container reaper's interval from, in ms. */
	public static final String CONTAINER_CHECK_INTERVAL = "znode.container.checkIntervalMs";

	/**
	 * The system property that names a running server or ensemble to test against instead of an
	 * in-process one: a ZooKeeper connect string.
	 */
	public static final String EXTERNAL_SERVER_PROPERTY = "zklock.test.connect-string";

	private final int port;

	private int tickTimeMs = -1;

	private final Map<String, Object> serverProperties = new LinkedHashMap<>();

	/** The container reaper's interval in ms, or -1 for ZooKeeper's default (one minute). */
	private long containerCheckIntervalMs = -1;

	/** The system property's value before {@link #start()} set it, to restore on {@link #stop()}. */
	private @Nullable String previousContainerCheckInterval;

	private volatile @Nullable TestingServer server;

	/** The connect string of the server the tests run against when it is not in process. */
	private volatile @Nullable String external;

	private @Nullable ServerDirectory directory;

	/**
	 * How many classes of the tree run now, 0 when the extension is on an instance field (a server
	 * per test): JUnit calls {@link #beforeAll} and {@link #afterAll} again for each
	 * {@code @Nested} class, which shares the enclosing class's server.
	 */
	private int classDepth;

	private boolean inTest;

	private final List<CuratorFramework> classClients = new ArrayList<>();

	private final List<CuratorFramework> testClients = new ArrayList<>();

	/**
	 * Create an extension whose server listens on a free port, chosen when the server starts and
	 * kept across {@link TestingServer#restart()}.
	 */
	public ZooKeeperExtension() {
		this(-1);
	}

	/**
	 * Create an extension whose server listens on the given port.
	 * @param port the client port, 1 to 65535, or -1 for a free port
	 * @throws IllegalArgumentException if the port is out of range
	 */
	public ZooKeeperExtension(int port) {
		if (port != -1 && (port < 1 || port > 65535)) {
			throw new IllegalArgumentException("port must be between 1 and 65535, or -1 for a free port, was " + port);
		}
		this.port = port;
	}

	/**
	 * Set the server's tick, the unit of its session timeouts: it expires sessions in buckets of
	 * one tick and bounds their timeout to between 2 and 20 ticks (see
	 * {@link #withServerProperty(String, Object)} to widen that). Call before the server starts.
	 * @param tickTime the tick, at least 1 ms
	 * @return this extension
	 * @throws IllegalArgumentException if the tick is shorter than 1 ms
	 */
	public ZooKeeperExtension withTickTime(Duration tickTime) {
		if (tickTime.toMillis() < 1) {
			throw new IllegalArgumentException("tickTime must be at least 1 ms, was " + tickTime);
		}
		this.tickTimeMs = (int) Math.min(Integer.MAX_VALUE, tickTime.toMillis());
		return this;
	}

	/**
	 * Set a server configuration property, as in {@code zoo.cfg}, for example
	 * {@code maxSessionTimeout}. Call before the server starts.
	 * @param name the property name
	 * @param value its value, as a string or an object whose {@code toString()} is the value (such
	 * as an {@code Integer})
	 * @return this extension
	 */
	public ZooKeeperExtension withServerProperty(String name, Object value) {
		// The embedded server reads its configuration as strings only.
		this.serverProperties.put(name, String.valueOf(value));
		return this;
	}

	/**
	 * Make the server look for empty container znodes to delete (reap) at this interval instead of
	 * once a minute, for tests of what happens when a lock's parent znode is reaped. ZooKeeper reads
	 * it from the system property {@value #CONTAINER_CHECK_INTERVAL} when the server starts: the
	 * extension sets it while its server runs and restores it afterwards, so test classes using
	 * this must not run in parallel with others. Call before the server starts.
	 * @param interval the interval, at least 1 ms
	 * @return this extension
	 * @throws IllegalArgumentException if the interval is shorter than 1 ms
	 */
	public ZooKeeperExtension withContainerCheckInterval(Duration interval) {
		if (interval.toMillis() < 1) {
			throw new IllegalArgumentException("The container check interval must be at least 1 ms, was " + interval);
		}
		this.containerCheckIntervalMs = interval.toMillis();
		return this;
	}

	/**
	 * Start the server for the whole class (the extension is on a static field); a
	 * {@code @Nested} class shares the server of its enclosing class.
	 * @param context the class's context
	 * @throws Exception if the server cannot start, for example because the port is taken
	 */
	@Override
	public void beforeAll(ExtensionContext context) throws Exception {
		if (this.classDepth++ == 0) {
			start();
		}
	}

	/**
	 * Start the server for this test, unless one runs for the whole class.
	 * @param context the test's context
	 * @throws Exception if the server cannot start, for example because the port is taken
	 */
	@Override
	public void beforeEach(ExtensionContext context) throws Exception {
		this.inTest = true;
		if (this.server == null && this.external == null) {
			start();
		}
	}

	/**
	 * Close the clients made during this test, then stop this test's server unless it runs for
	 * the whole class. The clients close at once, not one after the other.
	 * @param context the test's context
	 * @throws IOException if stopping fails
	 * @throws IllegalStateException if a client did not close within 30 s (the server is stopped
	 * all the same)
	 */
	@Override
	public void afterEach(ExtensionContext context) throws IOException {
		this.inTest = false;
		try {
			closeAll(this.testClients);
		}
		finally {
			if (this.classDepth == 0) {
				stop();
			}
		}
	}

	/**
	 * Close the clients made outside tests, then stop the class's server and delete its data;
	 * at the end of a {@code @Nested} class, nothing (its enclosing class still runs).
	 * @param context the class's context
	 * @throws IOException if stopping fails
	 * @throws IllegalStateException if a client did not close within 30 s (the server is stopped
	 * all the same)
	 */
	@Override
	public void afterAll(ExtensionContext context) throws IOException {
		if (this.classDepth > 1) {
			// A @Nested class ends; the enclosing class still runs on the server.
			this.classDepth--;
			return;
		}
		this.classDepth = 0;
		try {
			closeAll(this.classClients);
		}
		finally {
			stop();
		}
	}

	/**
	 * Return the connect string of the running server.
	 * @return {@code host:port}, the value for {@code zk.lock.connect-string}
	 * @throws IllegalStateException if the server is not running (outside a test)
	 */
	public String getConnectString() {
		String external = this.external;
		return (external != null) ? external : getServer().getConnectString();
	}

	/**
	 * Return the client port of the running server.
	 * @return the port
	 * @throws IllegalStateException if the server is not running (outside a test)
	 */
	public int getPort() {
		String external = this.external;
		if (external != null) {
			String first = external.split(",")[0];
			return Integer.parseInt(first.substring(first.lastIndexOf(':') + 1).replaceAll("/.*", ""));
		}
		return getServer().getPort();
	}

	/**
	 * Return the running server, for example to {@link TestingServer#stop() stop} and
	 * {@link TestingServer#restart() restart} it and see how the application copes.
	 * @return the server
	 * @throws IllegalStateException if the server is not running (outside a test)
	 * @throws org.opentest4j.TestAbortedException if the tests run against another server
	 * ({@value #EXTERNAL_SERVER_PROPERTY}): the calling test is reported as skipped
	 */
	public TestingServer getServer() {
		if (this.external != null) {
			Assumptions.abort("needs the in-process server; the tests run against " + this.external + " ("
					+ EXTERNAL_SERVER_PROPERTY + ")");
		}
		TestingServer server = this.server;
		if (server == null) {
			throw new IllegalStateException("The ZooKeeper server runs only during the tests of the class that "
					+ "registers this extension (with @RegisterExtension)");
		}
		return server;
	}

	/**
	 * Return a started Curator client of the server, connected: retries with an exponential
	 * back-off from 100 ms, 3 times; Curator's default session and connection timeouts. Closed by
	 * the extension after the test that made it, or after the class when made in
	 * {@code @BeforeAll}.
	 * @return the client
	 * @throws IllegalStateException if the server is not running, or the client is not connected
	 * within {@link #CONNECT_TIMEOUT}
	 * @throws InterruptedException if interrupted while waiting for the connection
	 */
	public CuratorFramework newClient() throws InterruptedException {
		return newClient((builder) -> {
		});
	}

	/**
	 * Return a started and connected Curator client of the server, built as by
	 * {@link #newClient()} and then changed by the customizer (session timeout, retry policy,
	 * namespace, authorization, a {@link CountingZooKeeper#factory counting ZooKeeper client}, even
	 * another connect string such as a proxy's). Closed by the extension like the others.
	 * @param customizer changes the builder before the client is built
	 * @return the client
	 * @throws IllegalStateException if the server is not running, or the client is not connected
	 * within {@link #CONNECT_TIMEOUT}
	 * @throws InterruptedException if interrupted while waiting for the connection
	 */
	public CuratorFramework newClient(Consumer<CuratorFrameworkFactory.Builder> customizer)
			throws InterruptedException {
		CuratorFramework client = newStartedClient(customizer);
		if (!client.blockUntilConnected((int) CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new IllegalStateException("Client not connected to " + getConnectString() + " within "
					+ CONNECT_TIMEOUT.toMillis() + " ms");
		}
		return client;
	}

	/**
	 * Return a started Curator client of the server without waiting for its connection, for tests
	 * that start with the server down. Closed by the extension like the others.
	 * @param customizer changes the builder before the client is built
	 * @return the client, connected or not
	 * @throws IllegalStateException if the server was never started
	 */
	public CuratorFramework newStartedClient(Consumer<CuratorFrameworkFactory.Builder> customizer) {
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
			.connectString(getConnectString())
			.retryPolicy(new ExponentialBackoffRetry(100, 3));
		customizer.accept(builder);
		CuratorFramework client = builder.build();
		(this.inTest ? this.testClients : this.classClients).add(client);
		client.start();
		return client;
	}

	/**
	 * Expire a client's session on the server, as a long network partition would: a second handle
	 * connects with the session's id and password (the server drops the client's connection for
	 * it) and closes, which ends the session and deletes its ephemeral znodes. Repeated until
	 * ZooKeeper answers that the session expired, in case the client took it back in between. The
	 * client learns of it on its next connection: Curator reports LOST and starts a new session.
	 * @param client a connected client of this server
	 * @throws IllegalStateException if the session did not expire within {@link #CONNECT_TIMEOUT}
	 * @throws Exception if the client has no ZooKeeper handle or ZooKeeper fails
	 */
	public void expireSession(CuratorFramework client) throws Exception {
		ZooKeeper current = client.getZookeeperClient().getZooKeeper();
		long sessionId = current.getSessionId();
		byte[] password = current.getSessionPasswd();
		long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			BlockingQueue<Watcher.Event.KeeperState> states = new LinkedBlockingQueue<>();
			ZooKeeper probe = new ZooKeeper(getConnectString(), current.getSessionTimeout(),
					(event) -> states.add(event.getState()), sessionId, password);
			try {
				if (states.poll(5, TimeUnit.SECONDS) == Watcher.Event.KeeperState.Expired) {
					return;
				}
			}
			finally {
				probe.close(5000);
			}
		}
		throw new IllegalStateException("Session 0x" + Long.toHexString(sessionId) + " did not expire within "
				+ CONNECT_TIMEOUT.toMillis() + " ms");
	}

	/**
	 * Return the ephemeral znodes below a path, at any depth, in path order: the grants and
	 * waiters of every client, whatever the lock recipe (Curator's lock znodes sit directly below
	 * the lock path, a semaphore's below its {@code leases} and {@code locks} children). Reads with
	 * one {@code getChildren} per persistent or container znode and one {@code exists} per child.
	 * @param client a connected client
	 * @param path the znode to look below
	 * @return the full paths of the ephemeral znodes, empty if the path does not exist
	 * @throws Exception if ZooKeeper fails
	 */
	public static List<String> ephemeralZnodes(CuratorFramework client, String path) throws Exception {
		List<String> found = new ArrayList<>();
		collectEphemeralZnodes(client, path, found);
		return found;
	}

	private static void collectEphemeralZnodes(CuratorFramework client, String path, List<String> found)
			throws Exception {
		List<String> children;
		try {
			children = client.getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return;
		}
		for (String child : children.stream().sorted().toList()) {
			String childPath = ZKPaths.makePath(path, child);
			Stat stat = client.checkExists().forPath(childPath);
			if (stat != null && stat.getEphemeralOwner() != 0) {
				found.add(childPath);
			}
			else if (stat != null) {
				collectEphemeralZnodes(client, childPath, found);
			}
		}
	}

	private void start() throws Exception {
		String external = System.getProperty(EXTERNAL_SERVER_PROPERTY, "").strip();
		if (!external.isEmpty()) {
			this.external = external;
			return;
		}
		if (this.containerCheckIntervalMs > 0) {
			this.previousContainerCheckInterval = System.setProperty(CONTAINER_CHECK_INTERVAL,
					Long.toString(this.containerCheckIntervalMs));
		}
		ServerDirectory directory = new ServerDirectory();
		this.directory = directory;
		InstanceSpec spec = new InstanceSpec(directory.dataDirectory(), this.port, -1, -1, true, -1, this.tickTimeMs,
				-1, new LinkedHashMap<>(this.serverProperties));
		this.server = new TestingServer(spec, true);
	}

	private void stop() throws IOException {
		this.external = null;
		TestingServer server = this.server;
		ServerDirectory directory = this.directory;
		this.server = null;
		this.directory = null;
		try {
			if (server != null) {
				server.close();
			}
		}
		finally {
			if (directory != null) {
				directory.close();
			}
			if (this.containerCheckIntervalMs > 0) {
				if (this.previousContainerCheckInterval == null) {
					System.clearProperty(CONTAINER_CHECK_INTERVAL);
				}
				else {
					System.setProperty(CONTAINER_CHECK_INTERVAL, this.previousContainerCheckInterval);
				}
			}
		}
	}

	/**
	 * Close the clients all at once, each on a thread of its own, and wait for them: ZooKeeper's
	 * client sleeps 100 ms as its connection ends ({@code ClientCnxnSocketNIO.cleanup}) and its
	 * {@code close()} waits for that, so that a test's three clients closed one after the other
	 * would cost 0.3 s. The clients are independent (each its own session), so their order does
	 * not matter; every close has ended when this returns, before the next test or the server's
	 * stop.
	 */
	private static void closeAll(List<CuratorFramework> clients) {
		List<Thread> closing = new ArrayList<>(clients.size());
		for (CuratorFramework client : clients) {
			Thread thread = new Thread(client::close, "zk-test-client-close");
			thread.setDaemon(true);
			thread.start();
			closing.add(thread);
		}
		clients.clear();
		long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
		boolean interrupted = false;
		for (Thread thread : closing) {
			while (thread.isAlive() && System.nanoTime() - deadline < 0) {
				try {
					thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
		long open = closing.stream().filter(Thread::isAlive).count();
		if (open > 0) {
			throw new IllegalStateException(open + " ZooKeeper client(s) of the test not closed within "
					+ CLOSE_TIMEOUT.toSeconds() + " s");
		}
	}

}
