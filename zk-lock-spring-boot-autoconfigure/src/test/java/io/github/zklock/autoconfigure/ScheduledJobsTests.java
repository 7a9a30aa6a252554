package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import io.github.zklock.Leadership;
import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LeadershipRevokedEvent;
import io.github.zklock.OnBusy;
import io.github.zklock.actuate.ZkLocksEndpoint;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.autoconfigure.actuate.ZkLockHealthContributorAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockMetricsAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLocksEndpointAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scheduled jobs on three Spring Boot applications (three contexts, three ZooKeeper sessions) on
 * one real ZooKeeper, each firing the same {@code @Scheduled} cron every second: a job under
 * {@code @DistributedLock(onBusy = SKIP, lockAtLeastFor)} and a job under {@code @LeaderOnly}
 * each run exactly once per tick, the skips are observed as {@code skipped} in
 * {@code zk.lock.acquire}; the health details and the {@code zklocks} endpoint name the leader;
 * leadership events are published; and when the leader's session expires, it is told and another
 * application leads within the session timeout plus one second (the figures are printed as a
 * {@code LEADERSHIP} line).
 */
class ScheduledJobsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	private static final String GROUP = "ticks";

	/** The runs of every application: the job, the tick (epoch second) and the participant id. */
	static final Queue<Run> runs = new ConcurrentLinkedQueue<>();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class,
				ZkLockHealthContributorAutoConfiguration.class, ZkLocksEndpointAutoConfiguration.class,
				ZkLockMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				ObservationAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
		.withUserConfiguration(Jobs.class)
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"zk.lock.session-timeout=" + SESSION_TIMEOUT.toMillis() + "ms",
				"management.endpoints.web.exposure.include=health,zklocks");

	@BeforeEach
	void clearRuns() {
		runs.clear();
	}

	@Test
	void eachTickRunsOnExactlyOneApplicationAndTheSkipsAreObserved() {
		runThree((apps) -> {
			await().atMost(Duration.ofSeconds(30)).until(() -> ticks("locked") >= 5 && ticks("leader") >= 4);
			List<Run> snapshot = List.copyOf(runs);
			assertOneRunPerTick(snapshot, "locked");
			assertOneRunPerTick(snapshot, "leader");
			// The leader never changed: every leader-only run was made by one application.
			assertThat(snapshot.stream().filter((run) -> run.job().equals("leader")).map(Run::app).distinct())
				.hasSize(1);

			long lockedRuns = snapshot.stream().filter((run) -> run.job().equals("locked")).count();
			// The skips of the last tick in the snapshot are counted on the other applications'
			// scheduler threads, maybe after it was taken: read the meters until they have caught up.
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				double acquired = 0;
				double skipped = 0;
				for (AssertableApplicationContext app : apps) {
					MeterRegistry meters = app.getBean(MeterRegistry.class);
					acquired += count(meters.find("zk.lock.acquire").tags("name", "/jobs/tick", "outcome", "acquired"));
					skipped += count(meters.find("zk.lock.acquire").tags("name", "/jobs/tick", "outcome", "skipped"));
				}
				assertThat(acquired).isGreaterThanOrEqualTo(lockedRuns);
				// Three applications fire each tick and one runs it: the others skip.
				assertThat(skipped).isGreaterThanOrEqualTo(lockedRuns);
			});
		});
	}

	@Test
	void healthEndpointAndEventsNameTheLeader() {
		runThree((apps) -> {
			AssertableApplicationContext leader = awaitOneLeader(apps);
			String leaderId = leader.getBean(Leadership.class).getParticipantId();
			for (AssertableApplicationContext app : apps) {
				boolean self = app == leader;
				Health health = app.getBean("zkLockHealthIndicator", HealthIndicator.class).health();
				assertThat(health.getDetails()).extractingByKey("leadership")
					.isEqualTo(Map.of(GROUP, Map.of("leader", leaderId, "self", self)));
				assertThat(app.getBean(ZkLocksEndpoint.class).locks().leadership())
					.containsExactly(new ZkLocksEndpoint.GroupLeader(GROUP, leaderId, self));
				// The event follows the leadership flag (published after it is set), so wait for it.
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(app.getBean(LeadershipEvents.class).granted).hasSize(self ? 1 : 0));
			}
			assertThat(leader.getBean(LeadershipEvents.class).granted.get(0))
				.isEqualTo(new LeadershipGrantedEvent(GROUP, leaderId));
		});
	}

	@Test
	void whenTheLeadersSessionExpiresItIsToldAndAnotherApplicationLeadsWithinTheSessionTimeout() {
		runThree((apps) -> {
			AssertableApplicationContext leader = awaitOneLeader(apps);
			LeadershipEvents told = leader.getBean(LeadershipEvents.class);
			Duration bound = SESSION_TIMEOUT.plusSeconds(1);
			Instant expired = Instant.now();
			zooKeeper.expireSession(leader.getBean(CuratorFramework.class));

			AssertableApplicationContext next = await().atMost(bound)
				.pollInterval(Duration.ofMillis(10))
				.until(() -> apps.stream()
					.filter((app) -> app != leader && app.getBean(Leadership.class).isLeader(GROUP))
					.findFirst()
					.orElse(null), (found) -> found != null);
			Instant nextLeads = Instant.now();
			await().atMost(bound).until(() -> !told.revoked.isEmpty());
			assertThat(leader.getBean(Leadership.class).isLeader(GROUP)).isFalse();
			System.out.println("LEADERSHIP handover=expiry-3-applications old_told_ms="
					+ Duration.between(expired, told.revokedAt.get(0)).toMillis() + " new_leader_ms="
					+ Duration.between(expired, nextLeads).toMillis() + " session_timeout_ms="
					+ SESSION_TIMEOUT.toMillis());
			await().atMost(bound)
				.untilAsserted(() -> assertThat(next.getBean(LeadershipEvents.class).granted).hasSize(1));

			// The old leader rejoins with its new session, behind the others: still exactly one leader.
			await().atMost(bound).until(() -> leader.getBean(Leadership.class).getGroups().contains(GROUP)
					&& leaders(apps) == 1);
			assertThat(leader.getBean(Leadership.class).isLeader(GROUP)).isFalse();
			// The new leader runs the leader-only job, and no tick ran on two applications, except one
			// that fired while the old leader had not heard of its expiry yet: the server closes the
			// session and grants the next leader before the old client reads the close (tens of ms
			// with the NIO socket, see SessionExpiryTests), so such a tick may run on both.
			String nextId = next.getBean(Leadership.class).getParticipantId();
			long raceFrom = expired.getEpochSecond();
			long raceTo = told.revokedAt.get(0).getEpochSecond();
			await().atMost(Duration.ofSeconds(5))
				.until(() -> runs.stream()
					.anyMatch((run) -> run.job().equals("leader") && run.app().equals(nextId) && run.tick() > raceTo));
			assertOneRunPerTick(runs.stream().filter((run) -> run.tick() < raceFrom || run.tick() > raceTo).toList(),
					"leader");
		});
	}

	private void runThree(ThreeApplications test) {
		this.contextRunner.withPropertyValues("zk.lock.leadership.participant-id=app-1")
			.run((first) -> this.contextRunner.withPropertyValues("zk.lock.leadership.participant-id=app-2")
				.run((second) -> this.contextRunner.withPropertyValues("zk.lock.leadership.participant-id=app-3")
					.run((third) -> {
						assertThat(first).hasNotFailed();
						assertThat(second).hasNotFailed();
						assertThat(third).hasNotFailed();
						test.run(List.of(first, second, third));
					})));
	}

	private static AssertableApplicationContext awaitOneLeader(List<AssertableApplicationContext> apps) {
		await().atMost(Duration.ofSeconds(10)).until(() -> leaders(apps) == 1);
		return apps.stream().filter((app) -> app.getBean(Leadership.class).isLeader(GROUP)).findFirst().orElseThrow();
	}

	private static long leaders(List<AssertableApplicationContext> apps) {
		return apps.stream().filter((app) -> app.getBean(Leadership.class).isLeader(GROUP)).count();
	}

	private static long ticks(String job) {
		return runs.stream().filter((run) -> run.job().equals(job)).map(Run::tick).distinct().count();
	}

	private static void assertOneRunPerTick(List<Run> snapshot, String job) {
		Map<Long, List<String>> byTick = snapshot.stream()
			.filter((run) -> run.job().equals(job))
			.collect(Collectors.groupingBy(Run::tick, Collectors.mapping(Run::app, Collectors.toList())));
		assertThat(byTick).as(job).isNotEmpty().allSatisfy((tick, apps) -> assertThat(apps).as(job + " " + tick).hasSize(1));
	}

	private static double count(Search search) {
		return search.timers().stream().mapToDouble((timer) -> timer.count()).sum();
	}

	@FunctionalInterface
	interface ThreeApplications {

		void run(List<AssertableApplicationContext> apps) throws Exception;

	}

	record Run(String job, long tick, String app) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class Jobs {

		@Bean
		TickJobs tickJobs(Environment environment) {
			return new TickJobs(environment.getRequiredProperty("zk.lock.leadership.participant-id"));
		}

		@Bean
		LeadershipEvents leadershipEvents() {
			return new LeadershipEvents();
		}

	}

	static class TickJobs {

		private final String app;

		TickJobs(String app) {
			this.app = app;
		}

		@Scheduled(cron = "* * * * * *")
		@DistributedLock(path = "/jobs/tick", waitTime = "0", onBusy = OnBusy.SKIP, lockAtLeastFor = "500ms")
		public void locked() {
			runs.add(new Run("locked", Instant.now().getEpochSecond(), this.app));
		}

		@Scheduled(cron = "* * * * * *")
		@LeaderOnly(group = GROUP)
		public void leader() {
			runs.add(new Run("leader", Instant.now().getEpochSecond(), this.app));
		}

	}

	static class LeadershipEvents {

		final List<LeadershipGrantedEvent> granted = new CopyOnWriteArrayList<>();

		final List<LeadershipRevokedEvent> revoked = new CopyOnWriteArrayList<>();

		final List<Instant> revokedAt = new CopyOnWriteArrayList<>();

		@EventListener
		void granted(LeadershipGrantedEvent event) {
			this.granted.add(event);
		}

		@EventListener
		void revoked(LeadershipRevokedEvent event) {
			this.revokedAt.add(Instant.now());
			this.revoked.add(event);
		}

	}

}
