package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ZooKeeperConnectionDetails} against a real ZooKeeper server: by default it
 * comes from {@code zk.lock.connect-string} and {@code zk.lock.auth.*}; a bean of the
 * application's replaces them (connect string and authentication), and an invalid connect string
 * of its own is reported as the bean's, not as a property.
 */
class ZooKeeperConnectionDetailsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String CREDENTIALS = "details-app:pw-7a2f";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class));

	@Test
	void defaultDetailsAreTheProperties() {
		this.contextRunner
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
					"zk.lock.auth.credentials=" + CREDENTIALS)
			.run((context) -> {
				ZooKeeperConnectionDetails details = context.getBean(ZooKeeperConnectionDetails.class);
				assertThat(details).isInstanceOf(PropertiesZooKeeperConnectionDetails.class);
				assertThat(details.getConnectString()).isEqualTo(zooKeeper.getConnectString());
				assertThat(details.getAuthentication())
					.isEqualTo(new ZooKeeperConnectionDetails.Authentication("digest", CREDENTIALS));
				assertThat(details.getAuthentication().toString()).doesNotContain("pw-7a2f");
			});
		this.contextRunner.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
			.run((context) -> assertThat(context.getBean(ZooKeeperConnectionDetails.class).getAuthentication())
				.isNull());
	}

	@Test
	void detailsBeanReplacesConnectStringAndAuthentication() {
		// The properties point nowhere: only the bean's connect string reaches the server.
		this.contextRunner.withUserConfiguration(DetailsConfiguration.class)
			.withPropertyValues("zk.lock.connect-string=127.0.0.1:1", "zk.lock.root-path=/detailed")
			.run((context) -> {
				assertThat(context.getBeansOfType(ZooKeeperConnectionDetails.class)).hasSize(1);
				LockHandle handle = context.getBean(LockTemplate.class)
					.acquire("/orders/1", LockMode.EXCLUSIVE, Duration.ofSeconds(10));
				CuratorFramework client = context.getBean(CuratorFramework.class);
				String lockNode = handle.path() + "/" + client.getChildren().forPath(handle.path()).get(0);
				// Authenticated with the bean's credentials: the lock znode is the creator's only.
				List<ACL> acl = client.getACL().forPath(lockNode);
				assertThat(acl).singleElement().satisfies((entry) -> {
					assertThat(entry.getId().getScheme()).isEqualTo("digest");
					assertThat(entry.getPerms()).isEqualTo(ZooDefs.Perms.ALL);
				});
				assertThatExceptionOfType(KeeperException.NoAuthException.class)
					.isThrownBy(() -> zooKeeper.newClient().delete().forPath(lockNode));
				handle.release();
			});
	}

	@Test
	void invalidConnectStringOfTheBeanIsReportedAsTheBeans() {
		this.contextRunner.withBean(ZooKeeperConnectionDetails.class, () -> () -> " ")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(IllegalStateException.class)
				.isNotInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("ZooKeeperConnectionDetails"));
	}

	@Configuration(proxyBeanMethods = false)
	static class DetailsConfiguration {

		@Bean
		ZooKeeperConnectionDetails testConnectionDetails() {
			return new ZooKeeperConnectionDetails() {

				@Override
				public String getConnectString() {
					return zooKeeper.getConnectString();
				}

				@Override
				public Authentication getAuthentication() {
					return new Authentication("digest", CREDENTIALS);
				}

			};
		}

	}

}
