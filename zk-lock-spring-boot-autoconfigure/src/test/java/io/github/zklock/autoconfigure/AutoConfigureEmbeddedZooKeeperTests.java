package io.github.zklock.autoconfigure;

import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import io.github.zklock.LockContext;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;
import io.github.zklock.test.EmbeddedZooKeeper;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link AutoConfigureEmbeddedZooKeeper}: a {@code @SpringBootTest} whose annotated
 * service locks on the in-process server, with no ZooKeeper configured anywhere.
 */
@SpringBootTest(classes = AutoConfigureEmbeddedZooKeeperTests.TestApplication.class,
		properties = "zk.lock.connect-string=no-such-host:2181")
@AutoConfigureEmbeddedZooKeeper
class AutoConfigureEmbeddedZooKeeperTests {

	@Autowired
	private OrderService orders;

	@Autowired
	private EmbeddedZooKeeper embeddedZooKeeper;

	@Autowired
	private CuratorFramework client;

	@Autowired
	private Environment environment;

	@Test
	void locksOnTheEmbeddedServer() throws Exception {
		assertThat(this.environment.getProperty("zk.lock.embedded.enabled")).isEqualTo("true");
		assertThat(this.client.getZookeeperClient().getCurrentConnectionString())
			.isEqualTo(this.embeddedZooKeeper.getConnectString());
		assertThat(this.orders.process("42")).isEqualTo("/locks/orders/42");
		assertThat(this.orders.calls()).isOne();
		assertThat(this.client.checkExists().forPath("/locks/orders/42")).isNotNull();
	}

	@Test
	void leavesTheConfiguredPortAloneByDefault() {
		assertThat(this.environment.getProperty("zk.lock.embedded.port")).isNull();
		assertThat(this.embeddedZooKeeper.getPort()).isPositive();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class })
	static class TestApplication {

		@Bean
		OrderService orderService() {
			return new OrderService();
		}

	}

	static class OrderService {

		private final AtomicInteger calls = new AtomicInteger();

		@DistributedLock(path = "/orders/#{#id}", waitTime = "5000")
		public String process(String id) {
			this.calls.incrementAndGet();
			return LockContext.require().path();
		}

		int calls() {
			return this.calls.get();
		}

	}

}
