package io.github.zklock.autoconfigure;

import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.validation.ObjectError;

import io.github.zklock.LockTemplate;
import io.github.zklock.integration.ZkLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ZkLockIntegrationAutoConfiguration}: a {@link ZkLockRegistry} for Spring
 * Integration on the auto-configured {@link LockTemplate}, its key prefix from
 * {@code zk.lock.integration.key-prefix} (validated when bound), and when it backs off: the
 * application's own Spring Integration {@link LockRegistry}, Spring Integration or
 * zk-lock-spring-integration missing from the class path, no {@link LockTemplate}. Against a real
 * ZooKeeper server.
 */
class ZkLockIntegrationAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Looks at the tree from outside the applications under test. */
	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(ZkLockAutoConfiguration.class, ZkLockIntegrationAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void observer() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void providesASpringIntegrationLockRegistryOnTheLockTemplate() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(ZkLockRegistry.class).hasSingleBean(LockRegistry.class);
			ZkLockRegistry locks = context.getBean(ZkLockRegistry.class);
			assertThat(locks.getKeyPrefix()).isEqualTo("/spring-integration");
			Lock lock = locks.obtain("order-1");
			// Equal to the lock of the same key from any registry on the same template.
			assertThat(lock).isInstanceOf(DistributedLock.class)
				.isEqualTo(new ZkLockRegistry(context.getBean(LockTemplate.class)).obtain("order-1"));
			lock.lock();
			try {
				assertThat(zk.getChildren().forPath("/locks/spring-integration/order-1")).hasSize(1);
			}
			finally {
				lock.unlock();
			}
			assertThat(zk.getChildren().forPath("/locks/spring-integration/order-1")).isEmpty();
		});
	}

	@Test
	void placesTheKeysBelowTheConfiguredKeyPrefix() {
		this.contextRunner.withPropertyValues("zk.lock.integration.key-prefix=/orders/aggregator").run((context) -> {
			ZkLockRegistry locks = context.getBean(ZkLockRegistry.class);
			assertThat(locks.getKeyPrefix()).isEqualTo("/orders/aggregator");
			assertThat(locks.keyFor("o/1")).isEqualTo("/orders/aggregator/o%2F1");
			Lock lock = locks.obtain("o-1");
			lock.lock();
			try {
				assertThat(zk.getChildren().forPath("/locks/orders/aggregator/o-1")).hasSize(1);
			}
			finally {
				lock.unlock();
			}
		});
	}

	@Test
	void placesTheKeysDirectlyBelowTheRootPathWithAnEmptyKeyPrefix() {
		this.contextRunner.withPropertyValues("zk.lock.integration.key-prefix=").run((context) -> {
			assertThat(context.getBean(ZkLockRegistry.class).keyFor("o-1")).isEqualTo("/o-1");
		});
	}

	@Test
	void rejectsAnIllegalKeyPrefixNamingTheProperty() {
		this.contextRunner.withPropertyValues("zk.lock.integration.key-prefix=spring-integration/").run((context) -> {
			assertThat(context).hasFailed();
			BindValidationException ex = causeOfType(context.getStartupFailure(), BindValidationException.class);
			assertThat(ex.getValidationErrors().getAllErrors()).singleElement()
				.extracting(ObjectError::getDefaultMessage)
				.asString()
				.contains("zk.lock.integration.key-prefix 'spring-integration/'")
				.contains("/spring-integration");
		});
	}

	@Test
	void backsOffForTheApplicationsOwnSpringIntegrationLockRegistry() {
		this.contextRunner.withBean("userLockRegistry", DefaultLockRegistry.class).run((context) -> {
			assertThat(context).doesNotHaveBean(ZkLockRegistry.class).hasSingleBean(LockTemplate.class);
			assertThat(context.getBean(LockRegistry.class)).isSameAs(context.getBean("userLockRegistry"));
		});
	}

	@Test
	void backsOffWithoutSpringIntegrationOnTheClassPath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.integration"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(ZkLockRegistry.class)
				.doesNotHaveBean("zkIntegrationLockRegistry"));
	}

	@Test
	void backsOffWithoutZkLockSpringIntegrationOnTheClassPath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(ZkLockRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean("zkIntegrationLockRegistry"));
	}

	@Test
	void backsOffWhenZkLockIsDisabled() {
		this.contextRunner.withPropertyValues("zk.lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockTemplate.class)
				.doesNotHaveBean(ZkLockRegistry.class));
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(ZkLockIntegrationAutoConfiguration.class.getName());
	}

	@Test
	void runsAfterTheLockAutoConfigurationWhateverTheOrderGiven() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(ZkLockIntegrationAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
			.run((context) -> assertThat(context).hasSingleBean(ZkLockRegistry.class));
	}

	private static <T extends Throwable> T causeOfType(Throwable failure, Class<T> type) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (type.isInstance(current)) {
				return type.cast(current);
			}
		}
		throw new AssertionError("No " + type.getName() + " in the cause chain of " + failure, failure);
	}

}
