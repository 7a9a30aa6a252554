package io.github.zklock.test;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.opentest4j.TestAbortedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for {@link ZooKeeperExtension}: registered on a static field here, it serves every test
 * of the class and of its {@code @Nested} class; its lifecycle is also driven directly, on
 * instances of its own, to see servers and clients stop. Plain Curator clients and Curator's own
 * lock recipe ({@link InterProcessMutex}, from curator-recipes, a test dependency): this module
 * knows nothing of zk-lock's locks (two zk-lock applications sharing the server are tested in the
 * auto-configuration module).
 */
class ZooKeeperExtensionTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** The class's server, as the extension started it before {@code @BeforeAll}. */
	private static TestingServer classServer;

	/** A client made in {@code @BeforeAll}: it serves every test of the class. */
	private static CuratorFramework classClient;

	@BeforeAll
	static void recordTheClassServerAndMakeAClassClient() throws Exception {
		classServer = zooKeeper.getServer();
		classClient = zooKeeper.newClient();
	}

	@Test
	void twoClientsShareTheServerAndExcludeEachOther() throws Exception {
		CuratorFramework first = zooKeeper.newClient();
		CuratorFramework second = zooKeeper.newClient();
		InterProcessMutex firstMutex = new InterProcessMutex(first, "/shared");
		InterProcessMutex secondMutex = new InterProcessMutex(second, "/shared");
		assertThat(firstMutex.acquire(10, TimeUnit.SECONDS)).isTrue();
		// Held by the first client's session: refused to the other until that session goes.
		assertThat(secondMutex.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
		assertThat(secondMutex.isAcquiredInThisProcess()).isFalse();
		first.close();
		assertThat(secondMutex.acquire(10, TimeUnit.SECONDS)).as("free once the holder's session closed").isTrue();
		assertThat(second.getChildren().forPath("/shared")).as("the first client's lock znode went with its session")
			.hasSize(1);
		secondMutex.release();
	}

	@Test
	void expireSessionEndsTheClientsSessionWithItsEphemeralZnodes() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
		client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
		long sessionId = client.getZookeeperClient().getZooKeeper().getSessionId();
		client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/expiring/node");

		zooKeeper.expireSession(client);

		assertThat(classClient.checkExists().forPath("/expiring/node")).as("deleted with the session").isNull();
		await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(ConnectionState.LOST));
		assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
		assertThat(client.getZookeeperClient().getZooKeeper().getSessionId()).as("a new session")
			.isNotEqualTo(sessionId);
	}

	@Test
	void ephemeralZnodesFindsEveryEphemeralBelowAPathAtAnyDepth() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/walk/lock/b-1");
		client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/walk/lock/a-0");
		client.create()
			.creatingParentContainersIfNeeded()
			.withMode(CreateMode.EPHEMERAL)
			.forPath("/walk/lock/leases/lease-0");
		client.create().creatingParentsIfNeeded().forPath("/walk/lock/persistent/child");

		assertThat(ZooKeeperExtension.ephemeralZnodes(classClient, "/walk")).containsExactly("/walk/lock/a-0",
				"/walk/lock/b-1", "/walk/lock/leases/lease-0");
		assertThat(ZooKeeperExtension.ephemeralZnodes(classClient, "/walk/lock/leases"))
			.containsExactly("/walk/lock/leases/lease-0");
		assertThat(ZooKeeperExtension.ephemeralZnodes(classClient, "/no/such/path")).isEmpty();
	}

	@Test
	void exposesTheRunningServer() throws Exception {
		assertThat(zooKeeper.getConnectString()).endsWith(":" + zooKeeper.getPort());
		assertThat(zooKeeper.getServer().getPort()).isEqualTo(zooKeeper.getPort());
		assertThat(zooKeeper.getServer()).isSameAs(classServer);
		// Built by hand on purpose: what is tested is that the connect string reaches the server.
		try (CuratorFramework client = CuratorFrameworkFactory.newClient(zooKeeper.getConnectString(),
				new RetryOneTime(100))) {
			client.start();
			assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
			assertThat(client.checkExists().forPath("/")).isNotNull();
		}
	}

	@Test
	void perClassServerLivesFromBeforeAllToAfterAll() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		assertThatIllegalStateException().isThrownBy(extension::getConnectString)
			.withMessageContaining("@RegisterExtension");
		extension.beforeAll(null);
		int port = extension.getPort();
		extension.beforeEach(null);
		extension.afterEach(null);
		extension.beforeEach(null);
		assertThat(extension.getPort()).as("the same server for every test").isEqualTo(port);
		assertThat(acceptsConnections(port)).isTrue();
		extension.afterEach(null);
		assertThat(acceptsConnections(port)).isTrue();
		extension.afterAll(null);
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(port));
		assertThatIllegalStateException().isThrownBy(extension::getServer);
	}

	@Test
	void serverKeepsItsDataAndConfigurationInADirectoryOfItsOwnDeletedAfterAll() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeAll(null);
		File directory = extension.getServer().getTempDirectory().getParentFile();
		assertThat(directory).isNotEqualTo(new File(System.getProperty("java.io.tmpdir")));
		// ZooKeeper's embedded server writes its configuration next to the data directory.
		assertThat(directory.list()).anyMatch((name) -> name.startsWith("zookeeper.configuration"));
		extension.afterAll(null);
		assertThat(directory).doesNotExist();
	}

	@Test
	void perTestServerStopsAfterEachTest() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeEach(null);
		int port = extension.getPort();
		assertThat(acceptsConnections(port)).isTrue();
		extension.afterEach(null);
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(port));
		assertThatIllegalStateException().isThrownBy(extension::getPort);
	}

	@Test
	void nestedClassesShareTheServerOfTheEnclosingClass() throws Exception {
		// JUnit calls the callbacks of the enclosing class's extension again for a @Nested class.
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeAll(null);
		TestingServer server = extension.getServer();
		CuratorFramework client = extension.newClient();
		extension.beforeAll(null);
		assertThat(extension.getServer()).isSameAs(server);
		extension.beforeEach(null);
		extension.afterEach(null);
		extension.afterAll(null);
		assertThat(extension.getServer()).as("still the enclosing class's").isSameAs(server);
		assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		assertThat(acceptsConnections(server.getPort())).isTrue();
		extension.afterAll(null);
		assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
		await().atMost(Duration.ofSeconds(10)).until(() -> !acceptsConnections(server.getPort()));
		assertThatIllegalStateException().isThrownBy(extension::getServer);
	}

	@Test
	void anotherServerNamedByTheSystemPropertyReplacesTheInProcessOne() throws Exception {
		try (TestingServer other = new TestingServer(true)) {
			String before = System.getProperty(ZooKeeperExtension.EXTERNAL_SERVER_PROPERTY);
			System.setProperty(ZooKeeperExtension.EXTERNAL_SERVER_PROPERTY, other.getConnectString());
			ZooKeeperExtension extension = new ZooKeeperExtension();
			try {
				extension.beforeAll(null);
				assertThat(extension.getConnectString()).isEqualTo(other.getConnectString());
				assertThat(extension.getPort()).isEqualTo(other.getPort());
				CuratorFramework client = extension.newClient();
				client.create().forPath("/on-the-other-server");
				// A test that needs the in-process server is aborted (reported as skipped).
				assertThatExceptionOfType(TestAbortedException.class).isThrownBy(extension::getServer)
					.withMessageContaining(other.getConnectString());
				extension.expireSession(client);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> client.getZookeeperClient().isConnected() && client.checkExists().forPath("/on-the-other-server") != null);
				extension.afterAll(null);
				// The other server goes on: the extension stops only what it started.
				assertThat(acceptsConnections(other.getPort())).isTrue();
				assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
			}
			finally {
				if (before == null) {
					System.clearProperty(ZooKeeperExtension.EXTERNAL_SERVER_PROPERTY);
				}
				else {
					System.setProperty(ZooKeeperExtension.EXTERNAL_SERVER_PROPERTY, before);
				}
			}
		}
	}

	@Test
	void containerCheckIntervalReapsEmptyContainersQuicklyWhileItsServerRuns() throws Exception {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ZooKeeperExtension().withContainerCheckInterval(Duration.ZERO));
		String before = System.getProperty(ZooKeeperExtension.CONTAINER_CHECK_INTERVAL);
		ZooKeeperExtension extension = new ZooKeeperExtension().withContainerCheckInterval(Duration.ofMillis(100));
		extension.beforeEach(null);
		try {
			assertThat(System.getProperty(ZooKeeperExtension.CONTAINER_CHECK_INTERVAL)).isEqualTo("100");
			CuratorFramework client = extension.newClient();
			client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath("/box/node");
			client.delete().forPath("/box/node");
			// A container that had a child and has none left: the default interval is one minute.
			await().atMost(Duration.ofSeconds(10)).until(() -> client.checkExists().forPath("/box") == null);
		}
		finally {
			extension.afterEach(null);
		}
		assertThat(System.getProperty(ZooKeeperExtension.CONTAINER_CHECK_INTERVAL)).as("restored").isEqualTo(before);
	}

	@Test
	void keepsItsPortAcrossARestart() throws Exception {
		int port = zooKeeper.getPort();
		zooKeeper.getServer().restart();
		assertThat(zooKeeper.getPort()).isEqualTo(port);
		await().atMost(Duration.ofSeconds(10)).until(() -> acceptsConnections(port));
	}

	@Test
	void rejectsAPortOutOfRange() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperExtension(0))
			.withMessage("port must be between 1 and 65535, or -1 for a free port, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperExtension(65536));
		assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperExtension(-2));
		assertThatNoException().isThrownBy(() -> new ZooKeeperExtension(1));
		assertThatNoException().isThrownBy(() -> new ZooKeeperExtension(65535));
		assertThatNoException().isThrownBy(() -> new ZooKeeperExtension(-1));
	}

	@Test
	void rejectsATickShorterThanOneMillisecond() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ZooKeeperExtension().withTickTime(Duration.ZERO))
			.withMessageContaining("tickTime must be at least 1 ms");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ZooKeeperExtension().withTickTime(Duration.ofNanos(999_999)));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ZooKeeperExtension().withTickTime(Duration.ofMillis(-5)));
	}

	@Test
	void newClientIsStartedAndConnected() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		assertThat(client.getZookeeperClient().isConnected()).isTrue();
		assertThat(client.getZookeeperClient().getCurrentConnectionString()).isEqualTo(zooKeeper.getConnectString());
		assertThat(client.checkExists().forPath("/")).isNotNull();
	}

	@Test
	void classClientServesEveryTest() {
		assertThat(classClient.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		// Connected, unless another test's restart of the server is still being noticed.
		await().atMost(Duration.ofSeconds(10)).until(() -> classClient.getZookeeperClient().isConnected());
	}

	@Test
	void closesTheClientsOfATestAfterIt() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeEach(null);
		CuratorFramework first;
		CuratorFramework second;
		try {
			first = extension.newClient();
			second = extension.newStartedClient((builder) -> {
			});
			assertThat(first.getState()).isEqualTo(CuratorFrameworkState.STARTED);
			assertThat(second.getState()).isEqualTo(CuratorFrameworkState.STARTED);
			first.close();
		}
		finally {
			extension.afterEach(null);
		}
		assertThat(first.getState()).as("closed twice, harmlessly").isEqualTo(CuratorFrameworkState.STOPPED);
		assertThat(second.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
	}

	@Test
	void closesTheClientsOfTheClassAfterTheClass() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeAll(null);
		CuratorFramework classClient;
		CuratorFramework testClient;
		try {
			classClient = extension.newClient();
			extension.beforeEach(null);
			testClient = extension.newClient();
			extension.afterEach(null);
			assertThat(testClient.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
			assertThat(classClient.getState()).isEqualTo(CuratorFrameworkState.STARTED);
			extension.beforeEach(null);
			assertThat(classClient.checkExists().forPath("/")).as("usable in the next test").isNotNull();
			extension.afterEach(null);
			assertThat(classClient.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		}
		finally {
			extension.afterAll(null);
		}
		assertThat(classClient.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
	}

	@Test
	void newClientAppliesTheCustomizer() throws Exception {
		CuratorFramework client = zooKeeper.newClient((builder) -> builder.namespace("customized")
			.sessionTimeoutMs(7_000)
			.connectionTimeoutMs(3_000)
			.retryPolicy(new RetryOneTime(50)));
		assertThat(client.getNamespace()).isEqualTo("customized");
		assertThat(client.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(3_000);
		assertThat(client.getZookeeperClient().getRetryPolicy()).isInstanceOf(RetryOneTime.class);
		assertThat(client.getZookeeperClient().getZooKeeper().getSessionTimeout()).isEqualTo(7_000);
		client.create().forPath("/made-in-namespace");
		assertThat(zooKeeper.newClient().checkExists().forPath("/customized/made-in-namespace")).isNotNull();
	}

	@Test
	void newStartedClientDoesNotWaitForTheConnection() throws Exception {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		extension.beforeEach(null);
		AtomicReference<@Nullable CuratorFramework> started = new AtomicReference<>();
		try {
			extension.getServer().stop();
			CuratorFramework client = assertTimeoutPreemptively(Duration.ofSeconds(5),
					() -> extension.newStartedClient((builder) -> builder.connectionTimeoutMs(1_000)));
			started.set(client);
			assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
			assertThat(client.getZookeeperClient().isConnected()).isFalse();
			extension.getServer().restart();
			assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).as("connects once the server is up")
				.isTrue();
		}
		finally {
			extension.afterEach(null);
		}
		assertThat(started.get()).isNotNull()
			.extracting(CuratorFramework::getState)
			.isEqualTo(CuratorFrameworkState.STOPPED);
	}

	@Test
	void handsOutClientsOnlyWhileTheServerRuns() {
		ZooKeeperExtension extension = new ZooKeeperExtension();
		assertThatIllegalStateException().isThrownBy(() -> extension.newStartedClient((builder) -> {
		})).withMessageContaining("@RegisterExtension");
		assertThatIllegalStateException().isThrownBy(extension::newClient);
	}

	@Test
	void passesTheTickAndServerPropertiesToTheServer() throws Exception {
		// A session timeout is bounded to 20 ticks (2 s here) unless maxSessionTimeout raises it.
		ZooKeeperExtension shortTicks = new ZooKeeperExtension().withTickTime(Duration.ofMillis(100));
		assertThat(negotiatedSessionTimeout(shortTicks, 10_000)).isEqualTo(2_000);
		ZooKeeperExtension longerSessions = new ZooKeeperExtension().withTickTime(Duration.ofMillis(100))
			.withServerProperty("maxSessionTimeout", 10_000);
		assertThat(negotiatedSessionTimeout(longerSessions, 10_000)).isEqualTo(10_000);
		assertThat(negotiatedSessionTimeout(longerSessions, 30_000)).isEqualTo(10_000);
	}

	private static int negotiatedSessionTimeout(ZooKeeperExtension extension, int requestedMs) throws Exception {
		extension.beforeEach(null);
		try {
			CuratorFramework client = extension.newClient((builder) -> builder.sessionTimeoutMs(requestedMs));
			return client.getZookeeperClient().getZooKeeper().getSessionTimeout();
		}
		finally {
			extension.afterEach(null);
		}
	}

	private static boolean acceptsConnections(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Runs under the enclosing class's extension, through JUnit's own callbacks: the server is
	 * shared, and a test's clients are closed after it, but only after its {@code @AfterEach}
	 * methods have run.
	 */
	@Nested
	@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
	class InANestedClass {

		private static @Nullable CuratorFramework firstTestClient;

		private static @Nullable CuratorFrameworkState stateInAfterEach;

		@AfterEach
		void recordTheStateOfTheFirstTestClient() {
			CuratorFramework client = firstTestClient;
			if (client != null && stateInAfterEach == null) {
				stateInAfterEach = client.getState();
			}
		}

		@Test
		@Order(1)
		void runsOnTheServerOfTheEnclosingClass() throws Exception {
			assertThat(zooKeeper.getServer()).isSameAs(classServer);
			firstTestClient = zooKeeper.newClient();
			assertThat(firstTestClient.getZookeeperClient().isConnected()).isTrue();
		}

		@Test
		@Order(2)
		void closedTheClientOfTheFirstTestAfterItsAfterEachMethods() {
			assertThat(zooKeeper.getServer()).isSameAs(classServer);
			assertThat(stateInAfterEach).as("open in @AfterEach").isEqualTo(CuratorFrameworkState.STARTED);
			assertThat(firstTestClient).isNotNull()
				.extracting(CuratorFramework::getState)
				.isEqualTo(CuratorFrameworkState.STOPPED);
			assertThat(classClient.getState()).as("the class's client stays open")
				.isEqualTo(CuratorFrameworkState.STARTED);
		}

	}

}
