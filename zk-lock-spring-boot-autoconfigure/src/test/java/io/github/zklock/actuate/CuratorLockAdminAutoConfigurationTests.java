package io.github.zklock.actuate;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockHealthContributorAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockMetricsAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLocksEndpointAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator side of the registry as the starter wires it: a {@link CuratorLockAdmin} bean on
 * the auto-configured {@link CuratorLockRegistry}, which the endpoint, the health indicator and the
 * meters use; none of them when the application brings a {@link LockRegistry} of another kind; the
 * application's own admin bean kept. On a real ZooKeeper.
 */
class CuratorLockAdminAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class,
				ZkLockHealthContributorAutoConfiguration.class, ZkLocksEndpointAutoConfiguration.class,
				ZkLockMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"management.endpoints.web.exposure.include=health,zklocks");

	@Test
	void adminDescribesTheAutoConfiguredRegistryForTheEndpointHealthAndMeters() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(CuratorLockAdmin.class)
				.hasSingleBean(ZkLocksEndpoint.class)
				.hasBean("zkLockHealthIndicator")
				.hasSingleBean(ZkLockMetrics.class);
			CuratorLockAdmin admin = context.getBean(CuratorLockAdmin.class);
			assertThat(admin.registry()).isSameAs(context.getBean(CuratorLockRegistry.class));
			LockHandle held = context.getBean(LockTemplate.class).acquire("/admin/held", LockMode.EXCLUSIVE,
					Duration.ZERO);
			try {
				assertThat(admin.heldLockCount()).isOne();
				assertThat(context.getBean(ZkLocksEndpoint.class).locks().held()).singleElement()
					.satisfies((lock) -> assertThat(lock.path()).isEqualTo("/locks/admin/held"));
			}
			finally {
				held.release();
			}
			assertThat(admin.heldLockCount()).isZero();
		});
	}

	@Test
	void registryOfAnotherKindHasNoAdminNorWhatDescribesTheCuratorRegistry() {
		this.contextRunner.withUserConfiguration(OwnRegistryConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(CuratorLockRegistry.class)
				.doesNotHaveBean(CuratorLockAdmin.class)
				.doesNotHaveBean(ZkLocksEndpoint.class)
				.doesNotHaveBean("zkLockHealthIndicator")
				.doesNotHaveBean(ZkLockMetrics.class);
			assertThat(context.getBean(LockTemplate.class).getRegistry())
				.isSameAs(context.getBean(OwnRegistry.class));
		});
	}

	@Test
	void applicationsOwnAdminIsKept() {
		this.contextRunner.withUserConfiguration(OwnAdminConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(CuratorLockAdmin.class).hasSingleBean(ZkLocksEndpoint.class);
			assertThat(context.getBean(CuratorLockAdmin.class)).isSameAs(context.getBean("ownAdmin"));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnRegistryConfiguration {

		@Bean
		OwnRegistry ownRegistry() {
			return new OwnRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnAdminConfiguration {

		@Bean
		CuratorLockAdmin ownAdmin(CuratorLockRegistry registry) {
			return new CuratorLockAdmin(registry);
		}

	}

	/** A backend that is not ZooKeeper's: it never grants. */
	static class OwnRegistry implements LockRegistry {

		@Override
		public Optional<RegistryGrant> tryAcquire(LockTarget target) {
			return Optional.empty();
		}

		@Override
		public String lockPath(String key) {
			return "/own" + key;
		}

	}

}
