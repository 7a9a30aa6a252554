package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionStateErrorPolicy;
import org.apache.curator.framework.state.SessionConnectionStateErrorPolicy;
import org.apache.curator.framework.state.StandardConnectionStateErrorPolicy;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.ClosedTogether;
import io.github.zklock.curator.CuratorLeadership;
import io.github.zklock.curator.RecordingLeadershipListener;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static io.github.zklock.curator.RecordingLeadershipListener.GRANTED;
import static io.github.zklock.curator.RecordingLeadershipListener.REVOKED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * <a href="https://issues.apache.org/jira/browse/CURATOR-696">CURATOR-696</a>: the leader of a group
 * is cut off by a {@link TcpProxy} between its client and the server, while two other participants,
 * connected directly, wait. Frozen link: the old leader must be told
 * (revoked, {@code isLeader} false) when its client suspends, two thirds of the session timeout
 * after the freeze, before the server expires its session and another participant is granted
 * (the safety property CURATOR-696 is about), and another participant must lead within the session
 * timeout + 1 s; after healing, the old leader queues again in a new session and exactly one
 * participant leads. Dropped link, back within the session: the old leader is revoked and granted
 * again, once each, and nobody else leads meanwhile. Both under Curator's default
 * {@code ConnectionStateErrorPolicy} and under {@code SessionConnectionStateErrorPolicy}, with
 * which Curator's latch alone would keep leadership while suspended.
 */
@Tag("chaos")
class Curator696LeadershipPartitionTests {

	private static final String BASE_PATH = "/leaders";

	private static final String GROUP = "partition";

	/**
	 * The old leader's session timeout. The margin it leaves by design between the old leader told
	 * (its client gives up after two thirds of it, and the NIO socket's 100 ms) and another one
	 * granted (the server expires the session after all of it) is a third of it less 100 ms: 0.9 s
	 * (0.92 to 1.18 s measured). Not shorter: under stress-ng the first freeze of a JVM was told
	 * 0.3 s late in ConnectionCutTests.
	 */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(3);

	private static final Duration LONG = Duration.ofSeconds(20);

	/** A server per test, with the chaos tick; it stops after the proxy is closed. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private final List<CuratorLeadership> leaderships = new ArrayList<>();

	/** The clients this test made, closed together once what uses them is closed. */
	private final List<CuratorFramework> clients = new ArrayList<>();

	private TcpProxy proxy;

	private CuratorFramework observer;

	/** Curator's error policies: whether SUSPENDED is an error state for recipes. */
	enum Policy {

		STANDARD(new StandardConnectionStateErrorPolicy()), SESSION(new SessionConnectionStateErrorPolicy());

		private final ConnectionStateErrorPolicy policy;

		Policy(ConnectionStateErrorPolicy policy) {
			this.policy = policy;
		}

	}

	@BeforeEach
	void start() throws Exception {
		this.proxy = TcpProxy.start(this.zooKeeper.getPort());
		this.observer = tracked(this.zooKeeper.newClient());
	}

	@AfterEach
	void stop() {
		// The extension closes the clients and the server after this.
		this.leaderships.forEach(CuratorLeadership::close);
		// The clients at once (each close waits 100 ms in the NIO socket's cleanup), and before the
		// proxy: through a closed proxy a session's close cannot reach the server, and the client
		// retries until it gives up (about 1.5 s).
		ClosedTogether.close(this.clients);
		Chaos.closeQuietly(this.proxy);
	}

	@ParameterizedTest
	@EnumSource(Policy.class)
	@Timeout(value = 1, unit = TimeUnit.MINUTES)
	void frozenLeaderIsToldBeforeAnotherParticipantLeads(Policy policy) throws Exception {
		CuratorFramework oldClient = tracked(this.zooKeeper
			.newClient(throughProxy(SESSION_TIMEOUT).andThen((builder) -> builder.connectionStateErrorPolicy(policy.policy))));
		CuratorLeadership old = leadership(oldClient, "old");
		RecordingLeadershipListener oldEvents = RecordingLeadershipListener.recording(old);
		assertThat(old.awaitLeadership(GROUP, LONG)).isTrue();
		List<RecordingLeadershipListener> othersEvents = new ArrayList<>();
		List<CuratorLeadership> others = new ArrayList<>();
		for (String id : List.of("other-1", "other-2")) {
			CuratorLeadership other = leadership(tracked(this.zooKeeper.newClient(direct())), id);
			othersEvents.add(RecordingLeadershipListener.recording(other));
			other.join(GROUP);
			others.add(other);
		}
		awaitZnodes(3);
		long oldSession = oldClient.getZookeeperClient().getZooKeeper().getSessionId();

		long frozenAt = System.nanoTime();
		this.proxy.freeze();
		await().atMost(LONG).until(() -> othersEvents.stream().anyMatch((events) -> events.firstAt(GRANTED, GROUP) != 0));
		long grantedAt = othersEvents.stream()
			.mapToLong((events) -> events.firstAt(GRANTED, GROUP))
			.filter((at) -> at != 0)
			.min()
			.orElseThrow();
		long toldAt = oldEvents.firstAt(REVOKED, GROUP);
		boolean oldLeadsWhileFrozen = old.isLeader(GROUP);
		long toldMs = (toldAt != 0) ? TimeUnit.NANOSECONDS.toMillis(toldAt - frozenAt) : -1;
		long grantedMs = TimeUnit.NANOSECONDS.toMillis(grantedAt - frozenAt);
		System.out.printf("LEADERSHIP handover=partition policy=%s old_told_ms=%d new_leader_ms=%d session_timeout_ms=%d%n",
				policy.name().toLowerCase(), toldMs, grantedMs, SESSION_TIMEOUT.toMillis());

		assertThat(toldAt).as("old leader told while frozen").isPositive();
		assertThat(grantedAt - toldAt).as("nanoseconds from the old leader told to another one granted").isPositive();
		assertThat(Duration.ofMillis(grantedMs)).as("another participant granted after the freeze")
			.isLessThanOrEqualTo(SESSION_TIMEOUT.plusSeconds(1));
		assertThat(oldEvents.events(GROUP).get(1).leaderWhenTold()).as("isLeader when told").isFalse();
		assertThat(oldLeadsWhileFrozen).isFalse();

		this.proxy.heal();
		await().atMost(LONG).ignoreExceptions().until(() -> {
			long session = oldClient.getZookeeperClient().getZooKeeper().getSessionId();
			return oldClient.getZookeeperClient().isConnected() && session != oldSession && children().size() == 3;
		});
		CuratorLeadership next = others.get(othersEvents.indexOf(othersEvents.stream()
			.filter((events) -> events.firstAt(GRANTED, GROUP) != 0)
			.findFirst()
			.orElseThrow()));
		awaitSingleLeader(List.of(old, others.get(0), others.get(1)), next);
		for (CuratorLeadership leadership : List.of(old, others.get(0), others.get(1))) {
			assertThat(leadership.getLeader(GROUP)).contains(next.getParticipantId());
		}
		assertThat(oldEvents.kinds(GROUP)).containsExactly(GRANTED, REVOKED);
		for (RecordingLeadershipListener events : othersEvents) {
			assertThat(events.kinds(GROUP)).isIn(List.of(), List.of(GRANTED));
		}
	}

	/**
	 * The leader's connections are dropped and refused for half a second: its client suspends at
	 * once and reconnects with the same session, its znode still first.
	 */
	@ParameterizedTest
	@EnumSource(Policy.class)
	@Timeout(value = 1, unit = TimeUnit.MINUTES)
	void leaderBackWithinTheSessionLeadsAgainAfterOneRevocation(Policy policy) throws Exception {
		Duration sessionTimeout = SESSION_TIMEOUT.multipliedBy(2);
		CuratorFramework leaderClient = tracked(this.zooKeeper
			.newClient(throughProxy(sessionTimeout).andThen((builder) -> builder.connectionStateErrorPolicy(policy.policy))));
		CuratorLeadership leader = leadership(leaderClient, "leader");
		RecordingLeadershipListener leaderEvents = RecordingLeadershipListener.recording(leader);
		assertThat(leader.awaitLeadership(GROUP, LONG)).isTrue();
		CuratorLeadership other = leadership(tracked(this.zooKeeper.newClient(direct())), "other");
		RecordingLeadershipListener otherEvents = RecordingLeadershipListener.recording(other);
		other.join(GROUP);
		List<String> znodes = awaitZnodes(2);
		long session = leaderClient.getZookeeperClient().getZooKeeper().getSessionId();

		this.proxy.drop(Duration.ofMillis(500));
		await().atMost(LONG).until(() -> leaderEvents.kinds(GROUP).size() == 3);
		assertThat(leaderEvents.kinds(GROUP)).containsExactly(GRANTED, REVOKED, GRANTED);
		assertThat(leaderEvents.events(GROUP).get(1).leaderWhenTold()).as("isLeader when told").isFalse();
		assertThat(leaderClient.getZookeeperClient().getZooKeeper().getSessionId()).as("session").isEqualTo(session);
		assertThat(leader.isLeader(GROUP)).isTrue();
		assertThat(children()).containsExactlyInAnyOrderElementsOf(znodes);
		assertThat(other.isLeader(GROUP)).isFalse();
		assertThat(otherEvents.kinds(GROUP)).isEmpty();
		assertThat(other.getLeader(GROUP)).contains("leader");
	}

	private Consumer<CuratorFrameworkFactory.Builder> throughProxy(Duration sessionTimeout) {
		return Chaos.clientSettings(sessionTimeout, ClientSocket.NIO)
			.andThen((builder) -> builder.connectString(this.proxy.connectString()));
	}

	private CuratorFramework tracked(CuratorFramework client) {
		this.clients.add(client);
		return client;
	}

	private static Consumer<CuratorFrameworkFactory.Builder> direct() {
		return Chaos.clientSettings(Duration.ofSeconds(10), ClientSocket.NIO);
	}

	private CuratorLeadership leadership(CuratorFramework client, String id) {
		CuratorLeadership leadership = new CuratorLeadership(client, BASE_PATH, id);
		this.leaderships.add(leadership);
		return leadership;
	}

	private void awaitSingleLeader(List<CuratorLeadership> all, CuratorLeadership expected) {
		await().atMost(LONG).untilAsserted(() -> assertThat(all.stream().filter((leadership) -> leadership.isLeader(GROUP)))
			.containsExactly(expected));
	}

	private List<String> awaitZnodes(int count) {
		List<String> znodes = new ArrayList<>();
		await().atMost(LONG).until(() -> {
			znodes.clear();
			znodes.addAll(children());
			return znodes.size() == count;
		});
		return znodes;
	}

	private List<String> children() throws Exception {
		try {
			return this.observer.getChildren().forPath(BASE_PATH + "/" + GROUP);
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

}
