package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
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
import org.springframework.validation.FieldError;

import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.shedlock.ZkLockProvider;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.test.ZooKeeperExtension.ephemeralZnodes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ZkLockShedLockAutoConfiguration}: a {@link ZkLockProvider} for ShedLock on the
 * auto-configured {@link LockTemplate}, its key prefix from {@code zk.lock.shedlock.key-prefix}
 * (default, configured, empty; validated when bound), the ephemeral znodes its locks create (a
 * lease below the encoded lock name: ShedLock's locks are non-reentrant), and when it
 * backs off: the application's own {@link LockProvider}, ShedLock or zk-lock-shedlock missing from
 * the class path, zk-lock switched off. Against a real ZooKeeper server. What the provider does
 * with ShedLock's lock times is tested in zk-lock-shedlock.
 */
class ZkLockShedLockAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** Looks at the tree from outside the applications under test. */
	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class, ZkLockShedLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void observer() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void providesAShedLockLockProviderWhoseLocksLiveBelowShedlock() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(ZkLockProvider.class).hasSingleBean(LockProvider.class);
			ZkLockProvider provider = context.getBean(ZkLockProvider.class);
			assertThat(context.getBean(LockProvider.class)).isSameAs(provider);
			assertThat(provider.getKeyPrefix()).isEqualTo("/shedlock");
			assertThat(provider.keyFor("report/daily")).isEqualTo("/shedlock/report%2Fdaily");

			SimpleLock lock = provider.lock(config("report/daily")).orElseThrow();
			try {
				assertThat(ephemeralZnodes(zk, "/locks/shedlock/report%2Fdaily")).singleElement()
					.asString()
					.startsWith("/locks/shedlock/report%2Fdaily/leases/");
				// Granted by the application's registry, and busy for a second attempt.
				assertThat(context.getBean(CuratorLockAdmin.class).heldLockCount()).isOne();
				assertThat(provider.lock(config("report/daily"))).isEmpty();
			}
			finally {
				lock.unlock();
			}
			assertThat(ephemeralZnodes(zk, "/locks/shedlock/report%2Fdaily")).isEmpty();
			assertThat(context.getBean(CuratorLockAdmin.class).heldLockCount()).isZero();
		});
	}

	@Test
	void placesTheLocksBelowTheConfiguredKeyPrefix() {
		this.contextRunner.withPropertyValues("zk.lock.shedlock.key-prefix=/jobs/shedlock").run((context) -> {
			ZkLockProvider provider = context.getBean(ZkLockProvider.class);
			assertThat(provider.getKeyPrefix()).isEqualTo("/jobs/shedlock");
			SimpleLock lock = provider.lock(config("cleanup")).orElseThrow();
			try {
				assertThat(ephemeralZnodes(zk, "/locks/jobs/shedlock")).singleElement()
					.asString()
					.startsWith("/locks/jobs/shedlock/cleanup/");
			}
			finally {
				lock.unlock();
			}
		});
	}

	@Test
	void placesTheLocksDirectlyBelowTheRootPathWithAnEmptyKeyPrefix() {
		this.contextRunner.withPropertyValues("zk.lock.shedlock.key-prefix=", "zk.lock.root-path=/apps/shedlock-direct")
			.run((context) -> {
				ZkLockProvider provider = context.getBean(ZkLockProvider.class);
				assertThat(provider.getKeyPrefix()).isEmpty();
				assertThat(provider.keyFor("cleanup")).isEqualTo("/cleanup");
				SimpleLock lock = provider.lock(config("cleanup")).orElseThrow();
				try {
					assertThat(zk.getChildren().forPath("/apps/shedlock-direct")).containsExactly("cleanup");
					assertThat(ephemeralZnodes(zk, "/apps/shedlock-direct")).singleElement()
						.asString()
						.startsWith("/apps/shedlock-direct/cleanup/");
				}
				finally {
					lock.unlock();
				}
			});
	}

	@Test
	void rejectsAnIllegalKeyPrefixNamingTheProperty() {
		for (String keyPrefix : new String[] { "shedlock", "/shedlock/", "/" }) {
			this.contextRunner.withPropertyValues("zk.lock.shedlock.key-prefix=" + keyPrefix).run((context) -> {
				assertThat(context).hasFailed();
				BindValidationException ex = causeOfType(context.getStartupFailure(), BindValidationException.class);
				assertThat(ex.getValidationErrors().getAllErrors()).singleElement()
					.isInstanceOfSatisfying(FieldError.class, (error) -> {
						assertThat(error.getField()).isEqualTo("shedlock.keyPrefix");
						assertThat(error.getDefaultMessage())
							.startsWith("zk.lock.shedlock.key-prefix '" + keyPrefix + "' is not a legal lock key")
							.contains("/shedlock");
					});
			});
		}
	}

	@Test
	void backsOffForTheApplicationsOwnLockProvider() {
		LockProvider own = (configuration) -> Optional.empty();
		this.contextRunner.withBean("ownLockProvider", LockProvider.class, () -> own).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class).doesNotHaveBean(ZkLockProvider.class);
			assertThat(context.getBean(LockProvider.class)).isSameAs(own);
		});
	}

	@Test
	void backsOffWithoutZkLockShedLockOnTheClassPath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(ZkLockProvider.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(LockProvider.class)
				.doesNotHaveBean("zkShedLockProvider"));
	}

	@Test
	void backsOffWithoutShedLockOnTheClassPath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("net.javacrumbs.shedlock"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean("zkShedLockProvider"));
	}

	@Test
	void backsOffWhenZkLockIsDisabled() {
		this.contextRunner.withPropertyValues("zk.lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockTemplate.class)
				.doesNotHaveBean(LockProvider.class));
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(ZkLockShedLockAutoConfiguration.class.getName());
	}

	@Test
	void runsAfterTheLockAutoConfigurationWhateverTheOrderGiven() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(ZkLockShedLockAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
			.run((context) -> assertThat(context).hasSingleBean(ZkLockProvider.class));
	}

	private static LockConfiguration config(String name) {
		return new LockConfiguration(Instant.now(), name, Duration.ofMinutes(5), Duration.ZERO);
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
