package io.github.zklock.autoconfigure;

import java.net.InetAddress;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.nio.file.Path;
import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleRegistry;
import org.springframework.boot.ssl.jks.JksSslStoreBundle;
import org.springframework.boot.ssl.jks.JksSslStoreDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZooKeeperSecurityException.Reason;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@code zk.lock.ssl.*} against real ZooKeeper servers that speak TLS, each in a process
 * of its own ({@link SecureZooKeeperServer}): one that admits clients without a certificate
 * ({@code ssl.clientAuth=want}) and one that requires one ({@code need}). The client's TLS
 * settings are its own: nothing here sets a {@code zookeeper.*} system property, and the tests
 * check that the library does not either.
 */
class ZkLockTlsTests {

	@RegisterExtension
	static final SecureZooKeeperServer server = SecureZooKeeperServer.create();

	@RegisterExtension
	static final SecureZooKeeperServer strictServer = SecureZooKeeperServer
		.create(SecureZooKeeperServer.ClientAuth.NEED);

	private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(4);

	/** For the starts that must fail: they wait all of it (the probe in its second half). */
	private static final Duration FAILING_CONNECTION_TIMEOUT = Duration.ofSeconds(3);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.fail-fast=true",
				"zk.lock.connection-timeout=" + CONNECTION_TIMEOUT.toMillis() + "ms");

	@Test
	void takesAndReleasesLocksOnATlsOnlyPortWithOnlyABundle() {
		java.util.Set<String> before = System.getProperties().stringPropertyNames();
		this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + server.secureConnectString(), "zk.lock.ssl.bundle=zk",
					"zk.lock.root-path=/tls-only")
			.withPropertyValues(jksTrustStore("zk", server.trustStore()))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CuratorFramework client = context.getBean(CuratorFramework.class);
				ZKClientConfig config = clientConfig(context);
				assertThat(config.getBoolean(ZKClientConfig.SECURE_CLIENT)).isTrue();
				assertThat(config.getProperty("zookeeper.ssl.enabledProtocols")).isEqualTo("TLSv1.3,TLSv1.2");
				LockTemplate template = context.getBean(LockTemplate.class);
				Boolean held = template.execute("/tls/first", LockHandle::isHeld);
				assertThat(held).isTrue();
				try (LockHandle handle = template.acquire("/tls/second", LockMode.WRITE, Duration.ofSeconds(5))) {
					assertThat(handle.isHeld()).isTrue();
				}
				// Without a client certificate the session has no identity: open ACLs, as without TLS.
				assertThat(client.getACL().forPath("/tls-only/tls/first")).extracting(ACL::getId)
					.containsExactly(new Id("world", "anyone"));
			});
		// Nothing JVM-wide: the in-process servers of other test classes set zookeeper.* properties
		// of their own, so the check is that this application added none.
		assertThat(System.getProperties().stringPropertyNames()).filteredOn((name) -> name.startsWith("zookeeper."))
			.allMatch(before::contains);
	}

	/** The guide's snippet (production chapter), from the docs module's sources. */
	@Test
	void guidesTlsSettingsTakeLocksOnATlsOnlyServer() {
		Path snippet = Path.of("../docs/src/main/resources/production/zk-lock-tls.properties").toAbsolutePath();
		assertThat(snippet).exists();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withInitializer(new org.springframework.boot.test.context.ConfigDataApplicationContextInitializer())
			.withPropertyValues("spring.config.import=file:" + snippet, "zk.lock.root-path=/guide",
					"ZK_SERVERS=" + strictServer.secureConnectString(),
					"ZK_TRUSTSTORE=file:" + strictServer.trustStore(),
					"ZK_TRUSTSTORE_PASSWORD=" + SecureZooKeeperServer.STORE_PASSWORD,
					"ZK_KEYSTORE=file:" + strictServer.clientKeyStore(),
					"ZK_KEYSTORE_PASSWORD=" + SecureZooKeeperServer.STORE_PASSWORD)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ZkLockProperties.class).getSsl().getBundle()).isEqualTo("zookeeper");
				LockTemplate template = context.getBean(LockTemplate.class);
				Boolean held = template.execute("/guide/tls", LockHandle::isHeld);
				assertThat(held).isTrue();
			});
	}

	/** A service connection (a {@code ZooKeeperConnectionDetails} bean) brings its own bundle. */
	@Test
	void connectionDetailsBeanSuppliesTheSslBundle() {
		SslBundle bundle = jksStoreBundle(strictServer.clientKeyStore(), strictServer.trustStore());
		ZooKeeperConnectionDetails details = new ZooKeeperConnectionDetails() {

			@Override
			public String getConnectString() {
				return strictServer.secureConnectString();
			}

			@Override
			public SslBundle getSslBundle() {
				return bundle;
			}

		};
		// No zk.lock.ssl.* at all, and the properties' connect string points nowhere.
		this.contextRunner.withBean(ZooKeeperConnectionDetails.class, () -> details)
			.withPropertyValues("zk.lock.connect-string=127.0.0.1:1", "zk.lock.root-path=/details")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CuratorFramework client = context.getBean(CuratorFramework.class);
				Boolean held = context.getBean(LockTemplate.class).execute("/orders/1", LockHandle::isHeld);
				assertThat(held).isTrue();
				assertThat(client.getACL().forPath("/details")).extracting(ACL::getId)
					.containsExactly(new Id("x509", SecureZooKeeperServer.CLIENT_ID));
			});
	}

	@Test
	void mutualTlsMakesTheLockZnodesTheCertificatesAndLocksOutAnotherCertificate() {
		ApplicationContextRunner app = this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + strictServer.secureConnectString(), "zk.lock.root-path=/mtls",
					"zk.lock.ssl.bundle=zk")
			.withPropertyValues(pemBundle("zk", strictServer));
		app.run((context) -> {
			assertThat(context).hasNotFailed();
			CuratorFramework client = context.getBean(CuratorFramework.class);
			LockHandle handle = context.getBean(LockTemplate.class).acquire("/orders/1", LockMode.EXCLUSIVE,
					Duration.ZERO);
			String lockPath = handle.path();
			String holderZnode = Outsiders.holderZnode(client, handle);
			Id identity = new Id("x509", SecureZooKeeperServer.CLIENT_ID);
			assertThat(client.getACL().forPath(holderZnode)).extracting(ACL::getId).containsExactly(identity);
			assertThat(client.getACL().forPath("/mtls")).extracting(ACL::getId).containsExactly(identity);

			try (CuratorFramework outsider = rawClient(strictServer.secureConnectString(),
					strictServer.tlsClientConfig(strictServer.otherClientKeyStore()))) {
				Outsiders.assertLockedOut(outsider, lockPath, holderZnode);
			}
			// Another application with the same certificate is granted the lock once it is free.
			app.withPropertyValues(jksBundle("same", strictServer.clientKeyStore(), strictServer.trustStore()))
				.withPropertyValues("zk.lock.ssl.bundle=same")
				.run((other) -> {
						LockTemplate otherTemplate = other.getBean(LockTemplate.class);
						assertThat(otherTemplate.tryAcquire("/orders/1", LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
						handle.release();
						try (LockHandle taken = otherTemplate.acquire("/orders/1", LockMode.EXCLUSIVE,
								Duration.ofSeconds(5))) {
							assertThat(taken.isHeld()).isTrue();
						}
					});
			assertThat(client.getChildren().forPath(lockPath)).isEmpty();
		});
	}

	@Test
	void plainClientAtATlsPortFailsItsStartNamingTls() {
		failedStart(this.contextRunner.withPropertyValues("zk.lock.connect-string=" + server.secureConnectString()),
				Reason.TLS_REQUIRED, "answers a TLS hello", "zk.lock.ssl.bundle");
	}

	@Test
	void tlsClientAtAPlainPortFailsItsStart() {
		failedStart(this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + server.plainConnectString(), "zk.lock.ssl.bundle=zk")
			.withPropertyValues(jksTrustStore("zk", server.trustStore())), Reason.TLS_NOT_SPOKEN,
				"does not answer a TLS hello", "secureClientPort");
	}

	@Test
	void serverCertificateOfAnUnknownCaFailsTheStart() {
		failedStart(this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + server.secureConnectString(), "zk.lock.ssl.bundle=zk")
			.withPropertyValues(jksTrustStore("zk", server.foreignTrustStore())), Reason.SERVER_CERTIFICATE_REJECTED,
				"is not accepted with the trust material of SSL bundle 'zk'", "trust the CA");
	}

	@Test
	void serverCertificateForAnotherHostNameFailsTheStart() throws Exception {
		// The server's certificate names localhost and 127.0.0.1. This machine's own name, where it
		// resolves to the loopback address (as /etc/hosts often has it), reaches the server by a name
		// the certificate does not give.
		String hostName = InetAddress.getLocalHost().getHostName();
		Assumptions.assumeTrue(!hostName.equals("localhost") && InetAddress.getByName(hostName).isLoopbackAddress(),
				() -> "this machine's name (" + hostName + ") does not resolve to a loopback address");
		String port = server.secureConnectString().substring(server.secureConnectString().lastIndexOf(':') + 1);
		failedStart(this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + hostName + ":" + port, "zk.lock.ssl.bundle=zk")
			.withPropertyValues(jksTrustStore("zk", server.trustStore())), Reason.SERVER_CERTIFICATE_REJECTED,
				hostName, "host name verification");
	}

	@Test
	void noTlsVersionOrCipherSuiteInCommonFailsTheStart() {
		// The server takes TLS 1.3 and 1.2 with GCM or ChaCha20 suites only, not this CBC one.
		failedStart(this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + server.secureConnectString(), "zk.lock.ssl.bundle=zk",
					"spring.ssl.bundle.jks.zk.options.enabled-protocols=TLSv1.2",
					"spring.ssl.bundle.jks.zk.options.ciphers=TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256")
			.withPropertyValues(jksTrustStore("zk", server.trustStore())), Reason.TLS_PARAMETERS_REJECTED,
				"no TLS version or cipher suite in common", "enabled-protocols");
	}

	@Test
	void missingExpiredOrForeignClientCertificateFailsTheStartOnAServerThatRequiresOne() {
		ApplicationContextRunner app = this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + strictServer.secureConnectString(), "zk.lock.ssl.bundle=zk");
		failedStart(app.withPropertyValues(jksTrustStore("zk", strictServer.trustStore())),
				Reason.CLIENT_CERTIFICATE_REJECTED, "ended the handshake", "key store");
		failedStart(app.withPropertyValues(jksBundle("zk", strictServer.expiredClientKeyStore(), strictServer.trustStore())),
				Reason.CLIENT_CERTIFICATE_REJECTED, "ended the handshake", "valid certificate");
		failedStart(app.withPropertyValues(jksBundle("zk", strictServer.foreignClientKeyStore(), strictServer.trustStore())),
				Reason.CLIENT_CERTIFICATE_REJECTED, "ended the handshake", "ssl.trustStore");
	}

	@Test
	void removesItsCopiesOfTheBundleWhenTheContextCloses() {
		Path[] directory = new Path[1];
		withClientCertificate().run((context) -> {
				ZKClientConfig config = clientConfig(context);
				Path keyStore = Path.of(config.getProperty("zookeeper.ssl.keyStore.location"));
				directory[0] = keyStore.getParent();
				assertThat(keyStore).exists();
				assertThat(Files.getPosixFilePermissions(directory[0]))
					.containsExactlyInAnyOrder(java.nio.file.attribute.PosixFilePermission.OWNER_READ,
							java.nio.file.attribute.PosixFilePermission.OWNER_WRITE,
							java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE);
				assertThat(config.getProperty("zookeeper.ssl.keyStore.password")).isNotEqualTo(
						SecureZooKeeperServer.STORE_PASSWORD);
			});
		assertThat(directory[0]).doesNotExist();
	}

	/** A bundle updated at run time (Boot's reload-on-update) is written for the next connection. */
	@Test
	void updatedBundleIsWrittenForTheNextConnection() {
		withClientCertificate().run((context) -> {
				ZKClientConfig config = clientConfig(context);
				Path keyStore = Path.of(config.getProperty("zookeeper.ssl.keyStore.location"));
				String password = config.getProperty("zookeeper.ssl.keyStore.password");
				assertThat(subjectOf(keyStore, password)).isEqualTo(SecureZooKeeperServer.CLIENT_ID);
				context.getBean(SslBundleRegistry.class)
					.updateBundle("zk", jksStoreBundle(server.otherClientKeyStore(), server.trustStore()));
				assertThat(subjectOf(keyStore, password)).isEqualTo(SecureZooKeeperServer.OTHER_CLIENT_ID);
			});
	}

	/** An application on the lenient server with the client certificate, below a root path of its own. */
	private ApplicationContextRunner withClientCertificate() {
		return this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + server.secureConnectString(), "zk.lock.ssl.bundle=zk",
					"zk.lock.root-path=/tls-files")
			.withPropertyValues(jksBundle("zk", server.clientKeyStore(), server.trustStore()));
	}

	private static ZKClientConfig clientConfig(org.springframework.context.ApplicationContext context) throws Exception {
		return context.getBean(CuratorFramework.class).getZookeeperClient().getZooKeeper().getClientConfig();
	}

	private static SslBundle jksStoreBundle(Path keyStore, Path trustStore) {
		return SslBundle.of(new JksSslStoreBundle(
				new JksSslStoreDetails(SecureZooKeeperServer.STORE_TYPE, null, "file:" + keyStore,
						SecureZooKeeperServer.STORE_PASSWORD),
				new JksSslStoreDetails(SecureZooKeeperServer.STORE_TYPE, null, "file:" + trustStore,
						SecureZooKeeperServer.STORE_PASSWORD)));
	}

	private static String subjectOf(Path keyStore, String password) throws Exception {
		KeyStore store = KeyStore.getInstance(SecureZooKeeperServer.STORE_TYPE);
		try (var in = Files.newInputStream(keyStore)) {
			store.load(in, password.toCharArray());
		}
		String alias = java.util.Collections.list(store.aliases()).get(0);
		return ((X509Certificate) store.getCertificate(alias)).getSubjectX500Principal().getName();
	}

	/**
	 * Start an application that must fail, with the reason, and an analysis whose action names the
	 * setting; soon: the client waits for the connection timeout (3 s here), the second half of it
	 * for the probe, then closes. The bound is loose (the context's start on a loaded
	 * machine), but far below what a client that retries until its session timeout (60 s by
	 * default) would take.
	 */
	private static Duration failedStart(ApplicationContextRunner runner, Reason reason, String detail,
			String action) {
		long start = System.nanoTime();
		Duration[] took = new Duration[1];
		runner.withPropertyValues("zk.lock.connection-timeout=" + FAILING_CONNECTION_TIMEOUT.toMillis() + "ms")
			.run((context) -> {
				took[0] = Duration.ofNanos(System.nanoTime() - start);
				assertThat(context).hasFailed();
				assertThat(SecurityFailures.of(context.getStartupFailure(), reason)).hasMessageContaining(detail);
				FailureAnalysis analysis = new ZooKeeperSecurityFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getAction()).contains(action);
			});
		assertThat(took[0]).isLessThan(FAILING_CONNECTION_TIMEOUT.plusSeconds(15));
		return took[0];
	}

	private static CuratorFramework rawClient(String connectString, ZKClientConfig config) {
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.retryPolicy(new RetryOneTime(100))
			.zkClientConfig(config)
			.build();
		client.start();
		return client;
	}

	static String[] jksTrustStore(String name, Path trustStore) {
		return new String[] { "spring.ssl.bundle.jks." + name + ".truststore.location=file:" + trustStore,
				"spring.ssl.bundle.jks." + name + ".truststore.password=" + SecureZooKeeperServer.STORE_PASSWORD,
				"spring.ssl.bundle.jks." + name + ".truststore.type=" + SecureZooKeeperServer.STORE_TYPE };
	}

	static String[] jksBundle(String name, Path keyStore, Path trustStore) {
		String prefix = "spring.ssl.bundle.jks." + name;
		return new String[] { prefix + ".keystore.location=file:" + keyStore,
				prefix + ".keystore.password=" + SecureZooKeeperServer.STORE_PASSWORD,
				prefix + ".keystore.type=" + SecureZooKeeperServer.STORE_TYPE,
				prefix + ".truststore.location=file:" + trustStore,
				prefix + ".truststore.password=" + SecureZooKeeperServer.STORE_PASSWORD,
				prefix + ".truststore.type=" + SecureZooKeeperServer.STORE_TYPE };
	}

	static String[] pemBundle(String name, SecureZooKeeperServer server) {
		String prefix = "spring.ssl.bundle.pem." + name;
		return new String[] { prefix + ".keystore.certificate=file:" + server.clientCertificatePem(),
				prefix + ".keystore.private-key=file:" + server.clientPrivateKeyPem(),
				prefix + ".truststore.certificate=file:" + server.caCertificatePem() };
	}

}
