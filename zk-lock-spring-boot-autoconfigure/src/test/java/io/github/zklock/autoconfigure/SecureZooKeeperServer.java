package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;

/**
 * A real ZooKeeper server (Debian's package, 3.8) that clients reach over TLS, in a process of its
 * own, started and stopped by {@code scripts/secure-zookeeper.sh}: the TLS, x509 and SASL tests'
 * server. Registered on a {@code static} field:
 * <pre class="code">
 * &#64;RegisterExtension
 * static final SecureZooKeeperServer zooKeeper = SecureZooKeeperServer.create();
 * </pre>
 * <p>The server is shared by every test class of the JVM that asks for the same
 * {@link ClientAuth}: it is started before the first such class, on two free loopback ports (TLS
 * and plain), with its files in {@code target/secure-zookeeper/<client-auth>-<pid>}, a directory
 * of this JVM's own (the script's output in {@code target/secure-zookeeper/<client-auth>-<pid>-script.log}),
 * and stopped when the JVM's tests
 * are done. A server takes seconds to start (a JVM of its own) and a class cannot change it: its
 * configuration is fixed, so the tests that share it only share the znode tree, which is empty at
 * each start. Tests use paths of their own and do not stop the server.
 *
 * <p>The TLS material is one set for every server of the build, in {@link #tlsDirectory()}
 * ({@code target/test-tls} at the repository's root): the script generates it at the first start
 * that finds no complete set there (36 keytool commands, in one JVM), under a lock that servers
 * starting at once in two test JVMs share, and every later start uses it (see the script's
 * header): the test CA, {@link #trustStore()}, the server's key store, the client key stores (one
 * per case: {@link #clientKeyStore()}, {@link #otherClientKeyStore()},
 * {@link #expiredClientKeyStore()}, {@link #foreignClientKeyStore()}), the foreign CA's
 * {@link #foreignTrustStore()} and the PEM files. Every store is PKCS12 with the password
 * {@value #STORE_PASSWORD}. The server knows the SASL (DIGEST-MD5) users {@value #SASL_USER} and
 * {@value #OTHER_SASL_USER}.
 *
 * <p>When the script cannot install or run the server here (its exit code 3: not root, no
 * apt-get, no package), each test of the class is skipped with the script's reason (each, as in
 * {@code DatabaseServerExtension}, so that the build's report counts them as skipped); any other
 * failure fails the class. Waits are bounded: the start (an installation included) by
 * {@link #START_TIMEOUT}, the stop by {@link #STOP_TIMEOUT}.
 */
final class SecureZooKeeperServer implements BeforeAllCallback, BeforeEachCallback {

	/** Longest wait for the script to start the server, an installation and the TLS material included. */
	static final Duration START_TIMEOUT = Duration.ofMinutes(10);

	/** The lowest port {@link #freePort()} gives below the ephemeral range. */
	private static final int LOWEST_PORT = 10_000;

	/** Longest wait for the script to stop the server. */
	static final Duration STOP_TIMEOUT = Duration.ofMinutes(2);

	/** The password of every key store and trust store, and of their keys. */
	static final String STORE_PASSWORD = "changeit";

	/** The type of every key store and trust store. */
	static final String STORE_TYPE = "PKCS12";

	/** The x509 id of the session of {@link #clientKeyStore()}: its subject DN, RFC 2253. */
	static final String CLIENT_ID = "CN=zk-lock-app";

	/** The x509 id of the session of {@link #otherClientKeyStore()}. */
	static final String OTHER_CLIENT_ID = "CN=zk-lock-intruder";

	/** A SASL user of the server; its session's id in the scheme {@code sasl}. */
	static final String SASL_USER = "app";

	/** {@link #SASL_USER}'s password. */
	static final String SASL_PASSWORD = "app-secret";

	/** Another SASL user of the server. */
	static final String OTHER_SASL_USER = "intruder";

	/** {@link #OTHER_SASL_USER}'s password. */
	static final String OTHER_SASL_PASSWORD = "intruder-secret";

	/** The script's exit code when the server cannot be installed or run on this machine. */
	static final int UNAVAILABLE = 3;

	private static final String SCRIPT = "secure-zookeeper.sh";

	private static final Namespace NAMESPACE = Namespace.create(SecureZooKeeperServer.class);

	private final ClientAuth clientAuth;

	private @Nullable Started started;

	private @Nullable String unavailable;

	private SecureZooKeeperServer(ClientAuth clientAuth) {
		this.clientAuth = clientAuth;
	}

	/**
	 * A server that asks clients for a certificate and admits those without one
	 * ({@code ssl.clientAuth=want}).
	 * @return the extension
	 */
	static SecureZooKeeperServer create() {
		return new SecureZooKeeperServer(ClientAuth.WANT);
	}

	/**
	 * A server with the given {@code ssl.clientAuth}.
	 * @param clientAuth whether the server asks clients for a certificate and requires one
	 * @return the extension
	 */
	static SecureZooKeeperServer create(ClientAuth clientAuth) {
		return new SecureZooKeeperServer(clientAuth);
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		Path script = findScript();
		// One directory per test JVM: with forkCount > 1 (CI's builds 2 and 3), two JVMs start a
		// server of the same mode at once, and the script stops a server it finds in its directory.
		Path directory = Path.of("target", "secure-zookeeper")
			.toAbsolutePath()
			.resolve(this.clientAuth.value + "-" + ProcessHandle.current().pid());
		// The root context's store closes its values when the JVM's tests are done.
		Object server = context.getRoot()
			.getStore(NAMESPACE)
			.computeIfAbsent(this.clientAuth, (clientAuth) -> start(script, directory), Object.class);
		if (server instanceof Started started) {
			this.started = started;
		}
		else {
			this.unavailable = (String) server;
			System.err.println(context.getDisplayName() + ": skipped, " + this.unavailable);
		}
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		if (this.unavailable != null) {
			Assumptions.abort(this.unavailable);
		}
	}

	/**
	 * The value of {@code ssl.clientAuth} of this server.
	 * @return whether it asks clients for a certificate and requires one
	 */
	ClientAuth clientAuth() {
		return this.clientAuth;
	}

	/**
	 * The connect string of the TLS port.
	 * @return {@code 127.0.0.1:<port>} (the server's certificate names {@code 127.0.0.1} and
	 * {@code localhost}; the server listens on IPv4 loopback only)
	 */
	String secureConnectString() {
		return "127.0.0.1:" + started().securePort;
	}

	/**
	 * The connect string of the plain port.
	 * @return {@code 127.0.0.1:<port>}
	 */
	String plainConnectString() {
		return "127.0.0.1:" + started().plainPort;
	}

	/**
	 * The server's directory: its {@code zoo.cfg}, {@code jaas.conf}, {@code zookeeper.log} and
	 * {@code data/} (its TLS material is in {@link #tlsDirectory()}).
	 * @return an absolute path
	 */
	Path directory() {
		return started().directory;
	}

	/**
	 * The server's log, to read when a test does not understand the server's answer.
	 * @return {@code zookeeper.log} in {@link #directory()}
	 */
	Path log() {
		return directory().resolve("zookeeper.log");
	}

	/**
	 * The test CA's certificate alone, the trust store of the server and of the clients.
	 * @return {@code test-tls/truststore.p12}
	 */
	Path trustStore() {
		return tls("truststore.p12");
	}

	/**
	 * The test CA's key store, its key and certificate (alias {@code ca}).
	 * @return {@code test-tls/ca.p12}
	 */
	Path caKeyStore() {
		return tls("ca.p12");
	}

	/**
	 * The test CA's certificate, PEM.
	 * @return {@code test-tls/ca.pem}
	 */
	Path caCertificatePem() {
		return tls("ca.pem");
	}

	/**
	 * The server's key store: {@code CN=localhost}, SAN {@code localhost} and {@code 127.0.0.1}.
	 * @return {@code test-tls/server.p12} (alias {@code server})
	 */
	Path serverKeyStore() {
		return tls("server.p12");
	}

	/**
	 * The application's key store, {@link #CLIENT_ID}, signed by the test CA.
	 * @return {@code test-tls/client.p12} (alias {@code client})
	 */
	Path clientKeyStore() {
		return tls("client.p12");
	}

	/**
	 * {@link #clientKeyStore()}'s certificate, PEM.
	 * @return {@code test-tls/client.pem}
	 */
	Path clientCertificatePem() {
		return tls("client.pem");
	}

	/**
	 * {@link #clientKeyStore()}'s private key, PEM, unencrypted PKCS#8.
	 * @return {@code test-tls/client-key.pem}
	 */
	Path clientPrivateKeyPem() {
		return tls("client-key.pem");
	}

	/**
	 * Another identity's key store, {@link #OTHER_CLIENT_ID}, signed by the test CA.
	 * @return {@code test-tls/other-client.p12} (alias {@code client})
	 */
	Path otherClientKeyStore() {
		return tls("other-client.p12");
	}

	/**
	 * A key store whose certificate, {@link #CLIENT_ID} signed by the test CA, has expired.
	 * @return {@code test-tls/expired-client.p12} (alias {@code client})
	 */
	Path expiredClientKeyStore() {
		return tls("expired-client.p12");
	}

	/**
	 * The foreign CA's key store, a CA that the server does not trust.
	 * @return {@code test-tls/foreign-ca.p12}
	 */
	Path foreignCaKeyStore() {
		return tls("foreign-ca.p12");
	}

	/**
	 * The foreign CA's certificate, PEM.
	 * @return {@code test-tls/foreign-ca.pem}
	 */
	Path foreignCaCertificatePem() {
		return tls("foreign-ca.pem");
	}

	/**
	 * A key store whose certificate, {@link #CLIENT_ID}, the foreign CA signed.
	 * @return {@code test-tls/foreign-client.p12} (alias {@code client})
	 */
	Path foreignClientKeyStore() {
		return tls("foreign-client.p12");
	}

	/**
	 * The foreign CA's certificate alone: a client trusting it does not trust the server.
	 * @return {@code test-tls/foreign-truststore.p12}
	 */
	Path foreignTrustStore() {
		return tls("foreign-truststore.p12");
	}

	/**
	 * A client configuration for the TLS port that trusts the test CA and has no certificate.
	 * @return a new configuration, see {@link #tlsClientConfig(Path, Path)}
	 */
	ZKClientConfig tlsClientConfig() {
		return tlsClientConfig(null, trustStore());
	}

	/**
	 * A client configuration for the TLS port that trusts the test CA and authenticates with a
	 * key store.
	 * @param keyStore one of this server's key stores
	 * @return a new configuration, see {@link #tlsClientConfig(Path, Path)}
	 */
	ZKClientConfig tlsClientConfig(Path keyStore) {
		return tlsClientConfig(keyStore, trustStore());
	}

	/**
	 * A client configuration of its own (read by the client given it alone, not through JVM-wide
	 * system properties): TLS through the Netty socket, the given stores, hostname verification
	 * (ZooKeeper's default), SASL off.
	 * @param keyStore a PKCS12 key store with the password {@value #STORE_PASSWORD}, {@code null}
	 * for none
	 * @param trustStore a PKCS12 trust store with the password {@value #STORE_PASSWORD}
	 * @return a new configuration
	 */
	static ZKClientConfig tlsClientConfig(@Nullable Path keyStore, Path trustStore) {
		ZKClientConfig config = new ZKClientConfig();
		config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
		config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
		config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
		try (ClientX509Util x509 = new ClientX509Util()) {
			if (keyStore != null) {
				config.setProperty(x509.getSslKeystoreLocationProperty(), keyStore.toString());
				config.setProperty(x509.getSslKeystorePasswdProperty(), STORE_PASSWORD);
				config.setProperty(x509.getSslKeystoreTypeProperty(), STORE_TYPE);
			}
			config.setProperty(x509.getSslTruststoreLocationProperty(), trustStore.toString());
			config.setProperty(x509.getSslTruststorePasswdProperty(), STORE_PASSWORD);
			config.setProperty(x509.getSslTruststoreTypeProperty(), STORE_TYPE);
		}
		return config;
	}

	private Path tls(String file) {
		return started().tls.resolve(file);
	}

	private Started started() {
		if (this.started == null) {
			throw new IllegalStateException(
					"The secure ZooKeeper server is not running: register the extension on a static field");
		}
		return this.started;
	}

	/** The running server, or why it is not available here. */
	private Object start(Path script, Path directory) {
		try {
			int securePort = freePort();
			int plainPort = freePort();
			while (plainPort == securePort) {
				plainPort = freePort();
			}
			Path log = scriptLog(directory);
			Path tls = tlsDirectory();
			int exitCode = runScript(script, log, START_TIMEOUT, "start", directory.toString(),
					Integer.toString(securePort), "--plain-port", Integer.toString(plainPort), "--client-auth",
					this.clientAuth.value, "--tls-dir", tls.toString());
			if (exitCode == UNAVAILABLE) {
				return "secure ZooKeeper server not available: " + lastLine(log);
			}
			if (exitCode != 0) {
				throw new IllegalStateException("The secure ZooKeeper server did not start (exit code " + exitCode
						+ "): " + lastLine(log) + " (see " + log + ")");
			}
			return new Started(script, directory, tls, securePort, plainPort);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static int runScript(Path script, Path log, Duration timeout, String... arguments) throws IOException {
		return runScript(script, log, timeout, Map.of(), arguments);
	}

	/**
	 * Run the script and wait for it.
	 * @param script the script, see {@link #findScript()}
	 * @param log the file its output is appended to
	 * @param timeout the longest wait: then it and its descendants are killed
	 * @param environment variables added to its environment
	 * @param arguments its arguments
	 * @return its exit code
	 * @throws IOException if it cannot be started
	 * @throws IllegalStateException if it took longer than the timeout
	 */
	static int runScript(Path script, Path log, Duration timeout, Map<String, String> environment,
			String... arguments) throws IOException {
		Files.createDirectories(log.getParent());
		List<String> command = new ArrayList<>();
		command.add(script.toString());
		command.addAll(List.of(arguments));
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
		// The server and keytool of this JVM's installation, when it has keytool (a JDK).
		Path javaHome = Path.of(System.getProperty("java.home"));
		if (Files.isExecutable(javaHome.resolve("bin").resolve("keytool"))) {
			builder.environment().put("JAVA_HOME", javaHome.toString());
		}
		builder.environment().putAll(environment);
		Process process = builder.start();
		try {
			if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				process.descendants().forEach(ProcessHandle::destroyForcibly);
				process.destroyForcibly();
				throw new IllegalStateException("scripts/" + SCRIPT + " " + String.join(" ", arguments)
						+ " took longer than " + timeout + " (see " + log + ")");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			process.destroyForcibly();
			throw new IllegalStateException("Interrupted while waiting for scripts/" + SCRIPT, ex);
		}
		return process.exitValue();
	}

	private static Path scriptLog(Path directory) {
		return directory.resolveSibling(directory.getFileName() + "-script.log");
	}

	/**
	 * Where the script keeps the TLS material of every server of the build: {@code target/test-tls}
	 * in the directory above {@code scripts/} (the repository's root, whose {@code ./mvnw clean}
	 * removes it), the directory the demo's server uses too.
	 * @return an absolute path
	 * @throws IllegalStateException if there is no script, see {@link #findScript()}
	 */
	static Path tlsDirectory() {
		return findScript().getParent().getParent().resolve("target").resolve("test-tls");
	}

	/**
	 * {@code scripts/secure-zookeeper.sh} in the working directory or a directory above it.
	 * @return its path
	 * @throws IllegalStateException if there is none
	 */
	static Path findScript() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			Path script = dir.resolve("scripts").resolve(SCRIPT);
			if (Files.isRegularFile(script)) {
				return script;
			}
		}
		throw new IllegalStateException(
				"No scripts/" + SCRIPT + " in " + Path.of("").toAbsolutePath() + " or a directory above it");
	}

	/**
	 * A port of the loopback address that is free now, below the kernel's range of ephemeral ports
	 * ({@code /proc/sys/net/ipv4/ip_local_port_range}): a port from that range (what binding port 0
	 * gives) can be taken by an outgoing connection of a test in a parallel JVM before the server
	 * binds it, and the server's start then fails ("Address already in use": it did so once in a
	 * fresh-clone build). From the range only where the range cannot be read.
	 * @return the port
	 * @throws IOException if no socket can be bound
	 */
	static int freePort() throws IOException {
		int ephemeralStart = ephemeralRangeStart();
		if (ephemeralStart > LOWEST_PORT) {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			for (int attempt = 0; attempt < 100; attempt++) {
				int port = LOWEST_PORT + random.nextInt(ephemeralStart - LOWEST_PORT);
				try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
					return port;
				}
				catch (IOException taken) {
					// Another server's: try another.
				}
			}
		}
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	/** The first port of the kernel's ephemeral range, or 0 if it cannot be read. */
	private static int ephemeralRangeStart() {
		try {
			String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range"), StandardCharsets.UTF_8);
			return Integer.parseInt(range.trim().split("\\s+")[0]);
		}
		catch (IOException | RuntimeException ex) {
			return 0;
		}
	}

	private static String lastLine(Path log) throws IOException {
		List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
		return lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1);
	}

	/** The values of the server's {@code ssl.clientAuth}. */
	enum ClientAuth {

		/** Clients are not asked for a certificate. */
		NONE,

		/** Clients are asked for a certificate; those without one are admitted, unauthenticated. */
		WANT,

		/** Clients without a valid certificate fail the TLS handshake. */
		NEED;

		private final String value = name().toLowerCase(Locale.ROOT);

	}

	/** A server that the script started; the root store closes it when the JVM's tests are done. */
	private static final class Started implements AutoCloseable {

		private final Path script;

		private final Path directory;

		private final Path tls;

		private final int securePort;

		private final int plainPort;

		Started(Path script, Path directory, Path tls, int securePort, int plainPort) {
			this.script = script;
			this.directory = directory;
			this.tls = tls;
			this.securePort = securePort;
			this.plainPort = plainPort;
		}

		@Override
		public void close() throws IOException {
			Path log = scriptLog(this.directory);
			int exitCode = runScript(this.script, log, STOP_TIMEOUT, "stop", this.directory.toString());
			if (exitCode != 0) {
				throw new IllegalStateException("The secure ZooKeeper server did not stop (exit code " + exitCode
						+ "): " + lastLine(log) + " (see " + log + ")");
			}
		}

	}

}
