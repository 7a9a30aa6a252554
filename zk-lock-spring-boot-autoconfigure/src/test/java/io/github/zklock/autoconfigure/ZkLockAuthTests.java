package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockAccessDeniedException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@code zk.lock.auth.*} against a real ZooKeeper server: the session authenticates,
 * the root path and every znode below it are creator-only, and a client without the credentials
 * can neither take a held lock away nor queue for it.
 */
@ExtendWith(OutputCaptureExtension.class)
class ZkLockAuthTests {

	private static final String PASSWORD = "pw-4c1e9b7d";

	private static final String CREDENTIALS = "orders-app:" + PASSWORD;

	/** A system property of the server (not a {@code zoo.cfg} one), read when it starts. */
	private static final String CONTAINER_CHECK_INTERVAL = "znode.container.checkIntervalMs";

	private static @Nullable String previousCheckInterval;

	/** Reap empty containers every 100 ms instead of every minute: set just before the server starts. */
	@RegisterExtension
	@Order(1)
	static final BeforeAllCallback fastContainerReaping = (context) -> previousCheckInterval = System
		.setProperty(CONTAINER_CHECK_INTERVAL, "100");

	@RegisterExtension
	@Order(2)
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** A client with no credentials at all. */
	private static CuratorFramework anonymous;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void restoreCheckIntervalAndConnectAnonymously() throws Exception {
		if (previousCheckInterval != null) {
			System.setProperty(CONTAINER_CHECK_INTERVAL, previousCheckInterval);
		}
		else {
			System.clearProperty(CONTAINER_CHECK_INTERVAL);
		}
		anonymous = zooKeeper.newClient();
	}

	@Test
	void clientWithoutCredentialsCanNeitherDeleteAHeldLockNodeNorTakeTheLock() {
		ApplicationContextRunner owner = this.contextRunner.withPropertyValues("zk.lock.root-path=/secured",
				"zk.lock.auth.credentials=" + CREDENTIALS);
		owner.run((a) -> {
			CuratorFramework clientA = a.getBean(CuratorFramework.class);
			LockHandle handle = a.getBean(LockTemplate.class).acquire("/orders/1", LockMode.EXCLUSIVE, Duration.ZERO);
			String lockPath = handle.path();
			List<String> children = clientA.getChildren().forPath(lockPath);
			assertThat(children).hasSize(1);
			String lockNode = lockPath + "/" + children.get(0);

			Outsiders.assertLockedOut(anonymous, lockPath, lockNode);
			assertThatExceptionOfType(KeeperException.NoAuthException.class)
				.isThrownBy(() -> anonymous.delete().deletingChildrenIfNeeded().forPath(lockPath));

			// The same application without the credentials: denied, which is not "busy".
			this.contextRunner.withPropertyValues("zk.lock.root-path=/secured").run((b) -> {
				LockTemplate templateB = b.getBean(LockTemplate.class);
				assertThatExceptionOfType(LockAccessDeniedException.class)
					.isThrownBy(() -> templateB.tryAcquire("/orders/1", LockMode.EXCLUSIVE, Duration.ofMillis(500)))
					.isNotInstanceOf(LockAcquisitionException.class)
					.withMessageContaining("ZooKeeper denied access to /secured/orders/1")
					.withMessageContaining("(NOAUTH)")
					.withMessageNotContaining(PASSWORD)
					.satisfies((ex) -> assertThat(ex.getPath()).startsWith("/secured/orders/1"));
				assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> templateB.execute("/orders/2", (h) -> "ran"))
					.withMessageContaining("denied access");
				// Cold keys whose missing levels it may not create: denied, not "busy", not retried.
				assertThatExceptionOfType(LockAccessDeniedException.class)
					.isThrownBy(() -> templateB.execute("/other/2", (h) -> "ran"))
					.withMessageContaining("denied access");
				assertThatExceptionOfType(LockAccessDeniedException.class)
					.isThrownBy(() -> templateB.execute(LockRequest.permit("/other/3", 2), (h) -> "ran"))
					.withMessageContaining("denied access");
			});

			assertThat(handle.isHeld()).isTrue();
			assertThat(clientA.getChildren().forPath(lockPath)).containsExactlyElementsOf(children);
			assertThat(clientA.checkExists().forPath(lockNode)).isNotNull();
			handle.release();
		});
	}

	@Test
	void clientWithOtherCredentialsIsDeniedAndOneWithTheSameIsNot() {
		this.contextRunner.withPropertyValues("zk.lock.root-path=/shared", "zk.lock.auth.credentials=" + CREDENTIALS)
			.run((a) -> {
				a.getBean(LockTemplate.class).execute("/report", (handle) -> null);
				this.contextRunner
					.withPropertyValues("zk.lock.root-path=/shared", "zk.lock.auth.credentials=intruder:" + PASSWORD)
					.run((other) -> assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> other.getBean(LockTemplate.class).execute("/report", (handle) -> null))
						.isNotInstanceOf(LockAcquisitionException.class)
						.withMessageContaining("denied access"));
				// Another instance of the same application: the same identity, so the same rights.
				this.contextRunner
					.withPropertyValues("zk.lock.root-path=/shared", "zk.lock.auth.credentials=" + CREDENTIALS)
					.run((sameIdentity) -> {
						LockTemplate template = sameIdentity.getBean(LockTemplate.class);
						String path = template.execute("/report", (handle) -> handle.path());
						assertThat(path).isEqualTo("/shared/report");
					});
			});
	}

	@Test
	void otherCredentialsFailTheStartWithFailFastNamingTheRootPath() {
		this.contextRunner.withPropertyValues("zk.lock.root-path=/owned", "zk.lock.auth.credentials=" + CREDENTIALS)
			.run((a) -> {
				assertThat(a).hasNotFailed();
				this.contextRunner
					.withPropertyValues("zk.lock.root-path=/owned", "zk.lock.fail-fast=true",
							"zk.lock.auth.credentials=intruder:" + PASSWORD)
					.run((other) -> {
						assertThat(other).hasFailed();
						assertThat(SecurityFailures.of(other.getStartupFailure(),
								ZooKeeperSecurityException.Reason.ACCESS_DENIED))
							.hasMessageContaining("/owned")
							.hasMessageNotContaining(PASSWORD);
					});
			});
	}

	@Test
	void makesTheRootPathAndEverythingBelowItCreatorOnlyAndItsParentsOpen() {
		this.contextRunner
			.withPropertyValues("zk.lock.root-path=/apps/billing/locks", "zk.lock.auth.credentials=" + CREDENTIALS)
			.run((context) -> {
				CuratorFramework client = context.getBean(CuratorFramework.class);
				context.getBean(LockTemplate.class).execute("/invoices/7", (handle) -> {
					String lockNode = handle.path() + "/" + client.getChildren().forPath(handle.path()).get(0);
					for (String path : List.of("/apps/billing/locks", "/apps/billing/locks/invoices",
							"/apps/billing/locks/invoices/7", lockNode)) {
						assertThat(client.getACL().forPath(path)).as(path).containsExactly(ownerOnly());
					}
					assertThat(anonymous.getACL().forPath("/apps")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
					assertThat(anonymous.getACL().forPath("/apps/billing")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
					return null;
				});
			});
	}

	@Test
	void keepsTheRootPathWhenTheServerReapsTheEmptyLockPathsBelowIt() {
		this.contextRunner.withPropertyValues("zk.lock.root-path=/kept", "zk.lock.auth.credentials=" + CREDENTIALS)
			.run((context) -> {
				// Even exists needs READ permission on a creator-only znode: ask as the owner.
				CuratorFramework client = context.getBean(CuratorFramework.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> client.checkExists().forPath("/kept") != null);
				assertThat(client.getACL().forPath("/kept")).containsExactly(ownerOnly());
				context.getBean(LockTemplate.class).execute("/reaped-when-empty", (handle) -> null);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> client.checkExists().forPath("/kept/reaped-when-empty") == null);
				await().during(Duration.ofSeconds(1))
					.atMost(Duration.ofSeconds(5))
					.until(() -> client.checkExists().forPath("/kept") != null);
				assertThatExceptionOfType(KeeperException.NoAuthException.class)
					.isThrownBy(() -> anonymous.checkExists().forPath("/kept"));
			});
		// Without credentials, Curator's container parents go, the root path with them.
		this.contextRunner.withPropertyValues("zk.lock.root-path=/reaped").run((context) -> {
			context.getBean(LockTemplate.class).execute("/reaped-when-empty", (handle) -> null);
			await().atMost(Duration.ofSeconds(10)).until(() -> anonymous.checkExists().forPath("/reaped") == null);
		});
	}

	@Test
	void protectsTheRootPathBelowTheNamespaceOfACustomizer() {
		this.contextRunner.withUserConfiguration(NamespaceConfiguration.class)
			.withPropertyValues("zk.lock.auth.credentials=" + CREDENTIALS)
			.run((context) -> {
				// Reading an ACL needs READ permission: read them as the owner, without the namespace.
				CuratorFramework owner = context.getBean(CuratorFramework.class).usingNamespace(null);
				context.getBean(LockTemplate.class).execute("/namespaced", (handle) -> {
					assertThat(owner.getACL().forPath("/tenant-a")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
					assertThat(owner.getACL().forPath("/tenant-a/locks")).containsExactly(ownerOnly());
					assertThat(owner.getACL().forPath("/tenant-a/locks/namespaced")).containsExactly(ownerOnly());
					return null;
				});
			});
	}

	@Test
	void keepsTheAclProviderOfACustomizer() {
		this.contextRunner.withUserConfiguration(OpenAclConfiguration.class)
			.withPropertyValues("zk.lock.root-path=/customized-acl", "zk.lock.auth.credentials=" + CREDENTIALS)
			.run((context) -> {
				context.getBean(LockTemplate.class).execute("/open", (handle) -> {
					assertThat(anonymous.getACL().forPath("/customized-acl/open"))
						.isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
					return null;
				});
			});
	}

	@Test
	void leavesAclsOpenWithoutCredentials() {
		this.contextRunner.withPropertyValues("zk.lock.root-path=/unsecured").run((context) -> {
			context.getBean(LockTemplate.class).execute("/open", (handle) -> {
				assertThat(anonymous.getACL().forPath("/unsecured")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
				assertThat(anonymous.getACL().forPath("/unsecured/open")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
				return null;
			});
		});
	}

	@Test
	void neverLogsOrShowsTheCredentials(CapturedOutput output) {
		LoggingSystem loggingSystem = LoggingSystem.get(getClass().getClassLoader());
		loggingSystem.setLogLevel("io.github.zklock", LogLevel.TRACE);
		loggingSystem.setLogLevel("org.apache.curator", LogLevel.INFO);
		loggingSystem.setLogLevel("org.apache.zookeeper", LogLevel.INFO);
		try {
			this.contextRunner.withConfiguration(AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class))
				.withPropertyValues("zk.lock.root-path=/logged", "zk.lock.auth.credentials=" + CREDENTIALS,
						"zk.lock.embedded.enabled=true")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					ZkLockProperties properties = context.getBean(ZkLockProperties.class);
					assertThat(properties.getAuth()).hasToString("Auth[scheme=digest, credentials=******]");
					LockTemplate template = context.getBean(LockTemplate.class);
					template.execute("/logged", (handle) -> handle.toString());
					// Actuator's configprops and env endpoints mask it, also when told to show values.
					SanitizingFunction sanitizer = context.getBean(SanitizingFunction.class);
					for (String key : List.of("zk.lock.auth.credentials", "ZK_LOCK_AUTH_CREDENTIALS")) {
						assertThat(sanitizer.applyUnlessFiltered(new SanitizableData(null, key, CREDENTIALS))
							.getValue()).isEqualTo(SanitizableData.SANITIZED_VALUE);
					}
					assertThat(sanitizer.applyUnlessFiltered(new SanitizableData(null, "zk.lock.root-path", "/logged"))
						.getValue()).isEqualTo("/logged");
				});
		}
		finally {
			loggingSystem.setLogLevel("io.github.zklock", LogLevel.INFO);
			loggingSystem.setLogLevel("org.apache.curator", null);
			loggingSystem.setLogLevel("org.apache.zookeeper", null);
		}
		assertThat(output).contains("Started embedded ZooKeeper").doesNotContain(PASSWORD);
	}

	private static ACL ownerOnly() throws Exception {
		return new ACL(ZooDefs.Perms.ALL,
				new Id("digest", DigestAuthenticationProvider.generateDigest(CREDENTIALS)));
	}

	@Configuration(proxyBeanMethods = false)
	static class NamespaceConfiguration {

		@Bean
		CuratorFrameworkBuilderCustomizer namespaceCustomizer() {
			return (builder) -> builder.namespace("tenant-a");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OpenAclConfiguration {

		@Bean
		CuratorFrameworkBuilderCustomizer openAclCustomizer() {
			return (builder) -> builder.aclProvider(new ACLProvider() {

				@Override
				public List<ACL> getDefaultAcl() {
					return ZooDefs.Ids.OPEN_ACL_UNSAFE;
				}

				@Override
				public List<ACL> getAclForPath(String path) {
					return ZooDefs.Ids.OPEN_ACL_UNSAFE;
				}

			});
		}

	}

}
