package io.github.zklock.docs.async;

import java.time.Duration;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The snippets of the guide's chapter on asynchronous and reactive locks run as written, on a
 * real ZooKeeper: the future and the publishers of the annotated service, the template's
 * asynchronous verbs and the reactive operator, skipped when another process holds the key.
 */
class AsyncSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
		.withBean(ReservationService.class);

	@Test
	void annotatedFutureMonoAndFluxRunUnderTheirLocks() {
		this.contextRunner.run((context) -> {
			ReservationService reservations = context.getBean(ReservationService.class);
			reservations.setStock("apple", 10);
			assertThat(reservations.reserve("apple", 3)).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(7);
			assertThat(reservations.take("apple").block(Duration.ofSeconds(10))).isEqualTo(6);
			assertThat(reservations.lastToken("apple")).isPositive();
			List<String> exported = reservations.export("acme").collectList().block(Duration.ofSeconds(10));
			assertThat(exported).containsExactly("acme:apple");
		});
	}

	@Test
	void exportIsEmptyWhileAnotherProcessHoldsTheTenant() throws Exception {
		CuratorFramework other = zooKeeper.newClient();
		try (CuratorLockRegistry otherRegistry = new CuratorLockRegistry(other, "/locks", 100)) {
			LockTemplate otherProcess = new LockTemplate(otherRegistry, Duration.ZERO);
			this.contextRunner.run((context) -> {
				ReservationService reservations = context.getBean(ReservationService.class);
				reservations.setStock("apple", 1);
				try (LockHandle held = otherProcess.acquire("/export/acme", LockMode.EXCLUSIVE, Duration.ZERO)) {
					assertThat(reservations.export("acme").collectList().block(Duration.ofSeconds(10))).isEmpty();
				}
			});
		}
	}

	@Test
	void templateVerbsAndTheReactiveOperatorRunTheirWork() throws Exception {
		CuratorFramework other = zooKeeper.newClient();
		try (CuratorLockRegistry otherRegistry = new CuratorLockRegistry(other, "/locks", 100)) {
			LockTemplate otherProcess = new LockTemplate(otherRegistry, Duration.ZERO);
			this.contextRunner.run((context) -> {
				AsyncUsage usage = new AsyncUsage(context.getBean(LockTemplate.class));
				assertThat(usage.charge()).succeedsWithin(Duration.ofSeconds(10))
					.asString()
					.startsWith("charged with token ");
				assertThat(usage.chargeUnlessBusy()).succeedsWithin(Duration.ofSeconds(10))
					.satisfies((outcome) -> assertThat(outcome.wasExecuted()).isTrue());
				assertThat(usage.chargeReactively().block(Duration.ofSeconds(10))).isEqualTo("charged with token 0");
				try (LockHandle held = otherProcess.acquire("/orders/42", LockMode.EXCLUSIVE, Duration.ZERO)) {
					assertThat(usage.chargeUnlessBusy()).succeedsWithin(Duration.ofSeconds(10))
						.isEqualTo(LockResult.skipped());
				}
			});
		}
	}

}
