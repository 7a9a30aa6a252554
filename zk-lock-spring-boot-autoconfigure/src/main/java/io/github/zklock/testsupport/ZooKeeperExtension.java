package io.github.zklock.testsupport;

import java.io.IOException;

import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit Jupiter extension that runs a real, in-process ZooKeeper server (Curator's
 * {@link TestingServer}, data in a temporary directory deleted on stop) for the tests of a class.
 * Registered on a {@code static} field, one server serves the whole class and stops after its
 * last test (after {@code @AfterAll} methods, so contexts closed there still reach it); on an
 * instance field, each test gets a fresh server.
 *
 * <pre class="code">
 * &#64;RegisterExtension
 * static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();
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
 * one context is enough. Needs {@code org.apache.curator:curator-test} on the test class path.
 *
 * <p>The server's methods are meant for the test thread; the extension is not meant to be shared
 * by test classes running in parallel.
 */
public class ZooKeeperExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

	private final int port;

	private @Nullable TestingServer server;

	private boolean perClass;

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
	 * Start the server for the whole class (the extension is on a static field).
	 * @param context the class's context
	 * @throws Exception if the server cannot start, for example because the port is taken
	 */
	@Override
	public void beforeAll(ExtensionContext context) throws Exception {
		this.perClass = true;
		start();
	}

	/**
	 * Start the server for this test, unless one runs for the whole class.
	 * @param context the test's context
	 * @throws Exception if the server cannot start, for example because the port is taken
	 */
	@Override
	public void beforeEach(ExtensionContext context) throws Exception {
		if (this.server == null) {
			start();
		}
	}

	/**
	 * Stop this test's server, unless it runs for the whole class.
	 * @param context the test's context
	 * @throws IOException if stopping fails
	 */
	@Override
	public void afterEach(ExtensionContext context) throws IOException {
		if (!this.perClass) {
			stop();
		}
	}

	/**
	 * Stop the class's server and delete its data.
	 * @param context the class's context
	 * @throws IOException if stopping fails
	 */
	@Override
	public void afterAll(ExtensionContext context) throws IOException {
		stop();
		this.perClass = false;
	}

	/**
	 * Return the connect string of the running server.
	 * @return {@code host:port}, the value for {@code zk.lock.connect-string}
	 * @throws IllegalStateException if the server is not running (outside a test)
	 */
	public String getConnectString() {
		return getServer().getConnectString();
	}

	/**
	 * Return the client port of the running server.
	 * @return the port
	 * @throws IllegalStateException if the server is not running (outside a test)
	 */
	public int getPort() {
		return getServer().getPort();
	}

	/**
	 * Return the running server, for example to {@link TestingServer#stop() stop} and
	 * {@link TestingServer#restart() restart} it and see how the application copes.
	 * @return the server
	 * @throws IllegalStateException if the server is not running (outside a test)
	 */
	public TestingServer getServer() {
		TestingServer server = this.server;
		if (server == null) {
			throw new IllegalStateException("The ZooKeeper server runs only during the tests of the class that "
					+ "registers this extension (with @RegisterExtension)");
		}
		return server;
	}

	private void start() throws Exception {
		this.server = new TestingServer(this.port, true);
	}

	private void stop() throws IOException {
		TestingServer server = this.server;
		this.server = null;
		if (server != null) {
			server.close();
		}
	}

}
