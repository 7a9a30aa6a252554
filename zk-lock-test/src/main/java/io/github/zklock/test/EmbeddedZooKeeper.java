package io.github.zklock.test;

import java.io.IOException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.test.TestingServer;

/**
 * An in-process, single-node ZooKeeper server (Curator's {@code TestingServer}) with its data in
 * a temporary directory that is deleted when it stops. Started by
 * {@code zk.lock.embedded.enabled=true} ({@link EmbeddedZooKeeperAutoConfiguration}); meant for
 * development, demos and tests, not for production. Usable without Spring as well.
 *
 * <p>Thread-safe.
 */
public class EmbeddedZooKeeper implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(EmbeddedZooKeeper.class);

	private final TestingServer server;

	/**
	 * Start a server.
	 * @param port the client port, 0 for a free port
	 * @throws Exception if the server cannot start (for example, the port is taken)
	 */
	public EmbeddedZooKeeper(int port) throws Exception {
		// TestingServer takes -1, not 0, for "a free port".
		this.server = new TestingServer((port == 0) ? -1 : port, true);
		logger.info("Started embedded ZooKeeper on " + getConnectString());
	}

	/**
	 * Return the connect string of the running server, {@code host:port}.
	 * @return the connect string
	 */
	public String getConnectString() {
		return this.server.getConnectString();
	}

	/**
	 * Return the client port the server listens on.
	 * @return the port
	 */
	public int getPort() {
		return this.server.getPort();
	}

	/**
	 * Stop the server and delete its data directory. Calling it again has no effect.
	 * @throws IOException if stopping fails
	 */
	@Override
	public void close() throws IOException {
		this.server.close();
		logger.info("Stopped embedded ZooKeeper");
	}

}
