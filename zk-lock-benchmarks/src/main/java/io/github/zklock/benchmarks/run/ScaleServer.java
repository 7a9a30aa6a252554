package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.server.PurgeTxnLog;

import io.github.zklock.benchmarks.ZooKeeperServers;

/**
 * The scale scenario's ZooKeeper server, in a JVM of its own (started by {@link ScaleScenario}), so
 * that a data tree of a million znodes neither shares a heap with the runner nor with the
 * applications whose heap is measured. It starts an in-process {@link TestingServer} on 127.0.0.1
 * as the other scenarios do (the container reaper and the four-letter words as the
 * {@code znode.container.*} and {@code zookeeper.4lw.commands.whitelist} system properties of its
 * command line say), prints {@code LISTENING <connect string> <data directory>}, keeps the three
 * newest snapshots and their logs (ZooKeeper's {@link PurgeTxnLog}, every minute: millions of
 * writes would otherwise leave gigabytes of them), and stops when its standard input ends.
 * <p>
 * {@link #mntr} reads the server's {@code mntr} four-letter word from another process.
 */
public final class ScaleServer {

	private ScaleServer() {
	}

	/**
	 * Start the server and run until standard input ends.
	 * @param args none
	 * @throws Exception if the server does not start
	 */
	public static void main(String[] args) throws Exception {
		try (TestingServer server = ZooKeeperServers.startInProcess()) {
			File dataDir = server.getTempDirectory();
			ScheduledExecutorService purge = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "scale-server-purge");
				thread.setDaemon(true);
				return thread;
			});
			purge.scheduleWithFixedDelay(() -> {
				try {
					PurgeTxnLog.purge(dataDir, dataDir, 3);
				}
				catch (IOException ex) {
					System.out.println("Purge of old snapshots failed: " + ex);
				}
			}, 1, 1, TimeUnit.MINUTES);
			System.out.println("LISTENING " + server.getConnectString() + " " + dataDir);
			InputStream in = System.in;
			while (in.read() != -1) {
				// anything but the end of the input is ignored
			}
			purge.shutdownNow();
		}
	}

	/**
	 * Ask a server for its {@code mntr} figures (the command must be whitelisted).
	 * @param connectString {@code host:port} of one server
	 * @return the figures by name, such as {@code zk_znode_count}
	 * @throws IOException if the server cannot be reached or refuses the command
	 */
	static Map<String, String> mntr(String connectString) throws IOException {
		int colon = connectString.lastIndexOf(':');
		Map<String, String> figures = new LinkedHashMap<>();
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(connectString.substring(0, colon),
					Integer.parseInt(connectString.substring(colon + 1))), 10_000);
			socket.setSoTimeout(30_000);
			OutputStream out = socket.getOutputStream();
			out.write("mntr".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
			String line;
			while ((line = reader.readLine()) != null) {
				int tab = line.indexOf('\t');
				if (tab > 0) {
					figures.put(line.substring(0, tab), line.substring(tab + 1).trim());
				}
			}
		}
		if (!figures.containsKey("zk_znode_count")) {
			throw new IOException("mntr of " + connectString + " gave no zk_znode_count (is it whitelisted?)");
		}
		return figures;
	}

}
