package io.github.zklock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.AppConfigurationEntry.LoginModuleControlFlag;
import javax.security.auth.login.Configuration;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestLoginModule;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import io.github.zklock.autoconfigure.SecureZooKeeperServer.ClientAuth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * {@link SecureZooKeeperServer} with the ZooKeeper client that the library brings (3.9) and
 * Curator: TLS, identities by certificate ({@code x509}) and by SASL DIGEST-MD5, ACLs for them, and
 * what a client observes when the connection is refused, each within {@link #PATIENCE}. Every
 * client has a {@link ZKClientConfig} of its own; no {@code zookeeper.*} system property is set.
 *
 * <p>SASL needs a JAAS login context on the client's side. A {@link Configuration} installed for
 * this class (the previous one is restored after it) has one section per identity, and each
 * client names its section with {@link ZKClientConfig#LOGIN_CONTEXT_NAME_KEY}
 * ({@code zookeeper.sasl.clientconfig}) in its own configuration, so that clients with different
 * identities can live in one JVM. The SASL tests use the plain port, so that a failure there is
 * not one of TLS (SASL over the TLS port behaves the same).
 *
 * <p>A refused TLS connection produces no watcher event and no exception for the application: the
 * client keeps trying, an operation fails with {@code CONNECTIONLOSS}, and the cause is in the
 * client's log only ({@code ClientCnxnSocketNetty}, "Unexpected throwable", with the
 * {@link javax.net.ssl.SSLHandshakeException}), so the failure tests read that log. A wrong SASL
 * password fails after the session is established: the watcher is told {@code SyncConnected},
 * then {@code AuthFailed}, and Curator's client counts as connected until then.
 */
class SecureZooKeeperServerTests {

	@RegisterExtension
	static final SecureZooKeeperServer zooKeeper = SecureZooKeeperServer.create();

	/** How long a client is given to connect, or observed while it fails to. */
	private static final Duration PATIENCE = Duration.ofSeconds(3);

	/** What the Netty client logs when the server closed the connection before a session. */
	private static final String CHANNEL_LOST = "EndOfStreamException: channel for sessionid 0x0 is lost";

	private static final String APP_SECTION = "zk-lock-app";

	private static final String INTRUDER_SECTION = "zk-lock-intruder";

	private static final String WRONG_PASSWORD_SECTION = "zk-lock-wrong-password";

	private static @Nullable Configuration previousJaasConfiguration;

	@BeforeAll
	static void installSaslUsers() {
		previousJaasConfiguration = currentJaasConfiguration();
		Configuration.setConfiguration(new SaslUsers(previousJaasConfiguration));
	}

	@AfterAll
	static void restoreJaasConfiguration() {
		Configuration.setConfiguration(previousJaasConfiguration);
	}

	@Test
	void admitsATlsClientWithoutCertificateUnauthenticated() throws Exception {
		try (Session session = Session.open(zooKeeper.secureConnectString(), zooKeeper.tlsClientConfig())) {
			String path = uniquePath("tls");
			session.zk.create(path, bytes("over TLS"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
			assertThat(session.zk.getData(path, false, null)).isEqualTo(bytes("over TLS"));
			assertThat(session.zk.whoAmI()).extracting(ClientInfo::getAuthScheme).containsExactly("ip");
		}
	}

	@Test
	void authenticatesAClientCertificateAsX509WithItsSubjectDn() throws Exception {
		try (Session session = Session.open(zooKeeper.secureConnectString(),
				zooKeeper.tlsClientConfig(zooKeeper.clientKeyStore()))) {
			assertThat(session.zk.whoAmI()).extracting(ClientInfo::getAuthScheme, ClientInfo::getUser)
				.contains(tuple("x509", SecureZooKeeperServer.CLIENT_ID));
			String path = uniquePath("x509");
			session.zk.create(path, bytes("mine"), ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
			assertThat(session.zk.getACL(path, null))
				.containsExactly(new ACL(Perms.ALL, new Id("x509", SecureZooKeeperServer.CLIENT_ID)));
		}
	}

	@Test
	void keepsAnotherCertificateOutOfTheZnodesOfAClientCertificate() throws Exception {
		String parent = uniquePath("x509-queue");
		String child = parent + "/holder";
		try (Session owner = Session.open(zooKeeper.secureConnectString(),
				zooKeeper.tlsClientConfig(zooKeeper.clientKeyStore()))) {
			owner.zk.create(parent, new byte[0], ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
			owner.zk.create(child, bytes("mine"), ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
			try (Session intruder = Session.open(zooKeeper.secureConnectString(),
					zooKeeper.tlsClientConfig(zooKeeper.otherClientKeyStore()))) {
				assertThat(intruder.zk.whoAmI()).extracting(ClientInfo::getAuthScheme, ClientInfo::getUser)
					.contains(tuple("x509", SecureZooKeeperServer.OTHER_CLIENT_ID));
				assertKeptOut(intruder.zk, parent, child);
			}
			assertThat(owner.zk.getData(child, false, null)).isEqualTo(bytes("mine"));
		}
	}

	@Test
	void admitsACertificateOfAnotherCaWithoutIdentityWhenCertificatesAreOptional() throws Exception {
		// The server's certificate request names the CAs it trusts; the client's key manager has no
		// certificate of theirs and sends none.
		try (Session session = Session.open(zooKeeper.secureConnectString(),
				zooKeeper.tlsClientConfig(zooKeeper.foreignClientKeyStore()))) {
			assertThat(session.zk.whoAmI()).extracting(ClientInfo::getAuthScheme).containsExactly("ip");
		}
	}

	@Test
	void authenticatesASaslDigestUser() throws Exception {
		try (Session session = Session.open(zooKeeper.plainConnectString(), saslClientConfig(APP_SECTION))) {
			assertThat(session.zk.whoAmI()).extracting(ClientInfo::getAuthScheme, ClientInfo::getUser)
				.contains(tuple("sasl", SecureZooKeeperServer.SASL_USER));
			String path = uniquePath("sasl");
			session.zk.create(path, bytes("mine"), ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
			assertThat(session.zk.getACL(path, null))
				.containsExactly(new ACL(Perms.ALL, new Id("sasl", SecureZooKeeperServer.SASL_USER)));
		}
	}

	@Test
	void keepsAnotherSaslUserOutOfAZnodeForTheSaslUser() throws Exception {
		String parent = uniquePath("sasl-queue");
		String child = parent + "/holder";
		// Not List.of: ZooKeeper.create asks the list whether it contains null, which List.of refuses.
		List<ACL> appOnly = Collections
			.singletonList(new ACL(Perms.ALL, new Id("sasl", SecureZooKeeperServer.SASL_USER)));
		try (Session owner = Session.open(zooKeeper.plainConnectString(), saslClientConfig(APP_SECTION))) {
			owner.zk.create(parent, new byte[0], appOnly, CreateMode.PERSISTENT);
			owner.zk.create(child, bytes("mine"), appOnly, CreateMode.PERSISTENT);
			try (Session intruder = Session.open(zooKeeper.plainConnectString(),
					saslClientConfig(INTRUDER_SECTION))) {
				assertThat(intruder.zk.whoAmI()).extracting(ClientInfo::getAuthScheme, ClientInfo::getUser)
					.contains(tuple("sasl", SecureZooKeeperServer.OTHER_SASL_USER));
				assertKeptOut(intruder.zk, parent, child);
			}
			assertThat(owner.zk.getData(child, false, null)).isEqualTo(bytes("mine"));
		}
	}

	@Test
	void plainClientAtTheTlsPortIsNeverConnected() throws Exception {
		ZKClientConfig plain = new ZKClientConfig();
		plain.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
		plain.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
		Attempt attempt = Attempt.observe(zooKeeper.secureConnectString(), plain);
		assertThat(attempt.states()).as(attempt.toString()).isEmpty();
		assertThat(attempt.operation()).as(attempt.toString()).isEqualTo(KeeperException.Code.CONNECTIONLOSS);
		// The server closes the connection at its first bytes, which are no TLS record
		// (NotSslRecordException in its log): the client sees a server that closed the connection.
		assertThat(attempt.causes()).as(attempt.toString())
			.anySatisfy((cause) -> assertThat(cause).contains(CHANNEL_LOST))
			.noneSatisfy((cause) -> assertThat(cause).contains("SSL"));
	}

	@Test
	void tlsClientAtThePlainPortIsNeverConnected() throws Exception {
		Attempt attempt = Attempt.observe(zooKeeper.plainConnectString(), zooKeeper.tlsClientConfig());
		assertThat(attempt.states()).as(attempt.toString()).isEmpty();
		assertThat(attempt.operation()).as(attempt.toString()).isEqualTo(KeeperException.Code.CONNECTIONLOSS);
		// The server reads the client hello as the length of a request and closes the connection
		// ("Len error" in its log); the handshake ends without a TLS alert.
		assertThat(attempt.causes()).as(attempt.toString())
			.anySatisfy((cause) -> assertThat(cause).contains(CHANNEL_LOST))
			.noneSatisfy((cause) -> assertThat(cause).contains("SSLHandshakeException"));
	}

	@Test
	void clientTrustingAnotherCaIsNeverConnected() throws Exception {
		Attempt attempt = Attempt.observe(zooKeeper.secureConnectString(),
				SecureZooKeeperServer.tlsClientConfig(zooKeeper.clientKeyStore(), zooKeeper.foreignTrustStore()));
		assertThat(attempt.states()).as(attempt.toString()).isEmpty();
		assertThat(attempt.operation()).as(attempt.toString()).isEqualTo(KeeperException.Code.CONNECTIONLOSS);
		assertThat(attempt.causes()).as(attempt.toString())
			.anySatisfy((cause) -> assertThat(cause).contains("SSLHandshakeException: PKIX path building failed"));
	}

	@Test
	void wrongSaslPasswordFailsAuthenticationAfterTheConnection() throws Exception {
		Attempt attempt = Attempt.observe(zooKeeper.plainConnectString(),
				saslClientConfig(WRONG_PASSWORD_SECTION));
		assertThat(attempt.states()).as(attempt.toString())
			.containsExactly(KeeperState.SyncConnected, KeeperState.AuthFailed);
		assertThat(attempt.operation()).as(attempt.toString()).isEqualTo(KeeperException.Code.AUTHFAILED);
		assertThat(attempt.messages()).as(attempt.toString())
			.anySatisfy((message) -> assertThat(message)
				.contains("SASL authentication failed using login context '" + WRONG_PASSWORD_SECTION + "'"));
	}

	@Test
	void curatorIsConnectedWithAWrongSaslPasswordAndFailsEveryOperation() throws Exception {
		List<Object> observed = new CopyOnWriteArrayList<>();
		try (CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(zooKeeper.plainConnectString())
			.zkClientConfig(saslClientConfig(WRONG_PASSWORD_SECTION))
			.sessionTimeoutMs(10_000)
			.connectionTimeoutMs((int) PATIENCE.toMillis())
			.retryPolicy(new RetryOneTime(100))
			.build()) {
			client.getConnectionStateListenable().addListener((curator, state) -> observed.add(state));
			client.getCuratorListenable().addListener((curator, event) -> {
				if (event.getType() == CuratorEventType.WATCHED) {
					observed.add(event.getWatchedEvent().getState());
				}
			});
			client.start();
			assertThat(client.blockUntilConnected((int) PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
			assertThatExceptionOfType(KeeperException.AuthFailedException.class)
				.isThrownBy(() -> client.checkExists().forPath("/"));
			await().atMost(PATIENCE).untilAsserted(() -> {
				// The ZooKeeper client's own events come in order on its event thread; Curator's
				// CONNECTED comes on the thread of its connection state manager, before or after them.
				assertThat(observed).contains(ConnectionState.CONNECTED)
					.containsSubsequence(KeeperState.SyncConnected, KeeperState.AuthFailed);
				assertThat(client.getZookeeperClient().isConnected()).isFalse();
			});
		}
	}

	@Nested
	class WhenTheServerNeedsACertificate {

		@RegisterExtension
		static final SecureZooKeeperServer needing = SecureZooKeeperServer.create(ClientAuth.NEED);

		@Test
		void admitsAValidCertificate() throws Exception {
			try (Session session = Session.open(needing.secureConnectString(),
					needing.tlsClientConfig(needing.clientKeyStore()))) {
				assertThat(session.zk.whoAmI()).extracting(ClientInfo::getAuthScheme, ClientInfo::getUser)
					.contains(tuple("x509", SecureZooKeeperServer.CLIENT_ID));
			}
		}

		@Test
		void refusesAnExpiredCertificate() throws Exception {
			assertRefused(needing.tlsClientConfig(needing.expiredClientKeyStore()),
					"SSLHandshakeException: Received fatal alert: certificate_unknown");
		}

		@Test
		void refusesAClientWithoutCertificate() throws Exception {
			assertRefused(needing.tlsClientConfig(), "SSLHandshakeException: Received fatal alert: bad_certificate");
		}

		@Test
		void refusesACertificateOfAnotherCa() throws Exception {
			// The client sends no certificate (see admitsACertificateOfAnotherCaWithoutIdentity...).
			assertRefused(needing.tlsClientConfig(needing.foreignClientKeyStore()),
					"SSLHandshakeException: Received fatal alert: bad_certificate");
		}

		private void assertRefused(ZKClientConfig config, String cause) throws Exception {
			Attempt attempt = Attempt.observe(needing.secureConnectString(), config);
			assertThat(attempt.states()).as(attempt.toString()).isEmpty();
			assertThat(attempt.operation()).as(attempt.toString()).isEqualTo(KeeperException.Code.CONNECTIONLOSS);
			assertThat(attempt.causes()).as(attempt.toString())
				.anySatisfy((logged) -> assertThat(logged).contains(cause));
		}

	}

	/** Reading, deleting, listing and creating below are refused to {@code intruder}. */
	private static void assertKeptOut(ZooKeeper intruder, String parent, String child) {
		assertThatExceptionOfType(KeeperException.NoAuthException.class)
			.isThrownBy(() -> intruder.getData(child, false, null));
		assertThatExceptionOfType(KeeperException.NoAuthException.class).isThrownBy(() -> intruder.delete(child, -1));
		assertThatExceptionOfType(KeeperException.NoAuthException.class)
			.isThrownBy(() -> intruder.getChildren(parent, false));
		assertThatExceptionOfType(KeeperException.NoAuthException.class).isThrownBy(
				() -> intruder.create(parent + "/queued", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
						CreateMode.EPHEMERAL_SEQUENTIAL));
	}

	private static ZKClientConfig saslClientConfig(String section) {
		ZKClientConfig config = new ZKClientConfig();
		config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "true");
		config.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, section);
		return config;
	}

	private static String uniquePath(String prefix) {
		return "/" + prefix + "-" + UUID.randomUUID();
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static @Nullable Configuration currentJaasConfiguration() {
		try {
			return Configuration.getConfiguration();
		}
		catch (SecurityException ex) {
			// java.security.auth.login.config names a file that cannot be read: none to restore
			return null;
		}
	}

	/** The client sections of the server's SASL users, and the previous configuration's others. */
	private static final class SaslUsers extends Configuration {

		private final Map<String, AppConfigurationEntry[]> sections = Map.of(
				APP_SECTION, digest(SecureZooKeeperServer.SASL_USER, SecureZooKeeperServer.SASL_PASSWORD),
				INTRUDER_SECTION,
				digest(SecureZooKeeperServer.OTHER_SASL_USER, SecureZooKeeperServer.OTHER_SASL_PASSWORD),
				WRONG_PASSWORD_SECTION, digest(SecureZooKeeperServer.SASL_USER, "wrong-password"));

		private final @Nullable Configuration previous;

		SaslUsers(@Nullable Configuration previous) {
			this.previous = previous;
		}

		@Override
		public AppConfigurationEntry @Nullable [] getAppConfigurationEntry(String name) {
			AppConfigurationEntry[] entries = this.sections.get(name);
			if (entries == null && this.previous != null) {
				return this.previous.getAppConfigurationEntry(name);
			}
			return entries;
		}

		private static AppConfigurationEntry[] digest(String username, String password) {
			return new AppConfigurationEntry[] { new AppConfigurationEntry(DigestLoginModule.class.getName(),
					LoginModuleControlFlag.REQUIRED, Map.of("username", username, "password", password)) };
		}

	}

	/** A connected ZooKeeper client (and authenticated, when SASL is on). */
	private static final class Session implements AutoCloseable {

		final ZooKeeper zk;

		private Session(ZooKeeper zk) {
			this.zk = zk;
		}

		static Session open(String connectString, ZKClientConfig config) throws Exception {
			BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
			// Synchronous calls give up after 10 s rather than wait for a lost connection.
			config.setProperty(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, "10000");
			ZooKeeper zk = new ZooKeeper(connectString, 10_000, (event) -> states.add(event.getState()), config);
			KeeperState awaited = config.isSaslClientEnabled() ? KeeperState.SaslAuthenticated
					: KeeperState.SyncConnected;
			long deadline = System.nanoTime() + PATIENCE.toNanos();
			List<KeeperState> seen = new ArrayList<>();
			KeeperState state;
			while ((state = states.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) != null) {
				seen.add(state);
				if (state == awaited) {
					return new Session(zk);
				}
			}
			zk.close();
			throw new AssertionError("Not " + awaited + " to " + connectString + " within " + PATIENCE + ", saw "
					+ seen + " (see the server's zookeeper.log)");
		}

		@Override
		public void close() throws InterruptedException {
			this.zk.close((int) PATIENCE.toMillis());
		}

	}

	/**
	 * What a client shows during {@link #PATIENCE} after its creation: its connection states, the
	 * result of one {@code exists} issued at once, and what the ZooKeeper client logged at WARN or
	 * above (kept from the build's output).
	 */
	private record Attempt(List<KeeperState> states, KeeperException.@Nullable Code operation, List<String> messages,
			List<String> causes) {

		static Attempt observe(String connectString, ZKClientConfig config) throws Exception {
			Logger logger = (Logger) LoggerFactory.getLogger("org.apache.zookeeper");
			ListAppender<ILoggingEvent> appender = new ListAppender<>();
			appender.start();
			logger.addAppender(appender);
			logger.setAdditive(false);
			List<KeeperState> states = new CopyOnWriteArrayList<>();
			CompletableFuture<KeeperException.Code> exists = new CompletableFuture<>();
			List<KeeperState> statesBeforeClose;
			try {
				long deadline = System.nanoTime() + PATIENCE.toNanos();
				ZooKeeper zk = new ZooKeeper(connectString, 10_000, (event) -> states.add(event.getState()), config);
				try {
					zk.exists("/", false, (rc, path, context, stat) -> exists.complete(KeeperException.Code.get(rc)),
							null);
					// The whole of the patience, also after the answer: a state that comes late counts.
					long left = deadline - System.nanoTime();
					if (left > 0) {
						TimeUnit.NANOSECONDS.sleep(left);
					}
					// without the Closed that closing brings
					statesBeforeClose = List.copyOf(states);
				}
				finally {
					zk.close((int) PATIENCE.toMillis());
				}
			}
			finally {
				logger.detachAppender(appender);
				logger.setAdditive(true);
			}
			KeeperException.Code operation = exists.getNow(null);
			// Each message and cause once: the client logs the same ones at each attempt.
			Set<String> messages = new LinkedHashSet<>();
			Set<String> causes = new LinkedHashSet<>();
			for (ILoggingEvent event : appender.list) {
				if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
					messages.add(event.getLoggerName() + ": " + event.getFormattedMessage());
					for (IThrowableProxy cause = event.getThrowableProxy(); cause != null; cause = cause.getCause()) {
						causes.add(cause.getClassName() + ": " + cause.getMessage());
					}
				}
			}
			return new Attempt(statesBeforeClose, operation, List.copyOf(messages), List.copyOf(causes));
		}

	}

}
