package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.apache.curator.RetryPolicy;
import org.apache.curator.ensemble.EnsembleProvider;
import org.apache.curator.ensemble.fixed.FixedEnsembleProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.validation.ObjectError;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.aop.DistributedLockAdvisor;
import io.github.zklock.aop.DistributedLockConfiguration;
import io.github.zklock.aop.DistributedLockMethodValidator;
import io.github.zklock.aop.LockOperation;
import io.github.zklock.aop.LockOperationSource;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.expression.LockPathTemplate;
import io.github.zklock.test.EmbeddedZooKeeper;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;
import io.github.zklock.test.EmbeddedZooKeeperProperties;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ZkLockAutoConfiguration}, against a real ZooKeeper server, with zk-lock-test's
 * {@link EmbeddedZooKeeperAutoConfiguration} present as in an application that has zk-lock-test on
 * its class path (off unless {@code zk.lock.embedded.enabled=true}; its end-to-end use is in
 * {@link EmbeddedZooKeeperModeTests}).
 */
class ZkLockAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Looks at the tree from outside the applications under test. */
	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void observer() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void createsStartedClientRegistryTemplateAndAdvisorByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(CuratorFramework.class)
				.hasSingleBean(CuratorLockRegistry.class)
				.hasSingleBean(LockTemplate.class)
				.hasSingleBean(DistributedLockAdvisor.class)
				.hasSingleBean(LockOperationSource.class)
				.hasSingleBean(DistributedLockMethodValidator.class)
				.doesNotHaveBean(EmbeddedZooKeeper.class);
			CuratorFramework client = context.getBean(CuratorFramework.class);
			assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
			assertThat(client.getZookeeperClient().getCurrentConnectionString())
				.isEqualTo(zooKeeper.getConnectString());
			assertThat(context.getBean(CuratorLockRegistry.class).getRootPath()).isEqualTo("/locks");
		});
	}

	@Test
	void bindsDefaultProperties() {
		this.contextRunner.run((context) -> {
			ZkLockProperties properties = context.getBean(ZkLockProperties.class);
			assertThat(properties.isEnabled()).isTrue();
			assertThat(properties.getRootPath()).isEqualTo("/locks");
			assertThat(properties.getSessionTimeout()).isEqualTo(Duration.ofSeconds(60));
			assertThat(properties.getConnectionTimeout()).isEqualTo(Duration.ofSeconds(15));
			assertThat(properties.getRetry().getBaseSleep()).isEqualTo(Duration.ofSeconds(1));
			assertThat(properties.getRetry().getMaxRetries()).isEqualTo(3);
			assertThat(properties.getRetry().getMaxSleep()).isNull();
			assertThat(properties.getDefaultWaitTime()).isNegative().isEqualTo(LockRequest.WAIT_FOREVER);
			// zk.lock.embedded.enabled is false by default: its auto-configuration binds nothing.
			assertThat(context).doesNotHaveBean(EmbeddedZooKeeperProperties.class)
				.doesNotHaveBean(EmbeddedZooKeeper.class);
			assertThat(context.getBean(LockTemplate.class).getDefaultWaitTime()).isNegative()
				.isEqualTo(LockRequest.WAIT_FOREVER);
			assertThat(context.getBean(CuratorLockRegistry.class).getLocalHandoff()).isEqualTo(LocalHandoff.DEFAULT);
		});
	}

	@Test
	void passesTheLocalHandoffSettingsToTheRegistry() {
		this.contextRunner
			.withPropertyValues("zk.lock.local-handoff.max-grants=4", "zk.lock.local-handoff.max-time=250ms")
			.run((context) -> assertThat(context.getBean(CuratorLockRegistry.class).getLocalHandoff())
				.isEqualTo(new LocalHandoff(true, 4, Duration.ofMillis(250))));
		this.contextRunner.withPropertyValues("zk.lock.local-handoff.enabled=false").run((context) -> {
			LocalHandoff handoff = context.getBean(CuratorLockRegistry.class).getLocalHandoff();
			assertThat(handoff.enabled()).isFalse();
			assertThat(handoff).isEqualTo(LocalHandoff.DISABLED);
		});
	}

	@Test
	void passesDefaultTimeoutsAndRetryPolicyToTheClient() {
		this.contextRunner.withUserConfiguration(BuilderCaptureConfiguration.class).run((context) -> {
			CuratorFrameworkFactory.Builder builder = context.getBean(BuilderCapture.class).builder.get();
			assertThat(builder).isNotNull();
			assertThat(builder.getSessionTimeoutMs()).isEqualTo(60_000);
			assertThat(builder.getConnectionTimeoutMs()).isEqualTo(15_000);
			assertThat(builder.getRetryPolicy()).isInstanceOfSatisfying(ExponentialBackoffRetry.class, (retry) -> {
				assertThat(retry.getBaseSleepTimeMs()).isEqualTo(1000);
				assertThat(retry.getN()).isEqualTo(3);
			});
			CuratorFramework client = context.getBean(CuratorFramework.class);
			assertThat(client.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(15_000);
		});
	}

	@Test
	void locksUnderDefaultRootPath() {
		this.contextRunner.run((context) -> {
			CuratorFramework client = context.getBean(CuratorFramework.class);
			LockTemplate lockTemplate = context.getBean(LockTemplate.class);
			String lockPath = lockTemplate.execute("/defaults/order-1", (handle) -> {
				assertThat(handle.path()).isEqualTo("/locks/defaults/order-1");
				assertThat(client.checkExists().forPath("/locks/defaults/order-1")).isNotNull();
				assertThat(client.getChildren().forPath("/locks/defaults/order-1")).hasSize(1);
				return handle.path();
			});
			assertThat(zk.checkExists().forPath(lockPath)).isNotNull();
			assertThat(zk.getChildren().forPath(lockPath)).as("lock znode deleted on release").isEmpty();
		});
	}

	@Test
	void usesCustomRootPath() {
		this.contextRunner.withPropertyValues("zk.lock.root-path=/custom-root/app").run((context) -> {
			LockTemplate lockTemplate = context.getBean(LockTemplate.class);
			lockTemplate.execute("/root-path-check", (handle) -> {
				assertThat(handle.path()).isEqualTo("/custom-root/app/root-path-check");
				assertThat(zk.getChildren().forPath("/custom-root/app/root-path-check")).hasSize(1);
				return null;
			});
			assertThat(zk.checkExists().forPath("/locks/root-path-check")).isNull();
		});
	}

	@Test
	void passesBoundTimeoutsAndRetryPolicyToTheClient() {
		this.contextRunner.withUserConfiguration(BuilderCaptureConfiguration.class)
			.withPropertyValues("zk.lock.session-timeout=12s", "zk.lock.connection-timeout=3500ms",
					"zk.lock.retry.base-sleep=200ms", "zk.lock.retry.max-retries=7", "zk.lock.retry.max-sleep=300ms")
			.run((context) -> {
				ZkLockProperties properties = context.getBean(ZkLockProperties.class);
				assertThat(properties.getSessionTimeout()).isEqualTo(Duration.ofSeconds(12));
				assertThat(properties.getConnectionTimeout()).isEqualTo(Duration.ofMillis(3500));
				CuratorFrameworkFactory.Builder builder = context.getBean(BuilderCapture.class).builder.get();
				assertThat(builder.getSessionTimeoutMs()).isEqualTo(12_000);
				assertThat(builder.getConnectionTimeoutMs()).isEqualTo(3500);
				CuratorFramework client = context.getBean(CuratorFramework.class);
				assertThat(client.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(3500);
				RetryPolicy retryPolicy = client.getZookeeperClient().getRetryPolicy();
				assertThat(retryPolicy).isInstanceOfSatisfying(ExponentialBackoffRetry.class, (retry) -> {
					assertThat(retry.getBaseSleepTimeMs()).isEqualTo(200);
					assertThat(retry.getN()).isEqualTo(7);
				});
				// Uncapped, the sleep of the 7th retry is 200 ms times a random 1 to 127: the cap shows.
				List<Long> sleeps = new ArrayList<>();
				for (int i = 0; i < 10; i++) {
					assertThat(retryPolicy.allowRetry(6, 0, (time, unit) -> sleeps.add(unit.toMillis(time)))).isTrue();
				}
				assertThat(sleeps).hasSize(10).allSatisfy((sleep) -> assertThat(sleep).isBetween(200L, 300L));
				assertThat(retryPolicy.allowRetry(7, 0, (time, unit) -> sleeps.add(unit.toMillis(time)))).isFalse();
			});
	}

	@Test
	void passesDefaultWaitTimeAndAspectOrder() {
		this.contextRunner.withPropertyValues("zk.lock.default-wait-time=250ms", "zk.lock.aspect-order=42")
			.run((context) -> {
				assertThat(context.getBean(LockTemplate.class).getDefaultWaitTime()).isEqualTo(Duration.ofMillis(250));
				assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42);
			});
	}

	@Test
	void givesTheTemplateTheDefaultLockAtMostFor() {
		this.contextRunner.withPropertyValues("zk.lock.default-lock-at-most-for=30s").run((context) -> {
			LockTemplate template = context.getBean(LockTemplate.class);
			Instant before = Instant.now();
			try (LockHandle defaulted = template.acquire(LockRequest.of("/ceiling/defaulted"))) {
				assertThat(defaulted.deadline()).hasValueSatisfying((deadline) -> assertThat(deadline)
					.isBetween(before.plusSeconds(30).minusMillis(50), Instant.now().plusSeconds(30).plusMillis(50)));
			}
			try (LockHandle none = template
				.acquire(LockRequest.of("/ceiling/opted-out").withLockAtMostFor(LockRequest.NO_CEILING))) {
				assertThat(none.deadline()).isEmpty();
			}
		});
		this.contextRunner.run((context) -> {
			try (LockHandle unset = context.getBean(LockTemplate.class).acquire(LockRequest.of("/ceiling/unset"))) {
				assertThat(unset.deadline()).as("no ceiling unless the property sets one").isEmpty();
			}
		});
	}

	@Test
	void backsOffWhenUserDefinesCuratorFramework() {
		this.contextRunner.withUserConfiguration(UserClientConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(CuratorFramework.class).doesNotHaveBean("zkLockCuratorFramework");
			CuratorFramework userClient = context.getBean("userCuratorFramework", CuratorFramework.class);
			assertThat(context.getBean(CuratorFramework.class)).isSameAs(userClient);
			assertThat(context.getBean(CustomizerCalls.class).calls).as("customizers are for the auto-configured client")
				.isEmpty();
			// The user's client lives in its own namespace: a lock taken through the registry shows there.
			context.getBean(LockTemplate.class).execute("/user-client-check", (handle) -> {
				assertThat(zk.getChildren().forPath("/user-namespace/locks/user-client-check")).hasSize(1);
				return null;
			});
			assertThat(zk.checkExists().forPath("/locks/user-client-check")).isNull();
		});
	}

	@Test
	void appliesBuilderCustomizer() {
		this.contextRunner.withUserConfiguration(NamespaceCustomizerConfiguration.class).run((context) -> {
			CuratorFramework client = context.getBean(CuratorFramework.class);
			assertThat(client.getNamespace()).isEqualTo("customized");
			context.getBean(LockTemplate.class).execute("/customizer-check", (handle) -> {
				assertThat(zk.getChildren().forPath("/customized/locks/customizer-check")).hasSize(1);
				return null;
			});
			assertThat(zk.checkExists().forPath("/locks/customizer-check")).isNull();
		});
	}

	@Test
	void appliesBuilderCustomizersInOrder() {
		this.contextRunner.withUserConfiguration(OrderedCustomizersConfiguration.class).run((context) -> {
			assertThat(context.getBean(CustomizerCalls.class).calls).containsExactly("first", "second", "third");
			// The last customizer wins.
			assertThat(context.getBean(CuratorFramework.class).getNamespace()).isEqualTo("third");
		});
	}

	@Test
	void createsNothingWhenDisabled() {
		for (String embedded : List.of("false", "true")) {
			this.contextRunner.withPropertyValues("zk.lock.enabled=false", "zk.lock.embedded.enabled=" + embedded)
				.run((context) -> {
					assertThat(context).hasNotFailed()
						.doesNotHaveBean(ZkLockProperties.class)
						.doesNotHaveBean(CuratorFramework.class)
						.doesNotHaveBean(CuratorLockRegistry.class)
						.doesNotHaveBean(LockTemplate.class)
						.doesNotHaveBean(DistributedLockAdvisor.class)
						.doesNotHaveBean(LockOperationSource.class)
						.doesNotHaveBean(DistributedLockMethodValidator.class)
						.doesNotHaveBean(EmbeddedZooKeeper.class)
						.doesNotHaveBean(EnsembleProvider.class);
				});
		}
	}

	@Test
	void failsWhenEmbeddedModeLacksCuratorTest() {
		// zk-lock-test is there, without the curator-test it brings (excluded, say).
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.apache.curator.test"))
			.withPropertyValues("zk.lock.embedded.enabled=true")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(causeOfType(context.getStartupFailure(), EmbeddedZooKeeperUnavailableException.class))
					.isNotNull();
				assertThat(messages(context.getStartupFailure())).anySatisfy(
						(message) -> assertThat(message).contains("curator-test"));
			});
	}

	@Test
	void failsWhenEmbeddedModeLacksZkLockTest() {
		// Without zk-lock-test, its auto-configuration is not there either.
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("io.github.zklock.test"))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
					"zk.lock.embedded.enabled=true")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(causeOfType(context.getStartupFailure(), EmbeddedZooKeeperUnavailableException.class))
					.isNotNull();
				assertThat(messages(context.getStartupFailure())).anySatisfy(
						(message) -> assertThat(message).contains("io.github.zklock:zk-lock-test"));
			});
	}

	@Test
	void connectsToTheEnsembleOfAnEnsembleProviderBeanInsteadOfTheConnectString() throws IOException {
		int closedPort = FailFastTests.closedPort();
		// Failing fast: the start would fail if the client tried the connect string.
		this.contextRunner.withUserConfiguration(UserEnsembleConfiguration.class)
			.withPropertyValues("zk.lock.connect-string=127.0.0.1:" + closedPort, "zk.lock.fail-fast=true",
					"zk.lock.connection-timeout=5s")
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(EmbeddedZooKeeper.class);
				CuratorFramework client = context.getBean(CuratorFramework.class);
				assertThat(client.getZookeeperClient().getCurrentConnectionString())
					.isEqualTo(zooKeeper.getConnectString());
				assertThat(client.getZookeeperClient().isConnected()).isTrue();
				String lockPath = context.getBean(LockTemplate.class).execute("/through-ensemble-provider",
						(handle) -> {
							assertThat(zk.getChildren().forPath(handle.path())).hasSize(1);
							return handle.path();
						});
				assertThat(lockPath).isEqualTo("/locks/through-ensemble-provider");
			});
	}

	@Test
	void checksTheConnectStringOnlyWhenTheClientUsesIt() {
		ApplicationContextRunner malformed = this.contextRunner.withPropertyValues("zk.lock.connect-string=host:port");
		malformed.withUserConfiguration(UserEnsembleConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(CuratorFramework.class).getZookeeperClient().getCurrentConnectionString())
				.isEqualTo(zooKeeper.getConnectString());
		});
		malformed.run((context) -> {
			assertThat(context).hasFailed();
			InvalidConfigurationPropertyValueException ex = causeOfType(context.getStartupFailure(),
					InvalidConfigurationPropertyValueException.class);
			assertThat(ex.getName()).isEqualTo("zk.lock.connect-string");
			assertThat(ex.getValue()).isEqualTo("host:port");
			assertThat(ex.getReason()).startsWith("zk.lock.connect-string 'host:port'")
				.endsWith("expected host:port[,host:port...][/chroot]");
		});
	}

	@Test
	void backsOffTheAdviceForTheApplicationsOwnEnableDistributedLocks() {
		ApplicationContextRunner ownAdvice = this.contextRunner
			.withUserConfiguration(UserEnableDistributedLocksConfiguration.class);
		ownAdvice.run((context) -> {
			assertThat(context).hasSingleBean(DistributedLockAdvisor.class)
				.hasSingleBean(DistributedLockConfiguration.class)
				.hasSingleBean(LockOperationSource.class)
				.hasSingleBean(DistributedLockMethodValidator.class)
				.hasSingleBean(LockTemplate.class);
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).as("the application's order")
				.isEqualTo(7);
			assertThat(context.getBean(ValidService.class).lock("7")).isEqualTo("/locks/valid/7");
		});
		ownAdvice.withPropertyValues("zk.lock.aspect-order=42").run((context) -> {
			assertThat(context).hasSingleBean(DistributedLockAdvisor.class);
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42);
			assertThat(context.getBean(ValidService.class).lock("42")).isEqualTo("/locks/valid/42");
		});
	}

	@Test
	void twoApplicationsShareTheServerAndExcludeEachOther() {
		this.contextRunner.run((first) -> this.contextRunner.run((second) -> {
			try (LockHandle held = first.getBean(LockTemplate.class).acquire("/shared", LockMode.EXCLUSIVE,
					Duration.ZERO)) {
				assertThat(held.isHeld()).isTrue();
				assertThat(second.getBean(LockTemplate.class)
					.tryAcquire("/shared", LockMode.EXCLUSIVE, Duration.ofMillis(200))).isEmpty();
			}
			assertThat(second.getBean(LockTemplate.class).tryAcquire("/shared", LockMode.EXCLUSIVE, Duration.ZERO))
				.hasValueSatisfying(LockHandle::release);
		}));
	}

	@ParameterizedTest(name = "zk.lock.default-wait-time={0}")
	@CsvSource({ "-1ms, -1", "0s, 0", "5s, 5000" })
	void givesTheTemplateTheDefaultWaitTime(String value, long millis) {
		this.contextRunner.withPropertyValues("zk.lock.default-wait-time=" + value)
			.run((context) -> assertThat(context.getBean(LockTemplate.class).getDefaultWaitTime())
				.isEqualTo(Duration.ofMillis(millis)));
	}

	@ParameterizedTest(name = "zk.lock.embedded.port={0}")
	@ValueSource(strings = { "65536", "-2" })
	void failsOnBadEmbeddedPortNamingTheProperty(String port) {
		this.contextRunner.withPropertyValues("zk.lock.embedded.enabled=true", "zk.lock.embedded.port=" + port)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context.getStartupFailure())).anySatisfy(
						(message) -> assertThat(message).contains("zk.lock.embedded.port"));
			});
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource({ "zk.lock.session-timeout, -1s", "zk.lock.session-timeout, 0s", "zk.lock.connection-timeout, -5s",
			"zk.lock.retry.base-sleep, 0ms", "zk.lock.retry.max-sleep, -1ms", "zk.lock.session-timeout, soon",
			"zk.lock.session-timeout, 30d", "zk.lock.cache-capacity, 0", "zk.lock.cache-capacity, -3",
			"zk.lock.retry.max-retries, 30", "zk.lock.retry.max-retries, -1", "zk.lock.root-path, /locks/",
			"zk.lock.root-path, /a/../b", "zk.lock.connection-timeout, 500us", "zk.lock.connect-string, ' '",
			"zk.lock.default-wait-time, -5s", "zk.lock.default-wait-time, -2ms",
			"zk.lock.default-lock-at-most-for, -1s", "zk.lock.default-lock-at-most-for, 0s",
			"zk.lock.local-handoff.max-grants, 0",
			"zk.lock.local-handoff.max-time, 0ms", "zk.lock.local-handoff.max-time, -1s" })
	void failsOnBadValueNamingTheProperty(String property, String value) {
		this.contextRunner.withPropertyValues(property + "=" + value).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).anySatisfy(
					(message) -> assertThat(message).contains(property));
		});
	}

	@Test
	void failsOnRootPathWithoutLeadingSlash() {
		this.contextRunner.withPropertyValues("zk.lock.root-path=locks").run((context) -> {
			assertThat(context).hasFailed();
			// Rejected when the properties are bound, before any client is built.
			BindValidationException ex = causeOfType(context.getStartupFailure(), BindValidationException.class);
			assertThat(ex.getValidationErrors().getAllErrors()).singleElement()
				.extracting(ObjectError::getDefaultMessage, as(InstanceOfAssertFactories.STRING))
				.contains("zk.lock.root-path 'locks'")
				.contains("/locks");
		});
	}

	@Test
	void failsOnMalformedPathTemplateNamingTheMethod() {
		this.contextRunner.withBean(MalformedTemplateService.class).run((context) -> {
			assertThat(context).hasFailed();
			InvalidLockPathException ex = causeOfType(context.getStartupFailure(), InvalidLockPathException.class);
			assertThat(ex).hasMessageContaining("MalformedTemplateService.lock").hasMessageContaining("/x/#{#a");
		});
	}

	@Test
	void failsOnAsynchronousReturnTypeItCannotFollowNamingTheMethod() {
		this.contextRunner.withBean(FutureService.class).run((context) -> {
			assertThat(context).hasFailed();
			IllegalStateException ex = causeOfType(context.getStartupFailure(), IllegalStateException.class);
			assertThat(ex).hasMessageContaining("FutureService.lock").hasMessageContaining("java.util.concurrent.Future");
		});
	}

	@Test
	void startsWithACompletableFutureMethodAndHoldsItsLockUntilTheFutureCompletes() {
		this.contextRunner.withBean(AsyncService.class).run((context) -> {
			assertThat(context).hasNotFailed();
			AsyncService service = context.getBean(AsyncService.class);
			assertThat(service.lock().get(10, TimeUnit.SECONDS)).isEqualTo("x");
			assertThat(context.getBean(CuratorLockAdmin.class).heldLockCount()).isZero();
		});
	}

	@Test
	void failsOnIllegalStaticPathNamingTheMethod() {
		this.contextRunner.withBean(IllegalStaticPathService.class).run((context) -> {
			assertThat(context).hasFailed();
			InvalidLockPathException ex = causeOfType(context.getStartupFailure(), InvalidLockPathException.class);
			assertThat(ex).hasMessageContaining("IllegalStaticPathService.lock").hasMessageContaining("/a//b");
		});
	}

	@Test
	void adviceUsesTheApplicationsOwnOperationSource() {
		this.contextRunner.withBean(ValidService.class)
			.withBean(PrefixingOperationSource.class, (Supplier<PrefixingOperationSource>) PrefixingOperationSource::new)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ValidService.class).lock("9")).as("the key resolved by the application's source")
					.isEqualTo("/locks/valid/tenant-9");
			});
	}

	@Test
	void startsWithValidAnnotatedBean() {
		this.contextRunner.withBean(ValidService.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(ValidService.class).lock("42")).isEqualTo("/locks/valid/42");
		});
	}

	private static List<String> messages(Throwable failure) {
		List<String> messages = new ArrayList<>();
		for (Throwable current = failure; current != null; current = current.getCause()) {
			messages.add(String.valueOf(current.getMessage()));
		}
		return messages;
	}

	private static <T extends Throwable> T causeOfType(Throwable failure, Class<T> type) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (type.isInstance(current)) {
				return type.cast(current);
			}
		}
		throw new AssertionError("No " + type.getName() + " in the cause chain of " + failure, failure);
	}

	static class BuilderCapture {

		final AtomicReference<CuratorFrameworkFactory.Builder> builder = new AtomicReference<>();

	}

	@Configuration(proxyBeanMethods = false)
	static class BuilderCaptureConfiguration {

		@Bean
		BuilderCapture builderCapture() {
			return new BuilderCapture();
		}

		@Bean
		CuratorFrameworkBuilderCustomizer capturingCustomizer(BuilderCapture capture) {
			return capture.builder::set;
		}

	}

	static class CustomizerCalls {

		final List<String> calls = new CopyOnWriteArrayList<>();

	}

	@Configuration(proxyBeanMethods = false)
	static class UserClientConfiguration {

		@Bean(destroyMethod = "close")
		CuratorFramework userCuratorFramework() throws InterruptedException {
			return zooKeeper.newClient((builder) -> builder.namespace("user-namespace"));
		}

		@Bean
		CustomizerCalls customizerCalls() {
			return new CustomizerCalls();
		}

		@Bean
		CuratorFrameworkBuilderCustomizer recordingCustomizer(CustomizerCalls calls) {
			return (builder) -> calls.calls.add("called");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NamespaceCustomizerConfiguration {

		@Bean
		CuratorFrameworkBuilderCustomizer namespaceCustomizer() {
			return (builder) -> builder.namespace("customized");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OrderedCustomizersConfiguration {

		@Bean
		CustomizerCalls customizerCalls() {
			return new CustomizerCalls();
		}

		@Bean
		@Order(3)
		CuratorFrameworkBuilderCustomizer thirdCustomizer(CustomizerCalls calls) {
			return (builder) -> {
				calls.calls.add("third");
				builder.namespace("third");
			};
		}

		@Bean
		@Order(1)
		CuratorFrameworkBuilderCustomizer firstCustomizer(CustomizerCalls calls) {
			return (builder) -> {
				calls.calls.add("first");
				builder.namespace("first");
			};
		}

		@Bean
		@Order(2)
		CuratorFrameworkBuilderCustomizer secondCustomizer(CustomizerCalls calls) {
			return (builder) -> {
				calls.calls.add("second");
				builder.namespace("second");
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserEnsembleConfiguration {

		@Bean
		EnsembleProvider userEnsembleProvider() {
			return new FixedEnsembleProvider(zooKeeper.getConnectString());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(order = 7)
	static class UserEnableDistributedLocksConfiguration {

		@Bean
		ValidService validService(CuratorFramework client) {
			return new ValidService(client);
		}

	}

	static class MalformedTemplateService {

		@DistributedLock(path = "/x/#{#a")
		public void lock(String a) {
		}

	}

	static class AsyncService {

		@DistributedLock(path = "/x")
		public CompletableFuture<String> lock() {
			return CompletableFuture.completedFuture("x");
		}

	}

	static class FutureService {

		@DistributedLock(path = "/x")
		public Future<String> lock() {
			return CompletableFuture.completedFuture("x");
		}

	}

	static class IllegalStaticPathService {

		@DistributedLock(path = "/a//b")
		public void lock() {
		}

	}

	/** Resolves every key's last segment below a tenant prefix. */
	static class PrefixingOperationSource extends LockOperationSource {

		PrefixingOperationSource() {
			super(new LockPathExpressionEvaluator(null));
		}

		@Override
		public String resolvePath(LockOperation operation, LockPathTemplate path, @Nullable Object[] args,
				@Nullable Object target) {
			String key = super.resolvePath(operation, path, args, target);
			int last = key.lastIndexOf('/');
			return key.substring(0, last + 1) + "tenant-" + key.substring(last + 1);
		}

	}

	static class ValidService {

		private final CuratorFramework client;

		ValidService(CuratorFramework client) {
			this.client = client;
		}

		@DistributedLock(path = "/valid/#{#id}")
		public String lock(String id) throws Exception {
			for (String child : this.client.getChildren().forPath("/locks/valid")) {
				if (!this.client.getChildren().forPath("/locks/valid/" + child).isEmpty()) {
					return "/locks/valid/" + child;
				}
			}
			return "none";
		}

	}

}
