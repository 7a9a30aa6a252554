package io.github.zklock.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.client.StaticHostProvider;
import org.apache.zookeeper.client.ZKClientConfig;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Shared set-up of the chaos tests: servers with a short tick (through the shared
 * {@link ZooKeeperExtension}), client settings, server-side session expiry, and the
 * {@code CHAOS ...} report lines.
 */
final class Chaos {

	/** Where child JVM logs, grant histories and the report go. */
	static final Path OUTPUT_DIR = Path.of("target", "chaos");

	/**
	 * Server tick. The server expires sessions in buckets of one tick, so a session ends at most
	 * one tick after its timeout; 200 ms keeps "session timeout + 1 s" meaningful.
	 */
	static final int TICK_TIME_MS = 200;

	private Chaos() {
	}

	/** The two client socket implementations of the ZooKeeper client. */
	enum ClientSocket {

		/**
		 * The default. When it notices a closed connection it sleeps 100 ms in
		 * {@code ClientCnxnSocketNIO.cleanup()} before it reports {@code Disconnected}.
		 */
		NIO(ClientCnxnSocketNIO.class.getName()),

		/** Netty: reports {@code Disconnected} as soon as it notices a closed connection. */
		NETTY(ClientCnxnSocketNetty.class.getName());

		private final String className;

		ClientSocket(String className) {
			this.className = className;
		}

	}

	/**
	 * Return the extension that runs the server of a chaos test: a {@link #TICK_TIME_MS} tick, and
	 * session timeouts accepted up to a minute (the default cap is 20 ticks).
	 */
	static ZooKeeperExtension zooKeeper() {
		return new ZooKeeperExtension().withTickTime(Duration.ofMillis(TICK_TIME_MS))
			.withServerProperty("maxSessionTimeout", "60000");
	}

	/**
	 * Return the settings of a chaos client, for {@link ZooKeeperExtension#newClient(Consumer)}:
	 * the requested session timeout, the same connection timeout, retries with a back-off capped at
	 * a second, and the given ZooKeeper client socket implementation.
	 * @param sessionTimeout the requested session timeout
	 * @param socket the ZooKeeper client socket implementation
	 */
	static Consumer<CuratorFrameworkFactory.Builder> clientSettings(Duration sessionTimeout, ClientSocket socket) {
		return (builder) -> {
			ZKClientConfig config = new ZKClientConfig();
			config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, socket.className);
			builder.zkClientConfig(config)
				.sessionTimeoutMs((int) sessionTimeout.toMillis())
				.connectionTimeoutMs((int) sessionTimeout.toMillis())
				.retryPolicy(new ExponentialBackoffRetry(100, 10, 1000));
		};
	}

	/**
	 * Start a Curator client with the {@link #clientSettings chaos settings} and wait until it is
	 * connected. For clients without a {@link ZooKeeperExtension}: those of a child JVM
	 * ({@link LockWorker}) and of the three-server ensemble ({@link ClusterFailoverTests}).
	 * @param connectString where to connect
	 * @param sessionTimeout the requested session timeout
	 */
	static CuratorFramework startClient(String connectString, Duration sessionTimeout) throws InterruptedException {
		return startClient(connectString, sessionTimeout, ClientSocket.NIO);
	}

	/**
	 * Start a Curator client with the {@link #clientSettings chaos settings} on the given ZooKeeper
	 * client socket implementation and wait until it is connected.
	 * @param connectString where to connect
	 * @param sessionTimeout the requested session timeout
	 * @param socket the ZooKeeper client socket implementation
	 */
	static CuratorFramework startClient(String connectString, Duration sessionTimeout, ClientSocket socket)
			throws InterruptedException {
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder().connectString(connectString);
		clientSettings(sessionTimeout, socket).accept(builder);
		CuratorFramework client = builder.build();
		client.start();
		assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).as("connected to %s", connectString).isTrue();
		return client;
	}

	/**
	 * Return a request for a reentrant EXCLUSIVE lock, the lock every chaos client takes.
	 * @param key the key below {@link LockWorker#ROOT}
	 * @param waitTime how long to wait
	 */
	static LockTarget exclusive(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.EXCLUSIVE, true, 0, waitTime);
	}

	/**
	 * Expire the client's current session on the server: open a second connection with the same
	 * session id and password (the server closes the client's connection for it, see
	 * {@code ZooKeeperServer.processConnectRequest}) and close that connection, which closes the
	 * session and deletes its ephemeral znodes. Repeated until a connection attempt with the
	 * session is told it expired (the client may reconnect and take the session back in between).
	 * @return how many attempts it took
	 */
	static int expireSession(CuratorFramework client, String connectString, Duration timeout) throws Exception {
		ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
		return expireSession(connectString, zooKeeper.getSessionId(), zooKeeper.getSessionPasswd(),
				zooKeeper.getSessionTimeout(), timeout);
	}

	/**
	 * Expire a session on the server, given its id and password (see
	 * {@link #expireSession(CuratorFramework, String, Duration)}).
	 * @return how many attempts it took
	 * @throws TimeoutException if the session is still alive after the timeout
	 */
	static int expireSession(String connectString, long sessionId, byte[] password, int sessionTimeoutMs,
			Duration timeout) throws Exception {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (int attempt = 1;; attempt++) {
			BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
			ZooKeeper probe = probe(connectString, sessionTimeoutMs, (event) -> {
				if (event.getType() == EventType.None) {
					states.add(event.getState());
				}
			}, sessionId, password);
			try {
				long remaining = deadline - System.nanoTime();
				KeeperState state = states.poll(Math.max(remaining, 0), TimeUnit.NANOSECONDS);
				if (state == KeeperState.Expired) {
					return attempt;
				}
				if (state == null) {
					throw new TimeoutException("Session 0x" + Long.toHexString(sessionId) + " still alive after "
							+ attempt + " attempts");
				}
			}
			finally {
				// On a connected probe this closes the session; on an expired one it only cleans up.
				probe.close(5000);
			}
		}
	}

	/**
	 * Open a second ZooKeeper handle on an existing session, to take it over (the server closes the
	 * connection of the session's client for it) and close it. On the Netty client socket: a handle
	 * on the default NIO socket returns from {@code close} only after its send thread has slept
	 * 100 ms in {@code ClientCnxnSocketNIO.cleanup()} (200 ms once the session expired), which each
	 * expiry of a chaos test paid twice; the socket of this handle is no part of what is tested.
	 * @param connectString where to connect
	 * @param sessionTimeoutMs the session's timeout
	 * @param watcher told of the handle's events
	 * @param sessionId the session's id
	 * @param password the session's password
	 */
	static ZooKeeper probe(String connectString, int sessionTimeoutMs, Watcher watcher, long sessionId,
			byte[] password) throws IOException {
		ZKClientConfig config = new ZKClientConfig();
		config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientSocket.NETTY.className);
		return new ZooKeeper(connectString, sessionTimeoutMs, watcher, sessionId, password, false,
				new StaticHostProvider(new ConnectStringParser(connectString).getServerAddresses()), config);
	}

	/**
	 * Wait until the lock has the given number of znodes below it: its holder and the waiters.
	 * @param client any client
	 * @param lockPath the full lock path
	 * @param count how many znodes
	 */
	static void awaitLockNodes(CuratorFramework client, String lockPath, int count) {
		await().atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> client.getChildren().forPath(lockPath).size() == count);
	}

	/**
	 * Print a {@code CHAOS ...} line on stdout and append it to {@code target/chaos/report.txt}.
	 */
	static void report(String format, Object... args) {
		print("CHAOS " + String.format(format, args));
	}

	/**
	 * Print a {@code FAULT ...} line, the figures of a fault test, on stdout and append it to
	 * {@code target/chaos/report.txt}.
	 */
	static void fault(String format, Object... args) {
		print("FAULT " + String.format(format, args));
	}

	private static void print(String line) {
		System.out.println(line);
		try {
			Files.createDirectories(OUTPUT_DIR);
			Files.writeString(OUTPUT_DIR.resolve("report.txt"), line + System.lineSeparator(), StandardCharsets.UTF_8,
					StandardOpenOption.CREATE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot write the chaos report", ex);
		}
	}

	/** "min=… median=… max=…" of some figures. */
	static String stats(List<Long> values) {
		List<Long> sorted = new ArrayList<>(values);
		Collections.sort(sorted);
		long median = sorted.get(sorted.size() / 2);
		if (sorted.size() % 2 == 0) {
			median = (sorted.get(sorted.size() / 2 - 1) + median) / 2;
		}
		return "min=" + sorted.get(0) + " median=" + median + " max=" + sorted.get(sorted.size() - 1);
	}

	static long millisSince(long nanoTime) {
		return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoTime);
	}

	static void closeQuietly(AutoCloseable closeable) {
		if (closeable == null) {
			return;
		}
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// Clean-up only: the test outcome is decided, but say what could not be closed.
			System.err.println("Could not close " + closeable + ": " + ex);
		}
	}

}
