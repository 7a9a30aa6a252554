package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.integration.ZkLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With the starter's defaults (a 15 s connection timeout, a 60 s session, three retries from 1 s)
 * and the server stopped, a synchronous request with a 1 s wait answers once its wait has passed,
 * whatever the way in: an annotated method, the template, a {@code java.util.concurrent}
 * {@link Lock} of the template, a lock of the Spring Integration registry; on a key never used and
 * on one used just before the outage. Each answers a {@link LockException} naming ZooKeeper, never
 * "busy". Once the server is back, nothing they sent is left behind and each is granted again.
 * Prints what it measured ({@code WAIT_WHILE_DOWN ...}).
 */
class WaitTimeWhileZooKeeperDownTests {

	private static final Duration WAIT = Duration.ofSeconds(1);

	/** One server for this test, which stops it. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(ZkLockAutoConfiguration.class, ZkLockIntegrationAutoConfiguration.class))
		.withUserConfiguration(Orders.class);

	@Test
	void synchronousRequestsAnswerWithinTheirWaitTimeAndLeaveNothingOnceTheServerIsBack() {
		this.contextRunner.withPropertyValues("zk.lock.connect-string=" + this.zooKeeper.getConnectString())
			.run((context) -> {
				OrderService orders = context.getBean(OrderService.class);
				LockTemplate template = context.getBean(LockTemplate.class);
				ZkLockRegistry integration = context.getBean(ZkLockRegistry.class);
				CuratorFramework client = context.getBean(CuratorFramework.class);
				Map<String, Callable<Boolean>> requests = new LinkedHashMap<>();
				for (String seen : List.of("cached", "new")) {
					requests.put(seen + " @DistributedLock", () -> orders.ship(seen));
					requests.put(seen + " LockTemplate.tryAcquire", () -> template
						.tryAcquire("/template/" + seen, LockMode.EXCLUSIVE, WAIT)
						.map((handle) -> {
							handle.release();
							return true;
						})
						.orElse(false));
					requests.put(seen + " LockTemplate.lock().tryLock", () -> tryLock(template.lock("/juc/" + seen)));
					requests.put(seen + " ZkLockRegistry.obtain().tryLock", () -> tryLock(integration.obtain(seen)));
				}
				requests.forEach((name, request) -> {
					if (name.startsWith("cached")) {
						assertThat(call(request)).as(name + " before the outage").isEqualTo(Boolean.TRUE);
					}
				});
				TestingServer server = this.zooKeeper.getServer();
				server.stop();
				await().atMost(Duration.ofSeconds(10)).until(() -> !client.getZookeeperClient().isConnected());

				List<String> slow = new ArrayList<>();
				requests.forEach((name, request) -> {
					long start = System.nanoTime();
					Object outcome = call(request);
					long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
					System.out.println("WAIT_WHILE_DOWN request='" + name + "' wait_ms=" + WAIT.toMillis()
							+ " answered_after_ms=" + elapsedMs + " outcome=" + outcome.getClass().getSimpleName());
					assertThat(outcome).as(name)
						.isInstanceOf(LockException.class)
						.isNotInstanceOf(LockAcquisitionException.class);
					assertThat(((Throwable) outcome).getMessage()).as(name).contains("ZooKeeper");
					if (elapsedMs >= WAIT.plusMillis(500).toMillis()) {
						slow.add(name + ": " + elapsedMs + " ms");
					}
				});
				assertThat(slow).as("answered more than 500 ms after the wait time").isEmpty();

				server.restart();
				await().atMost(Duration.ofSeconds(30)).until(() -> client.getZookeeperClient().isConnected());
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(client, "/locks")).isEmpty());
				requests.forEach((name, request) -> assertThat(call(request)).as(name + " after the restart")
					.isEqualTo(Boolean.TRUE));
				assertThat(ZooKeeperExtension.ephemeralZnodes(client, "/locks")).isEmpty();
			});
	}

	private static boolean tryLock(Lock lock) throws InterruptedException {
		if (!lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
			return false;
		}
		lock.unlock();
		return true;
	}

	/** The request's answer, or what it threw. */
	private static Object call(Callable<Boolean> request) {
		try {
			return request.call();
		}
		catch (Exception ex) {
			return ex;
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Orders {

		@Bean
		OrderService orderService() {
			return new OrderService();
		}

	}

	static class OrderService {

		@DistributedLock(path = "/orders/#{#order}", waitTime = "1s")
		public boolean ship(String order) {
			return true;
		}

	}

}
