package io.github.zklock.actuate;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.Objects;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.JsonPath;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.jackson.EndpointJsonMapper;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockHealthContributorAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockMetricsAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLocksEndpointAutoConfiguration;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.HeldLock;
import io.github.zklock.curator.LockParticipant;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Health, the {@code zklocks} endpoint (with the chain length of a grant handed over locally, and
 * the deadline of a grant with a ceiling, also in the endpoint's JSON) and the meters (one tag set
 * for every outcome, {@code handoff} included), wired by their auto-configurations, on a real
 * ZooKeeper: a server per test, since one of them stops it.
 */
class ZkLockActuatorTests {

	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private ApplicationContextRunner contextRunner;

	@BeforeEach
	void contextRunner() {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class,
					ZkLockHealthContributorAutoConfiguration.class, ZkLocksEndpointAutoConfiguration.class,
					ZkLockMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
					ObservationAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + this.zooKeeper.getConnectString(),
					"zk.lock.connection-timeout=2s", "zk.lock.retry.max-retries=0",
					"management.endpoints.web.exposure.include=health,zklocks");
	}

	@Test
	void healthIsUpWithDetailsAndDownWhenTheServerStops() {
		this.contextRunner.run((context) -> {
			HealthIndicator indicator = context.getBean("zkLockHealthIndicator", HealthIndicator.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(CuratorFramework.class).getZookeeperClient().isConnected());
			Health up = indicator.health();
			assertThat(up.getStatus()).isEqualTo(Status.UP);
			assertThat(up.getDetails()).containsEntry("connectString", this.zooKeeper.getConnectString())
				.containsEntry("rootPath", "/locks")
				.containsKeys("state", "sessionId", "heldLocks");

			this.zooKeeper.getServer().stop();
			await().atMost(Duration.ofSeconds(15)).until(() -> indicator.health().getStatus().equals(Status.DOWN));
			// Once Curator notices, the state says why.
			await().atMost(Duration.ofSeconds(15))
				.until(() -> "SUSPENDED".equals(indicator.health().getDetails().get("state")));
			assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
		});
	}

	@Test
	void endpointIsAbsentUnlessExposed() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=health")
			.run((context) -> assertThat(context).doesNotHaveBean(ZkLocksEndpoint.class));
	}

	@Test
	void healthIndicatorCanBeSwitchedOffAndBacksOffWithoutActuator() {
		this.contextRunner.withPropertyValues("management.health.zklock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean("zkLockHealthIndicator"));
		this.contextRunner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("zkLockHealthIndicator"));
	}

	@Test
	void endpointShowsHeldAndWaitingLocksAndParticipantsAcrossClients() {
		this.contextRunner.run((context) -> {
			ZkLocksEndpoint endpoint = context.getBean(ZkLocksEndpoint.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			LockHandle held = template.acquire("/orders/1", LockMode.WRITE, Duration.ZERO);
			long token = held.fencingToken();
			// Another thread of the application queues behind it.
			CompletableFuture<Optional<LockHandle>> waiter = CompletableFuture
				.supplyAsync(() -> template.tryAcquire("/orders/1", LockMode.READ, Duration.ofSeconds(10)));
			await().atMost(Duration.ofSeconds(10)).until(() -> !endpoint.locks().waiting().isEmpty());

			ZkLocksEndpoint.ApplicationLocks locks = endpoint.locks();
			assertThat(locks.held()).singleElement().satisfies((lock) -> {
				assertThat(lock.path()).isEqualTo("/locks/orders/1");
				assertThat(lock.mode()).isEqualTo(LockMode.WRITE);
				assertThat(lock.holder()).isEqualTo(Thread.currentThread().getName());
				assertThat(lock.fencingToken()).isEqualTo(token);
			});
			assertThat(locks.waiting()).singleElement().satisfies((waiting) -> {
				assertThat(waiting.path()).isEqualTo("/locks/orders/1");
				assertThat(waiting.mode()).isEqualTo(LockMode.READ);
			});

			ZkLocksEndpoint.PathParticipants participants = endpoint.participants("orders", "1");
			assertThat(participants.path()).isEqualTo("/locks/orders/1");
			assertThat(participants.participants()).extracting(LockParticipant::kind)
				.containsExactly("WRITE", "READ");
			assertThat(participants.participants().get(0).fencingToken()).isEqualTo(token);

			held.release();
			waiter.get(10, TimeUnit.SECONDS).orElseThrow();
			// The waiter got the lock on its own thread and still holds it: visible from here.
			assertThat(endpoint.participants("orders", "1").participants()).extracting(LockParticipant::kind)
				.containsExactly("READ");
		});
	}

	@Test
	void endpointShowsTheChainLengthOfAGrantHandedOverLocally() {
		this.contextRunner.run((context) -> {
			ZkLocksEndpoint endpoint = context.getBean(ZkLocksEndpoint.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			LockHandle first = template.acquire("/orders/2", LockMode.EXCLUSIVE, Duration.ZERO);
			long token = first.fencingToken();
			HeldLock firstGrant = endpoint.locks().held().get(0);
			assertThat(firstGrant.chainLength()).isOne();

			// Another thread of the application waits for the key; it is handed the znode.
			CompletableFuture<LockHandle> second = new CompletableFuture<>();
			CountDownLatch done = new CountDownLatch(1);
			Thread secondThread = new Thread(() -> {
				try {
					LockHandle handle = template.acquire("/orders/2", LockMode.EXCLUSIVE, Duration.ofSeconds(10));
					second.complete(handle);
					try {
						done.await(10, TimeUnit.SECONDS);
					}
					finally {
						handle.release();
					}
				}
				catch (Throwable ex) {
					second.completeExceptionally(ex);
				}
			}, "second-in-chain");
			secondThread.start();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> endpoint.locks().waiting().stream()
					.anyMatch((waiting) -> waiting.waiter().equals("second-in-chain"))
						&& secondThread.getState() != Thread.State.RUNNABLE);
			first.release();
			LockHandle ridden = second.get(10, TimeUnit.SECONDS);
			try {
				// Handed over locally: the second grant of the first one's znode, with its token.
				assertThat(ridden.fencingToken()).isEqualTo(token);
				assertThat(endpoint.locks().held()).singleElement().satisfies((lock) -> {
					assertThat(lock.holder()).isEqualTo("second-in-chain");
					assertThat(lock.chainLength()).isEqualTo(2);
					assertThat(lock.node()).isEqualTo(firstGrant.node());
					assertThat(lock.fencingToken()).isEqualTo(token);
				});
			}
			finally {
				done.countDown();
				secondThread.join(10_000);
			}
			assertThat(meters.get("zk.lock.acquire").tags("handoff", "none").timer().count()).isOne();
			assertThat(meters.get("zk.lock.acquire").tags("handoff", "local").timer().count()).isOne();
		});
	}

	@Test
	void endpointShowsTheDeadlineOfAGrantWithACeilingInItsJsonAndNoneWithout() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(JacksonEndpointAutoConfiguration.class))
			.run((context) -> {
				ZkLocksEndpoint endpoint = context.getBean(ZkLocksEndpoint.class);
				LockTemplate template = context.getBean(LockTemplate.class);
				try (LockHandle capped = template
					.acquire(LockRequest.of("/orders/capped").withLockAtMostFor(Duration.ofMinutes(5)));
						LockHandle uncapped = template.acquire(LockRequest.of("/orders/uncapped"))) {
					Instant deadline = capped.deadline().orElseThrow();
					assertThat(endpoint.locks().held()).extracting(HeldLock::path, HeldLock::deadline)
						.containsExactlyInAnyOrder(tuple("/locks/orders/capped", deadline),
								tuple("/locks/orders/uncapped", null));

					// As the web endpoint answers: Boot's endpoint mapper, which leaves nulls out.
					String json = context.getBean(EndpointJsonMapper.class).get().writeValueAsString(endpoint.locks());
					List<Object> cappedDeadline = JsonPath.read(json,
							"$.held[?(@.path == '/locks/orders/capped')].deadline");
					assertThat(cappedDeadline).singleElement()
						.isInstanceOfSatisfying(String.class, (value) -> assertThat(Instant.parse(value)).isEqualTo(deadline));
					List<Map<String, Object>> uncappedLock = JsonPath.read(json,
							"$.held[?(@.path == '/locks/orders/uncapped')]");
					assertThat(uncappedLock).singleElement()
						.satisfies((lock) -> assertThat(lock).containsEntry("mode", "EXCLUSIVE").doesNotContainKey("deadline"));
				}
			});
	}

	@Test
	void timersAreTaggedWithTheTemplateNeverTheResolvedPath() {
		this.contextRunner.withUserConfiguration(Metered.class).run((context) -> {
			MeteredService metered = context.getBean(MeteredService.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			metered.work("secret-customer-42");
			Timer acquired = meters.get("zk.lock.acquire")
				.tags("name", "/metered/#{#key}", "mode", "EXCLUSIVE", "outcome", "acquired", "handoff", "none")
				.timer();
			assertThat(acquired.count()).isOne();
			assertThat(meters.get("zk.lock.held").tags("name", "/metered/#{#key}").timer().count()).isOne();

			CuratorLockRegistry other = otherProcess();
			LockHandle busy = other
				.tryAcquire(new LockTarget("/metered/secret-customer-42", LockMode.EXCLUSIVE, true, 0, Duration.ZERO))
				.orElseThrow();
			try {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> metered.work("secret-customer-42"));
			}
			finally {
				busy.release();
			}
			assertThat(meters.get("zk.lock.acquire").tags("outcome", "timeout", "handoff", "none").timer().count())
				.isOne();
			// One tag set for every outcome: Prometheus, for one, needs it.
			List<List<String>> tagKeys = meters.find("zk.lock.acquire")
				.timers()
				.stream()
				.map((timer) -> timer.getId().getTags().stream().map(Tag::getKey).sorted().toList())
				.distinct()
				.toList();
			assertThat(tagKeys).singleElement().asList().contains("name", "mode", "outcome", "handoff");
			assertThat(meters.getMeters()).allSatisfy((meter) -> assertThat(meter.getId().getTags())
				.noneMatch((tag) -> tag.getValue().contains("secret-customer-42")));
			assertThat(meters.get("zk.lock.active").gauge().value()).isZero();
		});
	}

	@Test
	void requestsNamedAfterKeysFromDataMakeMetersForAtMostTheConfiguredNumberOfNames() {
		this.contextRunner.withPropertyValues("zk.lock.metrics.max-names=3").run((context) -> {
			LockTemplate locks = context.getBean(LockTemplate.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			AtomicInteger ran = new AtomicInteger();
			for (int order = 0; order < 10; order++) {
				// Named after its key, as LockRequest.of(key) is.
				locks.execute("/orders/" + order, (handle) -> ran.incrementAndGet());
			}
			assertThat(ran).hasValue(10);
			List<String> names = meters.getMeters()
				.stream()
				.filter((meter) -> meter.getId().getName().startsWith("zk.lock."))
				.map((meter) -> meter.getId().getTag("name"))
				.filter(Objects::nonNull)
				.distinct()
				.toList();
			assertThat(names).hasSize(3).allMatch((name) -> name.startsWith("/orders/"));
			assertThat(meters.get("zk.lock.active").gauge().value()).isZero();
		});
	}

	@Test
	void lostLocksAreCounted() {
		this.contextRunner.withPropertyValues("zk.lock.session-timeout=4s").run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			CuratorFramework client = context.getBean(CuratorFramework.class);
			LockHandle held = template.acquire("/lost", LockMode.EXCLUSIVE, Duration.ZERO);
			assertThat(meters.get("zk.lock.active").gauge().value()).isOne();
			client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> meters.get("zk.lock.lost").tags("mode", "EXCLUSIVE").counter().count() == 1.0);
			held.release();
			assertThat(meters.get("zk.lock.active").gauge().value()).isZero();
		});
	}

	@Test
	void keptLocksAreMeteredAndTheirGrantsTagged() {
		this.contextRunner.withPropertyValues("zk.lock.keep.enabled=true").run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			assertThat(meters.get("zk.lock.kept").gauge().value()).isZero();
			template.execute(LockRequest.of("/kept"), (handle) -> null);
			// Released, the znode stays with the application: the next grant rides it.
			assertThat(meters.get("zk.lock.kept").gauge().value()).isOne();
			template.execute(LockRequest.of("/kept"), (handle) -> null);
			assertThat(meters.get("zk.lock.kept.grants").functionCounter().count()).isOne();
			assertThat(meters.get("zk.lock.acquire").tags("outcome", "acquired", "handoff", "kept").timer().count())
				.isOne();
			assertThat(meters.get("zk.lock.acquire").tags("outcome", "acquired", "handoff", "none").timer().count())
				.isOne();

			// Another participant asks: the kept znode is given up, and counted by cause.
			LockHandle other = otherProcess()
				.tryAcquire(new LockTarget("/kept", LockMode.EXCLUSIVE, true, 0, Duration.ofSeconds(10)))
				.orElseThrow();
			other.release();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> meters.get("zk.lock.kept.given.up").tags("cause", "asked").functionCounter().count() == 1.0);
			assertThat(meters.get("zk.lock.kept").gauge().value()).isZero();
			assertThat(meters.find("zk.lock.kept.given.up").functionCounters()).extracting((meter) -> meter.getId()
				.getTag("cause")).containsExactlyInAnyOrder("asked", "idle", "max-keys", "revoked", "session", "closed");
			assertThat(meters.get("zk.lock.kept.skipped").functionCounter().count()).isZero();
		});
	}

	@Test
	void connectionAndCeilingsAreMetered() {
		this.contextRunner.withPropertyValues("zk.lock.session-timeout=4s").run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> meters.get("zk.lock.connected").gauge().value() == 1.0);
			assertThat(meters.get("zk.lock.ceiling.used").gauge().value()).isZero();

			// A grant with a ceiling: the share of it used grows, then the ceiling ends the grant.
			LockHandle held = template.acquire(LockRequest.of("/ceiling").withLockAtMostFor(Duration.ofSeconds(2)));
			await().atMost(Duration.ofSeconds(10)).until(() -> meters.get("zk.lock.ceiling.used").gauge().value() > 0.25);
			assertThat(meters.get("zk.lock.ceiling.used").gauge().value()).isLessThanOrEqualTo(1.0);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> meters.get("zk.lock.ceiling.ended").functionCounter().count() == 1.0);
			assertThat(meters.get("zk.lock.lost").tags("mode", "EXCLUSIVE").counter().count()).isOne();
			assertThat(meters.get("zk.lock.ceiling.used").gauge().value()).isZero();
			held.release();
			// Released before its ceiling: not counted.
			template.acquire(LockRequest.of("/ceiling").withLockAtMostFor(Duration.ofMinutes(1))).release();
			assertThat(meters.get("zk.lock.ceiling.ended").functionCounter().count()).isOne();

			this.zooKeeper.getServer().stop();
			await().atMost(Duration.ofSeconds(15)).until(() -> meters.get("zk.lock.connected").gauge().value() == 0.0);
		});
	}

	private CuratorLockRegistry otherProcess() throws InterruptedException {
		return new CuratorLockRegistry(this.zooKeeper.newClient(), "/locks", 10);
	}

	@Configuration(proxyBeanMethods = false)
	static class Metered {

		@Bean
		MeteredService meteredService() {
			return new MeteredService();
		}

	}

	static class MeteredService {

		@DistributedLock(path = "/metered/#{#key}", waitTime = "0")
		public void work(String key) {
		}

	}

}
