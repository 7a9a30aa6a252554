package io.github.zklock.aop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationContextException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;

import io.github.zklock.Leadership;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.curator.CuratorLeadership;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @LeaderOnly} through the advisor of {@code @EnableDistributedLocks} in plain Spring
 * contexts (no Spring Boot), each with its own Curator client and {@link CuratorLeadership} bean,
 * on a real ZooKeeper: the groups are joined when the context starts; the leader runs the method
 * and the other application skips it ({@code null}, {@code Optional.empty()}, a {@code void}
 * method not invoked); combined with {@code @DistributedLock}, the application that does not lead
 * sends no lock request; yielding hands the method over to the other application; and the start
 * fails, naming the method or the groups, for a primitive return type and for an application
 * without a {@link Leadership} bean.
 */
class LeaderOnlyTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** Looks at the tree from outside the applications under test. */
	private static CuratorFramework zk;

	@BeforeAll
	static void observer() throws InterruptedException {
		zk = zooKeeper.newClient();
	}

	@Test
	void theLeaderRunsTheMethodAndTheOtherApplicationSkipsIt() throws Exception {
		try (AnnotationConfigApplicationContext first = startLeader("app-1", "skip", Jobs.class);
				AnnotationConfigApplicationContext second = startBehind("app-2", "skip", first, Jobs.class)) {
			Jobs skipping = second.getBean(Jobs.class);
			assertThat(skipping.report()).isNull();
			assertThat(skipping.optionalReport()).isEmpty();
			skipping.voidReport();
			assertThat(skipping.runs()).isZero();

			Jobs leading = first.getBean(Jobs.class);
			assertThat(leading.report()).isEqualTo("report by app-1");
			assertThat(leading.optionalReport()).contains("report by app-1");
			leading.voidReport();
			assertThat(leading.runs()).isEqualTo(3);
			assertThat(second.getBean(Leadership.class).isLeader("skip")).isFalse();
		}
	}

	@Test
	void joinsTheGroupsWhenTheContextStartsBeforeAnyCall() throws Exception {
		try (AnnotationConfigApplicationContext context = start("app-1", "joined", Jobs.class)) {
			// getGroups() joins nothing: the lifecycle did, with the placeholder resolved.
			assertThat(context.getBean(Leadership.class).getGroups()).containsExactly("joined");
			await().atMost(BOUND).untilAsserted(() -> assertThat(participants("joined")).containsExactly("app-1"));
			assertThat(context.getBean(Jobs.class).runs()).isZero();
		}
	}

	@Test
	void withDistributedLockTheApplicationThatDoesNotLeadSendsNoLockRequest() throws Exception {
		try (AnnotationConfigApplicationContext first = startLeader("app-1", "ledger", LedgerJob.class);
				AnnotationConfigApplicationContext second = startBehind("app-2", "ledger", first,
						LedgerJob.class)) {
			assertThat(second.getBean(LedgerJob.class).close()).isNull();
			assertThat(second.getBean(LedgerJob.class).runs()).isZero();
			// Leadership is checked first: no recipe was made, so no znode of the lock's path either.
			assertThat(new CuratorLockAdmin(second.getBean(CuratorLockRegistry.class)).cachedKeyCount()).isZero();
			assertThat(zk.checkExists().forPath("/locks/ledger/close")).isNull();

			// The leader runs the method under the lock.
			assertThat(first.getBean(LedgerJob.class).close()).isOne();
			assertThat(zk.checkExists().forPath("/locks/ledger/close")).isNotNull();
			assertThat(new CuratorLockAdmin(first.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
		}
	}

	@Test
	void yieldingHandsTheMethodOverToTheOtherApplication() throws Exception {
		try (AnnotationConfigApplicationContext first = startLeader("app-1", "handover", Jobs.class);
				AnnotationConfigApplicationContext second = startBehind("app-2", "handover", first, Jobs.class)) {
			assertThat(first.getBean(Jobs.class).report()).isEqualTo("report by app-1");
			assertThat(second.getBean(Jobs.class).report()).isNull();

			first.getBean(Leadership.class).yieldLeadership("handover");

			assertThat(first.getBean(Jobs.class).report()).isNull();
			assertThat(second.getBean(Leadership.class).awaitLeadership("handover", BOUND)).isTrue();
			assertThat(second.getBean(Jobs.class).report()).isEqualTo("report by app-2");
			assertThat(first.getBean(Jobs.class).report()).isNull();
			assertThat(first.getBean(Jobs.class).runs()).isOne();
			assertThat(second.getBean(Jobs.class).runs()).isOne();
			// The one that yielded queued again, behind.
			await().atMost(BOUND)
				.untilAsserted(() -> assertThat(participants("handover")).containsExactly("app-2", "app-1"));
		}
	}

	@Test
	void aPrimitiveReturnTypeFailsTheStartNamingTheMethod() {
		assertThatExceptionOfType(BeanCreationException.class)
			.isThrownBy(() -> start("app-1", "counting", CountingJob.class).close())
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("@LeaderOnly on " + CountingJob.class.getName() + ".count")
			.withMessageContaining("int");
	}

	@Test
	void anApplicationWithoutLeadershipFailsTheStartNamingTheGroups() {
		assertThatExceptionOfType(ApplicationContextException.class).isThrownBy(() -> LockApplications
			.start(zooKeeper, (context) -> group(context, "leaderless"), Jobs.class)
			.close())
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageStartingWith("@LeaderOnly methods name the groups [leaderless], but the application has no "
					+ Leadership.class.getName() + " bean")
			.withMessageContaining("CuratorLeadership");
	}

	/**
	 * Start an application whose {@code @LeaderOnly} methods name the group, with a
	 * {@link CuratorLeadership} on {@code /locks/leadership} as the given participant.
	 */
	private static AnnotationConfigApplicationContext start(String participantId, String group,
			Class<?>... components) throws InterruptedException {
		return LockApplications.start(zooKeeper, (context) -> {
			group(context, group);
			context.registerBean("leadership", CuratorLeadership.class,
					() -> new CuratorLeadership(context.getBean(CuratorFramework.class), "/locks/leadership",
							participantId),
					(definition) -> definition.setDestroyMethodName("close"));
		}, components);
	}

	/** Start an application and wait until it leads the group. */
	private static AnnotationConfigApplicationContext startLeader(String participantId, String group,
			Class<?>... components) throws InterruptedException {
		AnnotationConfigApplicationContext context = start(participantId, group, components);
		assertThat(context.getBean(Leadership.class).awaitLeadership(group, BOUND)).isTrue();
		return context;
	}

	/** Start an application and wait until it is queued behind the leader. */
	private static AnnotationConfigApplicationContext startBehind(String participantId, String group,
			AnnotationConfigApplicationContext leader, Class<?>... components) throws InterruptedException {
		AnnotationConfigApplicationContext context = start(participantId, group, components);
		String leaderId = leader.getBean(Leadership.class).getParticipantId();
		await().atMost(BOUND)
			.untilAsserted(() -> assertThat(participants(group)).containsExactly(leaderId, participantId));
		return context;
	}

	private static void group(AnnotationConfigApplicationContext context, String group) {
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("test", Map.of("test.group", group)));
	}

	/**
	 * The participant ids in the latch znodes of a group, in queue order: by sequence number (the
	 * names start with Curator's protection prefix, a random UUID); none if the group has no znode.
	 */
	private static List<String> participants(String group) throws Exception {
		String latchPath = "/locks/leadership/" + group;
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

	static class Jobs {

		private final ObjectProvider<Leadership> leadership;

		private final AtomicInteger runs = new AtomicInteger();

		Jobs(ObjectProvider<Leadership> leadership) {
			this.leadership = leadership;
		}

		/** How often the annotated methods ran (a method: a class proxy has no state of its own). */
		public int runs() {
			return this.runs.get();
		}

		@LeaderOnly(group = "${test.group}")
		public String report() {
			this.runs.incrementAndGet();
			return "report by " + this.leadership.getObject().getParticipantId();
		}

		@LeaderOnly(group = "${test.group}")
		public Optional<String> optionalReport() {
			return Optional.of(report());
		}

		@LeaderOnly(group = "${test.group}")
		public void voidReport() {
			this.runs.incrementAndGet();
		}

	}

	static class LedgerJob {

		private final CuratorLockRegistry registry;

		private final AtomicInteger runs = new AtomicInteger();

		LedgerJob(CuratorLockRegistry registry) {
			this.registry = registry;
		}

		public int runs() {
			return this.runs.get();
		}

		/**
		 * Close the ledger, on the leader only and under the lock.
		 * @return how many locks this application held while it ran
		 */
		@LeaderOnly(group = "${test.group}")
		@DistributedLock(path = "/ledger/close")
		public Integer close() {
			this.runs.incrementAndGet();
			return new CuratorLockAdmin(this.registry).heldLockCount();
		}

	}

	static class CountingJob {

		@LeaderOnly(group = "${test.group}")
		public int count() {
			return 1;
		}

	}

}
