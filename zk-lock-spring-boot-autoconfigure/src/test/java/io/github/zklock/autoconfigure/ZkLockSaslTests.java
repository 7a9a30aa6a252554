package io.github.zklock.autoconfigure;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZooKeeperSecurityException.Reason;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@code zk.lock.sasl.*} against a real ZooKeeper server in a process of its own
 * ({@link SecureZooKeeperServer}, whose JAAS file knows the DIGEST-MD5 users {@code app} and
 * {@code intruder}): a DIGEST-MD5 login without a JAAS file, over TLS as production would run it,
 * creator-only lock znodes for {@code sasl:app}, another user and an anonymous client locked out,
 * and a wrong password failing the start.
 */
class ZkLockSaslTests {

	@RegisterExtension
	static final SecureZooKeeperServer server = SecureZooKeeperServer.create();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.fail-fast=true", "zk.lock.connection-timeout=4s",
				"zk.lock.connect-string=" + server.secureConnectString(), "zk.lock.ssl.bundle=zk")
		.withPropertyValues(ZkLockTlsTests.jksTrustStore("zk", server.trustStore()));

	@Test
	void saslLoginMakesTheLockZnodesTheUsersAndLocksOutAnotherUserAndAnonymousClients() {
		ApplicationContextRunner app = this.contextRunner.withPropertyValues("zk.lock.root-path=/sasl",
				"zk.lock.sasl.username=" + SecureZooKeeperServer.SASL_USER,
				"zk.lock.sasl.password=" + SecureZooKeeperServer.SASL_PASSWORD);
		app.run((context) -> {
			assertThat(context).hasNotFailed();
			CuratorFramework client = context.getBean(CuratorFramework.class);
			LockHandle handle = context.getBean(LockTemplate.class).acquire("/orders/1", LockMode.EXCLUSIVE,
					Duration.ZERO);
			String lockPath = handle.path();
			String holderZnode = Outsiders.holderZnode(client, handle);
			Id identity = new Id("sasl", SecureZooKeeperServer.SASL_USER);
			assertThat(client.getACL().forPath(holderZnode)).extracting(ACL::getId).containsExactly(identity);

			String intruderSection = ZooKeeperSaslLogins.register(SecureZooKeeperServer.OTHER_SASL_USER,
					SecureZooKeeperServer.OTHER_SASL_PASSWORD);
			ZKClientConfig intruderConfig = server.tlsClientConfig();
			intruderConfig.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, intruderSection);
			try (CuratorFramework intruder = rawClient(intruderConfig);
					CuratorFramework anonymous = rawClient(server.tlsClientConfig())) {
				Outsiders.assertLockedOut(intruder, lockPath, holderZnode);
				Outsiders.assertLockedOut(anonymous, lockPath, holderZnode);
			}
			finally {
				ZooKeeperSaslLogins.unregister(intruderSection);
			}
			// Another application with the same login is granted the lock once it is free.
			app.run((other) -> {
				LockTemplate otherTemplate = other.getBean(LockTemplate.class);
				assertThat(otherTemplate.tryAcquire("/orders/1", LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
				handle.release();
				try (LockHandle taken = otherTemplate.acquire("/orders/1", LockMode.EXCLUSIVE, Duration.ofSeconds(5))) {
					assertThat(taken.isHeld()).isTrue();
				}
			});
		});
	}

	@Test
	void wrongPasswordFailsTheStart() {
		this.contextRunner
			.withPropertyValues("zk.lock.sasl.username=" + SecureZooKeeperServer.SASL_USER,
					"zk.lock.sasl.password=not-" + SecureZooKeeperServer.SASL_PASSWORD)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(SecurityFailures.of(context.getStartupFailure(), Reason.AUTHENTICATION_FAILED))
					.hasMessageNotContaining(SecureZooKeeperServer.SASL_PASSWORD);
			});
	}

	@Test
	void loginContextMissingFromTheJaasConfigurationFailsTheStartNamingIt() {
		this.contextRunner.withPropertyValues("zk.lock.sasl.enabled=true", "zk.lock.sasl.login-context=NoSuchSection")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("no section 'NoSuchSection'")
				.hasMessageContaining("zk.lock.sasl.username"));
	}

	private static CuratorFramework rawClient(ZKClientConfig config) {
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(server.secureConnectString())
			.retryPolicy(new RetryOneTime(100))
			.zkClientConfig(config)
			.build();
		client.start();
		return client;
	}

}
