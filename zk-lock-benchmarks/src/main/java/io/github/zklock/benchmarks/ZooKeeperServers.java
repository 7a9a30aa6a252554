package io.github.zklock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;

/**
 * Where the benchmarks find ZooKeeper and how they connect to it. By default each benchmark JVM
 * starts its own in-process server ({@link TestingServer}), bound to 127.0.0.1 and keeping its data
 * below the work directory; the system property {@value #CONNECT_STRING_PROPERTY} names an external
 * server instead. Every client is built with the settings the starter uses by default (Curator's),
 * so that raw Curator, the starter and the peers talk to the server the same way.
 */
public final class ZooKeeperServers {

	/** System property: connect string of an external ZooKeeper server to use instead of an in-process one. */
	public static final String CONNECT_STRING_PROPERTY = "zk.bench.connect-string";

	/** System property: directory for server data and temporary files; {@code target/bench} by default. */
	public static final String WORK_DIR_PROPERTY = "zk.bench.work-dir";

	private static final int SESSION_TIMEOUT_MS = 60_000;

	private static final int CONNECTION_TIMEOUT_MS = 15_000;

	private ZooKeeperServers() {
	}

	/**
	 * Return the external server's connect string, if one was given.
	 * @return the connect string, or {@code null} to use an in-process server
	 */
	public static @Nullable String externalConnectString() {
		String connectString = System.getProperty(CONNECT_STRING_PROPERTY, "").trim();
		return connectString.isEmpty() ? null : connectString;
	}

	/**
	 * Return the work directory, creating it if needed.
	 * @return the work directory
	 * @throws IOException if it cannot be created
	 */
	public static Path workDir() throws IOException {
		return Files.createDirectories(Path.of(System.getProperty(WORK_DIR_PROPERTY, "target/bench")));
	}

	/**
	 * Start an in-process ZooKeeper server on a free port of 127.0.0.1, with its data in a new
	 * directory below the work directory (deleted when the server is closed). Container znodes are
	 * reaped as the {@code znode.container.*} system properties say when it starts.
	 * @return the started server
	 * @throws Exception if it does not start
	 */
	public static TestingServer startInProcess() throws Exception {
		Path parent = Files.createDirectories(workDir().resolve("zookeeper"));
		Path dataDir = Files.createTempDirectory(parent, "data-");
		InstanceSpec spec = new InstanceSpec(dataDir.toFile(), -1, -1, -1, true, -1, -1, -1,
				Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
		return new TestingServer(spec, true);
	}

	/**
	 * Build, start and connect a Curator client with Curator's default timeouts and the starter's
	 * default retry policy.
	 * @param connectString the server
	 * @return the connected client
	 * @throws InterruptedException if interrupted while connecting
	 * @throws IllegalStateException if it does not connect within 30 seconds
	 */
	public static CuratorFramework startClient(String connectString) throws InterruptedException {
		return startClient(CuratorFrameworkFactory.builder().connectString(connectString));
	}

	/**
	 * Start and connect a Curator client from a builder, after applying the common settings.
	 * @param builder the builder, with its connect string set
	 * @return the connected client
	 * @throws InterruptedException if interrupted while connecting
	 * @throws IllegalStateException if it does not connect within 30 seconds
	 */
	public static CuratorFramework startClient(CuratorFrameworkFactory.Builder builder) throws InterruptedException {
		CuratorFramework client = builder.sessionTimeoutMs(SESSION_TIMEOUT_MS)
			.connectionTimeoutMs(CONNECTION_TIMEOUT_MS)
			.retryPolicy(new ExponentialBackoffRetry(1000, 3))
			.build();
		client.start();
		if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
			client.close();
			throw new IllegalStateException("Could not connect to ZooKeeper at " + builder.getEnsembleProvider()
				.getConnectionString());
		}
		return client;
	}

	/**
	 * Return a name unique to this JVM and run, used as the top znode of everything it creates, so
	 * that runs against one external server do not meet.
	 * @return a name such as {@code zkb-1234-5f3a}
	 */
	public static String runId() {
		return "zkb-" + ProcessHandle.current().pid() + "-"
				+ Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));
	}

}
