package io.github.zklock.actuate;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockHealthContributorAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Lifecycle and connection states of {@link ZkLockHealthIndicator}, wired by its
 * auto-configuration: it leaves nothing registered on the client once the context is closed, and
 * follows the connection through a server stop (SUSPENDED, then LOST when the session times out)
 * and restart (a new session). A server per test, with 200 ms ticks so that a 4 s session is
 * allowed (at most 20 ticks) and is lost soon after the server stops.
 */
class ZkLockHealthIndicatorTests {

	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension().withTickTime(Duration.ofMillis(200));

	private ApplicationContextRunner contextRunner;

	@BeforeEach
	void contextRunner() {
		// Here, not in a field initializer: the server starts just before each test.
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class,
					ZkLockHealthContributorAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + this.zooKeeper.getConnectString(),
					"zk.lock.session-timeout=4s", "zk.lock.connection-timeout=2s");
	}

	@Test
	void leavesNoConnectionStateListenerOnTheApplicationsClient() throws Exception {
		CuratorFramework client = this.zooKeeper.newClient();
		int before = connectionStateListeners(client);
		// The application's own client, not closed with the context: it is the test's.
		this.contextRunner
			.withBean("userClient", CuratorFramework.class, () -> client,
					(definition) -> definition.setDestroyMethodName(""))
			.run((context) -> {
				assertThat(context.getBean(CuratorFramework.class)).isSameAs(client);
				HealthIndicator indicator = context.getBean("zkLockHealthIndicator", HealthIndicator.class);
				for (int i = 0; i < 3; i++) {
					assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
				}
				// The registry's one and the leadership's, removed when they close; the indicator adds none.
				assertThat(connectionStateListeners(client)).isEqualTo(before + 2);
			});
		assertThat(connectionStateListeners(client)).as("after the context closed").isEqualTo(before);
		assertThat(client.getZookeeperClient().isConnected()).as("the application's client outlives the context")
			.isTrue();
	}

	@Test
	void reportsSuspendedThenLostWhenTheServerStopsAndReconnectedWhenItRestarts() {
		this.contextRunner.run((context) -> {
			HealthIndicator indicator = context.getBean("zkLockHealthIndicator", HealthIndicator.class);
			CuratorFramework client = context.getBean(CuratorFramework.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> client.getZookeeperClient().isConnected());
			await().atMost(Duration.ofSeconds(10)).until(() -> indicator.health().getStatus().equals(Status.UP));
			Health up = indicator.health();
			assertThat(up.getDetails()).containsEntry("state", "CONNECTED").containsKey("sessionId");
			Object firstSession = up.getDetails().get("sessionId");

			this.zooKeeper.getServer().stop();
			await().atMost(Duration.ofSeconds(15))
				.until(() -> "SUSPENDED".equals(indicator.health().getDetails().get("state")));
			assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
			// Curator declares the session lost once the session timeout has passed without a server.
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "LOST".equals(indicator.health().getDetails().get("state")));
			Health lost = indicator.health();
			assertThat(lost.getStatus()).isEqualTo(Status.DOWN);
			assertThat(lost.getDetails()).doesNotContainKey("sessionId");

			this.zooKeeper.getServer().restart();
			await().atMost(Duration.ofSeconds(20)).until(() -> indicator.health().getStatus().equals(Status.UP));
			// UP follows the client's socket; the state detail follows Curator's connection state
			// event, which comes a little later (until then it reads CONNECTED).
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				Health reconnected = indicator.health();
				assertThat(reconnected.getStatus()).isEqualTo(Status.UP);
				assertThat(reconnected.getDetails()).containsEntry("state", "RECONNECTED")
					.containsKey("sessionId")
					.doesNotContainEntry("sessionId", firstSession);
			});
		});
	}

	private static int connectionStateListeners(CuratorFramework client) {
		assertThat(client.getConnectionStateListenable()).isInstanceOf(StandardListenerManager.class);
		return ((StandardListenerManager<?>) client.getConnectionStateListenable()).size();
	}

}
