package io.github.zklock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.MapPropertySource;
import org.springframework.validation.FieldError;

import io.github.zklock.Leadership;
import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LeadershipListener;
import io.github.zklock.LeadershipRevokedEvent;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.curator.CuratorLeadership;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for the {@link Leadership} part of {@link ZkLockAutoConfiguration}, against a real
 * ZooKeeper server: the {@link CuratorLeadership} bean, its participant id (default and
 * {@code zk.lock.leadership.participant-id}) and where its latches live
 * ({@code zk.lock.leadership.key-prefix}: default, configured, empty), both validated when bound;
 * that it backs off for the application's own {@link Leadership}, which {@code @LeaderOnly} then
 * asks; that {@code @LeaderOnly} groups are joined at start-up and skip the methods of the
 * application that does not lead; that closing the leader tells its event listeners and
 * {@link LeadershipListener} beans and hands leadership over; and what {@code zk.lock.enabled=false}
 * does to {@code @LeaderOnly} methods. The three-application scheduled runs, health details,
 * endpoint and session expiry are in {@link ScheduledJobsTests}.
 */
class LeadershipAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** Looks at the tree from outside the applications under test. */
	private static CuratorFramework zk;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@BeforeAll
	static void observer() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void providesACuratorLeadershipWithTheDefaultParticipantIdAndLatchesBelowLeadership() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(CuratorLeadership.class).hasSingleBean(Leadership.class);
			Leadership leadership = context.getBean(Leadership.class);
			String participantId = CuratorLeadership.defaultParticipantId();
			assertThat(leadership.getParticipantId()).isEqualTo(participantId);
			// No @LeaderOnly method: nothing joined, nothing written.
			assertThat(leadership.getGroups()).isEmpty();
			assertThat(leadership.awaitLeadership("default-prefix", BOUND)).isTrue();
			assertThat(participants("/locks/leadership/default-prefix")).containsExactly(participantId);
			assertThat(leadership.getLeader("default-prefix")).contains(participantId);
		});
	}

	@Test
	void usesTheConfiguredParticipantIdAndKeyPrefix() {
		this.contextRunner
			.withPropertyValues("zk.lock.leadership.participant-id=billing-7",
					"zk.lock.leadership.key-prefix=/jobs/leaders")
			.run((context) -> {
				Leadership leadership = context.getBean(Leadership.class);
				assertThat(leadership.getParticipantId()).isEqualTo("billing-7");
				assertThat(leadership.awaitLeadership("configured-prefix", BOUND)).isTrue();
				assertThat(participants("/locks/jobs/leaders/configured-prefix")).containsExactly("billing-7");
				assertThat(zk.checkExists().forPath("/locks/leadership/configured-prefix")).isNull();
			});
	}

	@Test
	void placesTheGroupsDirectlyBelowTheRootPathWithAnEmptyKeyPrefix() {
		this.contextRunner
			.withPropertyValues("zk.lock.leadership.key-prefix=", "zk.lock.root-path=/apps/direct",
					"zk.lock.leadership.participant-id=direct-1")
			.run((context) -> {
				assertThat(context.getBean(Leadership.class).awaitLeadership("empty-prefix", BOUND)).isTrue();
				assertThat(participants("/apps/direct/empty-prefix")).containsExactly("direct-1");
				assertThat(zk.getChildren().forPath("/apps/direct")).containsExactly("empty-prefix");
			});
	}

	@Test
	void rejectsAnIllegalKeyPrefixNamingTheProperty() {
		for (String keyPrefix : new String[] { "leadership/", "/" }) {
			this.contextRunner.withPropertyValues("zk.lock.leadership.key-prefix=" + keyPrefix).run((context) -> {
				assertThat(context).hasFailed();
				assertThat(singleError(context.getStartupFailure())).satisfies((error) -> {
					assertThat(error.getField()).isEqualTo("leadership.keyPrefix");
					assertThat(error.getDefaultMessage())
						.startsWith("zk.lock.leadership.key-prefix '" + keyPrefix + "' is not a legal lock key")
						.contains("/leadership");
				});
			});
		}
	}

	@Test
	void rejectsABlankParticipantIdNamingTheProperty() {
		for (String participantId : new String[] { "", "  \t" }) {
			this.contextRunner
				.withInitializer((context) -> context.getEnvironment()
					.getPropertySources()
					.addFirst(new MapPropertySource("test",
							Map.of("zk.lock.leadership.participant-id", participantId))))
				.run((context) -> {
					assertThat(context).hasFailed();
					assertThat(singleError(context.getStartupFailure())).satisfies((error) -> {
						assertThat(error.getField()).isEqualTo("leadership.participantId");
						assertThat(error.getDefaultMessage())
							.startsWith("zk.lock.leadership.participant-id must not be blank");
					});
				});
		}
	}

	@Test
	void backsOffForTheApplicationsOwnLeadershipWhichLeaderOnlyThenAsks() {
		this.contextRunner.withUserConfiguration(JobsConfiguration.class, OwnLeadershipConfiguration.class)
			.withPropertyValues("test.group=own")
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(CuratorLeadership.class);
				FixedLeadership own = context.getBean(FixedLeadership.class);
				assertThat(context.getBean(Leadership.class)).isSameAs(own);
				// Joined at start-up through the application's bean.
				assertThat(own.asked).containsExactly("own");
				Jobs jobs = context.getBean(Jobs.class);
				assertThat(jobs.report()).isNull();
				assertThat(jobs.runs()).isEqualTo(0);
				own.leader = true;
				assertThat(jobs.report()).isEqualTo("report");
				assertThat(jobs.runs()).isEqualTo(1);
				assertThat(zk.checkExists().forPath("/locks/leadership/own")).isNull();
			});
	}

	@Test
	void joinsTheGroupsOfLeaderOnlyMethodsWhenTheContextStarts() {
		this.contextRunner.withUserConfiguration(JobsConfiguration.class)
			.withPropertyValues("test.group=joined-at-start", "zk.lock.leadership.participant-id=starter")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				// getGroups() joins nothing: the group was joined before any call.
				assertThat(context.getBean(Leadership.class).getGroups()).containsExactly("joined-at-start");
				await().atMost(BOUND)
					.untilAsserted(() -> assertThat(participants("/locks/leadership/joined-at-start"))
						.containsExactly("starter"));
				assertThat(context.getBean(Jobs.class).runs()).isZero();
			});
	}

	@Test
	void leaderOnlyMethodsRunOnTheLeaderAndAreSkippedElsewhere() {
		twoApplications("skipped-elsewhere", (first, second) -> {
			assertThat(first.leadership.isLeader("skipped-elsewhere")).isTrue();
			assertThat(second.leadership.isLeader("skipped-elsewhere")).isFalse();

			assertThat(second.jobs.report()).isNull();
			assertThat(second.jobs.optionalReport()).isEmpty();
			second.jobs.voidReport();
			assertThat(second.jobs.runs()).isEqualTo(0);

			assertThat(first.jobs.report()).isEqualTo("report");
			assertThat(first.jobs.optionalReport()).contains("report");
			first.jobs.voidReport();
			assertThat(first.jobs.runs()).isEqualTo(3);
		});
	}

	@Test
	void closingTheLeaderTellsItsListenersAndAnotherApplicationLeads() {
		twoApplications("handed-over", (first, second) -> {
			assertThat(first.leadership.isLeader("handed-over")).isTrue();
			Events firstEvents = first.context.getBean(Events.class);
			RecordingListener firstListener = first.context.getBean(RecordingListener.class);
			// The event is published after the leadership flag is set (awaitLeadership may return
			// in between), so wait for it, bounded.
			await().atMost(BOUND).untilAsserted(() -> {
				assertThat(firstEvents.granted).containsExactly(new LeadershipGrantedEvent("handed-over", "app-1"));
				assertThat(firstListener.calls).containsExactly("granted handed-over app-1");
			});
			assertThat(second.context.getBean(Events.class).granted).isEmpty();

			first.context.close();

			// Told while the leadership bean is destroyed, before the close returns (or right after, by
			// a thread finishing its turn of telling the grant: see Leadership#yieldLeadership).
			await().atMost(BOUND).untilAsserted(() -> {
				assertThat(firstEvents.revoked).containsExactly(new LeadershipRevokedEvent("handed-over", "app-1"));
				assertThat(firstListener.calls).containsExactly("granted handed-over app-1",
						"revoked handed-over app-1");
			});
			assertThat(second.leadership.awaitLeadership("handed-over", BOUND)).isTrue();
			await().atMost(BOUND).untilAsserted(() -> {
				assertThat(second.context.getBean(Events.class).granted)
					.containsExactly(new LeadershipGrantedEvent("handed-over", "app-2"));
				assertThat(second.context.getBean(RecordingListener.class).calls)
					.containsExactly("granted handed-over app-2");
			});
			assertThat(second.jobs.report()).isEqualTo("report");
			assertThat(participants("/locks/leadership/handed-over")).containsExactly("app-2");
		});
	}

	@Test
	void withZkLockDisabledThereIsNoLeadershipAndLeaderOnlyMethodsRunUnadvised() {
		this.contextRunner.withUserConfiguration(JobsConfiguration.class)
			.withPropertyValues("zk.lock.enabled=false", "test.group=disabled")
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(Leadership.class)
					.doesNotHaveBean("zkLeaderOnlyAdvisor");
				Jobs jobs = context.getBean(Jobs.class);
				assertThat(AopUtils.isAopProxy(jobs)).isFalse();
				// Switched off entirely: the annotation is inert, as @DistributedLock is then.
				assertThat(jobs.report()).isEqualTo("report");
				assertThat(jobs.runs()).isEqualTo(1);
			});
	}

	@Test
	void withZkLockDisabledButTheAdviceEnabledByTheApplicationTheStartFailsNamingTheGroups() {
		this.contextRunner.withUserConfiguration(JobsConfiguration.class, OwnAdviceConfiguration.class)
			.withPropertyValues("zk.lock.enabled=false", "test.group=disabled-advised")
			.run((context) -> {
				assertThat(context).hasFailed();
				IllegalStateException ex = causeOfType(context.getStartupFailure(), IllegalStateException.class,
						"@LeaderOnly");
				assertThat(ex.getMessage())
					.startsWith("@LeaderOnly methods name the groups [disabled-advised], but the application has no "
							+ Leadership.class.getName() + " bean")
					.contains("CuratorLeadership");
			});
	}

	/**
	 * Run two applications with the {@link Jobs} of the given group: {@code app-1}, started first
	 * and leading before {@code app-2} starts, and {@code app-2}, queued behind it.
	 */
	private void twoApplications(String group, TwoApplications test) {
		ApplicationContextRunner runner = this.contextRunner
			.withUserConfiguration(JobsConfiguration.class, Listeners.class)
			.withPropertyValues("test.group=" + group);
		runner.withPropertyValues("zk.lock.leadership.participant-id=app-1").run((first) -> {
			assertThat(first).hasNotFailed();
			assertThat(first.getBean(Leadership.class).awaitLeadership(group, BOUND)).isTrue();
			runner.withPropertyValues("zk.lock.leadership.participant-id=app-2").run((second) -> {
				assertThat(second).hasNotFailed();
				await().atMost(BOUND).untilAsserted(() -> assertThat(participants(latchPath(group)))
					.containsExactly("app-1", "app-2"));
				test.run(new Application(first), new Application(second));
			});
		});
	}

	private static String latchPath(String group) {
		return "/locks/leadership/" + group;
	}

	/**
	 * The participant ids in the znodes of a latch path, in queue order: by sequence number (the
	 * names start with Curator's protection prefix, a random UUID); none if the path does not exist.
	 */
	private static List<String> participants(String latchPath) throws Exception {
		List<String> nodes;
		try {
			nodes = new ArrayList<>(zk.getChildren().forPath(latchPath));
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
		nodes.sort(Comparator.comparing((String node) -> node.substring(node.lastIndexOf('-') + 1)));
		List<String> ids = new ArrayList<>();
		for (String node : nodes) {
			byte[] data = zk.getData().forPath(ZKPaths.makePath(latchPath, node));
			ids.add(new String(data, StandardCharsets.UTF_8));
		}
		return ids;
	}

	private static FieldError singleError(Throwable failure) {
		BindValidationException ex = causeOfType(failure, BindValidationException.class, "");
		assertThat(ex.getValidationErrors().getAllErrors()).hasSize(1);
		return (FieldError) ex.getValidationErrors().getAllErrors().get(0);
	}

	private static <T extends Throwable> T causeOfType(Throwable failure, Class<T> type, String messageStart) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (type.isInstance(current) && String.valueOf(current.getMessage()).startsWith(messageStart)) {
				return type.cast(current);
			}
		}
		throw new AssertionError("No " + type.getName() + " in the cause chain of " + failure, failure);
	}

	@FunctionalInterface
	interface TwoApplications {

		void run(Application first, Application second) throws Exception;

	}

	record Application(AssertableApplicationContext context, Leadership leadership, Jobs jobs) {

		Application(AssertableApplicationContext context) {
			this(context, context.getBean(Leadership.class), context.getBean(Jobs.class));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class JobsConfiguration {

		@Bean
		Jobs jobs() {
			return new Jobs();
		}

	}

	static class Jobs {

		private final AtomicInteger runs = new AtomicInteger();

		/** How often the annotated methods ran (a method: a class proxy has no state of its own). */
		public int runs() {
			return this.runs.get();
		}

		@LeaderOnly(group = "${test.group:reports}")
		public String report() {
			this.runs.incrementAndGet();
			return "report";
		}

		@LeaderOnly(group = "${test.group:reports}")
		public Optional<String> optionalReport() {
			this.runs.incrementAndGet();
			return Optional.of("report");
		}

		@LeaderOnly(group = "${test.group:reports}")
		public void voidReport() {
			this.runs.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Listeners {

		@Bean
		Events events() {
			return new Events();
		}

		@Bean
		RecordingListener recordingListener() {
			return new RecordingListener();
		}

	}

	static class Events {

		final List<LeadershipGrantedEvent> granted = new CopyOnWriteArrayList<>();

		final List<LeadershipRevokedEvent> revoked = new CopyOnWriteArrayList<>();

		@EventListener
		void granted(LeadershipGrantedEvent event) {
			this.granted.add(event);
		}

		@EventListener
		void revoked(LeadershipRevokedEvent event) {
			this.revoked.add(event);
		}

	}

	static class RecordingListener implements LeadershipListener {

		final List<String> calls = new CopyOnWriteArrayList<>();

		@Override
		public void granted(LeadershipGrantedEvent event) {
			this.calls.add("granted " + event.group() + " " + event.participantId());
		}

		@Override
		public void revoked(LeadershipRevokedEvent event) {
			this.calls.add("revoked " + event.group() + " " + event.participantId());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnLeadershipConfiguration {

		@Bean
		FixedLeadership ownLeadership() {
			return new FixedLeadership();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class OwnAdviceConfiguration {

	}

	/** An application's own leadership: leads when the test says so, and records the groups asked. */
	static class FixedLeadership implements Leadership {

		volatile boolean leader;

		final Set<String> asked = ConcurrentHashMap.newKeySet();

		@Override
		public boolean isLeader(String group) {
			this.asked.add(group);
			return this.leader;
		}

		@Override
		public boolean awaitLeadership(String group, Duration timeout) {
			return isLeader(group);
		}

		@Override
		public void yieldLeadership(String group) {
			this.leader = false;
		}

		@Override
		public Optional<String> getLeader(String group) {
			return this.leader ? Optional.of(getParticipantId()) : Optional.empty();
		}

		@Override
		public Set<String> getGroups() {
			return Set.copyOf(this.asked);
		}

		@Override
		public String getParticipantId() {
			return "own";
		}

	}

}
