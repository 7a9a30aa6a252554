package io.github.zklock.test;

import java.io.IOException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * An in-process, single-node ZooKeeper server (Curator's {@code TestingServer}) with its data and
 * configuration in a temporary directory that is deleted when it stops. Started by
 * {@code zk.lock.embedded.enabled=true} ({@link EmbeddedZooKeeperAutoConfiguration}); meant for
 * development, demos and tests, not for production. Usable without Spring as well.
 *
 * <p>Thread-safe.
 */
public class EmbeddedZooKeeper implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(EmbeddedZooKeeper.class);

	private final ServerDirectory directory = new ServerDirectory();

	private final TestingServer server;

	/**
	 * Start a server.
	 * @param port the client port, 0 for a free port
	 * @throws Exception if the server cannot start (for example, the port is taken)
	 */
	public EmbeddedZooKeeper(int port) throws Exception {
		// InstanceSpec takes -1, not 0, for "a free port".
		InstanceSpec spec = new InstanceSpec(this.directory.dataDirectory(), (port == 0) ? -1 : port, -1, -1, true,
				-1);
		try {
			this.server = new TestingServer(spec, true);
		}
		catch (Exception ex) {
			this.directory.close();
			throw ex;
		}
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
	 * Stop the server and delete its directory. Calling it again has no effect.
	 * @throws IOException if stopping fails
	 */
	@Override
	public void close() throws IOException {
		try {
			this.server.close();
		}
		finally {
			this.directory.close();
		}
		logger.info("Stopped embedded ZooKeeper");
	}

	/** The server's directory, for tests. */
	ServerDirectory directory() {
		return this.directory;
	}

}
