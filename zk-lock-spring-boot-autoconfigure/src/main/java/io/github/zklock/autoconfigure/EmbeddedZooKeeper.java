package io.github.zklock.autoconfigure;

import java.io.IOException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.test.TestingServer;
import org.springframework.beans.factory.DisposableBean;

/**
 * An in-process, single-node ZooKeeper server (Curator's {@code TestingServer}) with its data in
 * a temporary directory that is deleted on shutdown. Started by {@code zk.lock.embedded.enabled};
 * meant for development, demos and tests, not for production.
 *
 * <p>Needs {@code org.apache.curator:curator-test} on the class path.
 */
public class EmbeddedZooKeeper implements DisposableBean {

	private static final Log logger = LogFactory.getLog(EmbeddedZooKeeper.class);

	private final TestingServer server;

	/**
	 * Start a server.
	 * @param port the client port, 0 for a free port
	 * @throws Exception if the server cannot start (for example, the port is taken)
	 */
	public EmbeddedZooKeeper(int port) throws Exception {
		this.server = new TestingServer(port, true);
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
	 * Stop the server and delete its data directory.
	 * @throws IOException if stopping fails
	 */
	@Override
	public void destroy() throws IOException {
		this.server.close();
		logger.info("Stopped embedded ZooKeeper");
	}

}
