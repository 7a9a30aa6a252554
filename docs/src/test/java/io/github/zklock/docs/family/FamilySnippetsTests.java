package io.github.zklock.docs.family;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.ZkLockIntegrationAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The snippets of the guide's chapter on the lock family run as written, on a real ZooKeeper:
 * the multi-lock, the semaphore, the {@code java.util.concurrent} views, the distributed condition
 * and the Spring Integration leader initiator.
 */
class FamilySnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class,
				ZkLockIntegrationAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
		.withBean(TransferService.class)
		.withBean(PartnerGateway.class);

	@Test
	void transferHoldsBothAccountsAndWaitsForEitherBeingHeldElsewhere() throws Exception {
		CuratorFramework other = zooKeeper.newClient();
		try (CuratorLockRegistry otherRegistry = new CuratorLockRegistry(other, "/locks", 100)) {
			LockTemplate otherProcess = new LockTemplate(otherRegistry, Duration.ZERO);
			this.contextRunner.run((context) -> {
				TransferService transfers = context.getBean(TransferService.class);
				transfers.transfer("alice", "bob", 500);
				transfers.transferProgrammatically("bob", "alice", 200);
				assertThat(transfers.balance("alice")).isEqualTo(-300);
				assertThat(transfers.balance("bob")).isEqualTo(300);
				try (LockHandle bob = otherProcess.acquire("/account/bob", LockMode.EXCLUSIVE, Duration.ZERO)) {
					ExecutorService caller = Executors.newSingleThreadExecutor();
					try {
						Future<?> transfer = caller.submit(() -> transfers.transfer("alice", "bob", 1));
						await().atMost(Duration.ofSeconds(10))
							.until(() -> new CuratorLockAdmin(otherRegistry).describeQueue("/account/bob").waiters() == 1);
						assertThat(transfer).as("waits for bob's account").isNotDone();
						bob.release();
						transfer.get(10, TimeUnit.SECONDS);
					}
					finally {
						caller.shutdownNow();
					}
				}
				assertThat(transfers.balance("bob")).isEqualTo(301);
			});
		}
	}

	@Test
	void semaphoreLetsThreeCallsInAtOnce() {
		this.contextRunner.run((context) -> {
			PartnerGateway gateway = context.getBean(PartnerGateway.class);
			ExecutorService callers = Executors.newFixedThreadPool(6);
			try {
				List<Future<String>> quotes = new ArrayList<>();
				for (int i = 0; i < 12; i++) {
					String order = "order-" + i;
					quotes.add(callers.submit(() -> gateway.quote("acme", order)));
				}
				for (Future<String> quote : quotes) {
					assertThat(quote.get(30, TimeUnit.SECONDS)).startsWith("acme:order-");
				}
			}
			finally {
				callers.shutdownNow();
			}
			assertThat(gateway.mostInFlight()).isBetween(1, 3);
			assertThat(gateway.export()).isPositive();
		});
	}

	@Test
	void concurrentViewsLockAndReadTheirKeys() {
		this.contextRunner.run((context) -> {
			ConcurrentViews views = new ConcurrentViews(context.getBean(LockTemplate.class));
			assertThat(views.increment()).isEqualTo(1);
			assertThat(views.increment()).isEqualTo(2);
			assertThat(views.read()).isEqualTo(2);
		});
	}

	/**
	 * Two instances share one quota of one export: the second waits on the condition until the
	 * first gives its place back, and a wait that runs out returns {@code false}.
	 */
	@Test
	void exportQuotaWaitsForAPlaceFreedByAnotherInstance() throws Exception {
		AtomicInteger count = new AtomicInteger();
		ExportQuota.RunningExports running = new ExportQuota.RunningExports() {

			@Override
			public int count() {
				return count.get();
			}

			@Override
			public void set(int value) {
				count.set(value);
			}

		};
		CuratorFramework other = zooKeeper.newClient();
		try (CuratorLockRegistry otherRegistry = new CuratorLockRegistry(other, "/locks", 100)) {
			ExportQuota otherInstance = new ExportQuota(new LockTemplate(otherRegistry, Duration.ofSeconds(10)),
					running, 1);
			this.contextRunner.run((context) -> {
				ExportQuota quota = new ExportQuota(context.getBean(LockTemplate.class), running, 1);
				assertThat(quota.take(Duration.ZERO)).isTrue();
				assertThat(otherInstance.take(Duration.ofMillis(200))).isFalse();
				ExecutorService caller = Executors.newSingleThreadExecutor();
				try {
					Future<Boolean> waiting = caller.submit(() -> otherInstance.take(Duration.ofSeconds(10)));
					await().atMost(Duration.ofSeconds(10))
						.until(() -> other.checkExists().forPath("/locks/quota/exports/condition") != null
								&& !other.getChildren().forPath("/locks/quota/exports/condition").isEmpty());
					assertThat(waiting).isNotDone();
					quota.give();
					assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
				}
				finally {
					caller.shutdownNow();
				}
				assertThat(count.get()).isOne();
				otherInstance.give();
				assertThat(count.get()).isZero();
			});
		}
	}

	@Test
	void leaderInitiatorRunsOnTheLockRegistry() {
		this.contextRunner.withUserConfiguration(IntegrationConfiguration.class).run((context) -> {
			LockRegistryLeaderInitiator initiator = context.getBean(LockRegistryLeaderInitiator.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> initiator.getContext().isLeader());
		});
	}

}
