package io.github.zklock.sample.demo;

import java.io.File;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.server.ServerMetrics;

/**
 * A single ZooKeeper server in its own process (Curator's {@code TestingServer}, a real ZooKeeper
 * server), listening on {@code 127.0.0.1} only, running until the process is stopped. Several
 * instances of the sample application connect to it with
 * {@code --zk.lock.embedded.enabled=false --zk.lock.connect-string=127.0.0.1:<port>}, so that their
 * locks exclude each other. For demos, not for production.
 *
 * <p>Usage, from the sample's jar:
 * <pre>
 * java -cp zk-lock-sample-app.jar -Dloader.main=io.github.zklock.sample.demo.StandaloneZooKeeper \
 *     org.springframework.boot.loader.launch.PropertiesLauncher &lt;port&gt; &lt;data-dir&gt; [&lt;metrics-port&gt;]
 * </pre>
 * The data directory is created if needed and deleted when the server stops. With a metrics port
 * (0 for a free one), the server's own metrics are served on
 * {@code http://127.0.0.1:<metrics-port>/metrics} ({@link ZooKeeperMeters}), and
 * {@code ZooKeeper metrics on http://127.0.0.1:<port>/metrics} is printed. Once the server accepts
 * connections, {@code ZooKeeper ready on 127.0.0.1:<port>} is printed.
 */
public final class StandaloneZooKeeper {

	private static final String HOST = "127.0.0.1";

	private static final int TICK_TIME_MS = 500;

	private StandaloneZooKeeper() {
	}

	/**
	 * Start the server and wait until the process is stopped (SIGTERM, Ctrl-C).
	 * @param args the client port (0 for a free one) and the data directory
	 * @throws Exception if the server cannot start
	 */
	public static void main(String[] args) throws Exception {
		if (args.length != 2 && args.length != 3) {
			System.err.println("Usage: StandaloneZooKeeper <port> <data-dir> [<metrics-port>]");
			System.exit(2);
		}
		int port = Integer.parseInt(args[0]);
		File dataDir = new File(args[1]).getAbsoluteFile();
		if (!dataDir.isDirectory() && !dataDir.mkdirs()) {
			throw new IllegalStateException("Cannot create data directory " + dataDir);
		}
		// No admin HTTP server (it would take port 8080); client connections on loopback only.
		System.setProperty("zookeeper.admin.enableServer", "false");
		// A 500 ms tick lets clients ask for sessions as short as 1 s (2 ticks; ./demo.sh --chaos
		// uses 2 s); the maximum is raised from 20 ticks so that the default 60 s is granted.
		Map<String, Object> properties = new HashMap<>(Map.of("clientPortAddress", HOST, "maxSessionTimeout", "120000"));
		if (args.length == 3) {
			// The server starts the provider from its configuration, before it registers its gauges.
			properties.put("metricsProvider.className", ZooKeeperMeters.class.getName());
			properties.put("metricsProvider.httpPort", Integer.toString(Integer.parseInt(args[2])));
		}
		InstanceSpec spec = new InstanceSpec(dataDir, port, -1, -1, true, -1, TICK_TIME_MS, -1, properties, HOST);
		TestingServer server = new TestingServer(spec, true);
		if (ServerMetrics.getMetrics().getMetricsProvider() instanceof ZooKeeperMeters meters) {
			System.out.println("ZooKeeper metrics on http://127.0.0.1:" + meters.port() + "/metrics");
		}
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				server.close();
			}
			catch (IOException ex) {
				System.err.println("Failed to stop ZooKeeper cleanly: " + ex);
			}
			finally {
				stopped.countDown();
			}
		}, "zookeeper-shutdown"));
		System.out.println("ZooKeeper ready on " + server.getConnectString());
		stopped.await();
	}

}
