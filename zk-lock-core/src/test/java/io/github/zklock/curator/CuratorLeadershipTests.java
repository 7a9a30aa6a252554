package io.github.zklock.curator;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LeadershipListener;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.RecordingLeadershipListener.GRANTED;
import static io.github.zklock.curator.RecordingLeadershipListener.REVOKED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link CuratorLeadership} on a real ZooKeeper server, each participant with its own Curator
 * client as if in its own process: one of three leads and every instance names it; yielding hands
 * leadership to the next participant (alone, back to itself); closing the leader hands over and
 * tells it; granted and revoked events alternate with no duplicates; a throwing listener does not
 * stop the others; groups are joined lazily; waits are bounded; group names are checked; a closed
 * leadership refuses to work; {@code getLeader} fails rather than answers "nobody" when ZooKeeper is
 * unreachable; the leader whose session expires on the server is told and replaced within the
 * session timeout + 1 s, then queues again in its new session; and each term of leadership has a
 * fencing token higher than every earlier term's, its handle lost for good once the term ends.
 */
class CuratorLeadershipTests {

	/** A 200 ms tick, so that a session ends at most 200 ms after its timeout; sessions up to a minute. */
	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension().withTickTime(Duration.ofMillis(200))
		.withServerProperty("maxSessionTimeout", "60000");

	private static final String BASE_PATH = "/leaders";

	private static final Duration LONG = Duration.ofSeconds(10);

	/** The session timeout of a leader whose session is expired. */
	private static final Duration SHORT_SESSION = Duration.ofSeconds(3);

	private final List<Participant> participants = new ArrayList<>();

	private String group;

	/** Reads the groups' znodes for the assertions; closed by the extension after the class. */
	private static CuratorFramework observer;

	@BeforeAll
	static void connect() throws Exception {
		observer = zooKeeper.newClient();
	}

	@BeforeEach
	void name(TestInfo testInfo) {
		this.group = testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.participants.forEach((participant) -> participant.leadership().close());
	}

	@Test
	void oneOfThreeParticipantsLeadsAndEveryInstanceNamesIt() throws Exception {
		List<Participant> all = List.of(participant("p1"), participant("p2"), participant("p3"));
		all.forEach((participant) -> participant.leadership().join(this.group));

		Participant leader = awaitSingleLeader(all);
		for (Participant participant : all) {
			assertThat(participant.leadership().getLeader(this.group)).as(participant.id()).contains(leader.id());
			assertThat(participant.leadership().getGroups()).containsExactly(this.group);
			awaitEvents(participant, (participant == leader) ? new String[] { GRANTED } : new String[0]);
		}
		assertThat(leader.events().events(this.group)).singleElement().satisfies((event) -> {
			assertThat(event.participantId()).isEqualTo(leader.id());
			assertThat(event.leaderWhenTold()).as("isLeader when told").isTrue();
		});
		assertThat(awaitZnodes(3)).hasSize(3);
	}

	@Test
	void isLeaderJoinsTheGroupOnItsFirstCall() throws Exception {
		Participant first = participant("p1");
		assertThat(first.leadership().getGroups()).isEmpty();
		assertThat(first.leadership().getLeader(this.group)).as("getLeader does not join").isEmpty();
		assertThat(first.leadership().getGroups()).isEmpty();

		assertThat(first.leadership().isLeader(this.group)).as("first call, election still running").isFalse();
		assertThat(first.leadership().getGroups()).containsExactly(this.group);
		await().atMost(LONG).until(() -> first.leadership().isLeader(this.group));
		assertThat(first.leadership().getLeader(this.group)).contains("p1");
		awaitEvents(first, GRANTED);
	}

	@Test
	void awaitLeadershipWaitsAtMostItsTimeout() throws Exception {
		Participant first = participant("p1");
		Participant second = participant("p2");
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		assertThat(second.leadership().getGroups()).isEmpty();

		assertTimeoutPreemptively(LONG, () -> {
			assertThat(second.leadership().awaitLeadership(this.group, Duration.ZERO)).isFalse();
			long started = System.nanoTime();
			assertThat(second.leadership().awaitLeadership(this.group, Duration.ofMillis(300))).isFalse();
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		});
		assertThatIllegalArgumentException()
			.isThrownBy(() -> second.leadership().awaitLeadership(this.group, Duration.ofMillis(-1)))
			.withMessageContaining("negative");

		// A waiter wakes up as soon as it leads, long before its timeout.
		awaitZnodes(2);
		CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
			try {
				return second.leadership().awaitLeadership(this.group, Duration.ofMinutes(1));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		});
		first.leadership().yieldLeadership(this.group);
		assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void yieldHandsLeadershipToTheNextParticipant() throws Exception {
		Participant first = participant("p1");
		Participant second = participant("p2");
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		second.leadership().join(this.group);
		awaitZnodes(2);
		awaitEvents(first, GRANTED);

		first.leadership().yieldLeadership(this.group);
		// Told on the yielding thread before the call returns, unless the thread that told the grant
		// is still finishing its turn (then right after, by that thread): wait, bounded.
		awaitEvents(first, GRANTED, REVOKED);
		assertThat(first.leadership().isLeader(this.group)).isFalse();
		assertThat(second.leadership().awaitLeadership(this.group, LONG)).isTrue();
		assertThat(first.leadership().getLeader(this.group)).contains("p2");
		assertThat(second.leadership().getLeader(this.group)).contains("p2");
		assertThat(first.leadership().isLeader(this.group)).isFalse();

		second.leadership().yieldLeadership(this.group);
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		assertThat(second.leadership().isLeader(this.group)).isFalse();
		awaitEvents(first, GRANTED, REVOKED, GRANTED);
		awaitEvents(second, GRANTED, REVOKED);
		awaitZnodes(2);
	}

	@Test
	void yieldWhileAloneLeadsAgainOnANewZnode() throws Exception {
		Participant alone = participant("p1");
		assertThat(alone.leadership().awaitLeadership(this.group, LONG)).isTrue();
		List<String> before = awaitZnodes(1);

		for (int round = 1; round <= 2; round++) {
			alone.leadership().yieldLeadership(this.group);
			await().atMost(LONG).until(() -> alone.leadership().isLeader(this.group));
		}
		awaitEvents(alone, GRANTED, REVOKED, GRANTED, REVOKED, GRANTED);
		assertThat(awaitZnodes(1)).doesNotContainAnyElementsOf(before);
		assertThat(alone.leadership().getLeader(this.group)).contains("p1");

		alone.leadership().close();
		awaitEvents(alone, GRANTED, REVOKED, GRANTED, REVOKED, GRANTED, REVOKED);
		awaitZnodes(0);
	}

	@Test
	void yieldDoesNothingWhenNotLeadingOrNotJoined() throws Exception {
		Participant first = participant("p1");
		Participant second = participant("p2");
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		second.leadership().join(this.group);
		List<String> znodes = awaitZnodes(2);

		second.leadership().yieldLeadership(this.group);
		second.leadership().yieldLeadership("not-joined");
		assertThat(second.leadership().getGroups()).containsExactly(this.group);
		assertThat(awaitZnodes(2)).isEqualTo(znodes);
		assertThat(first.leadership().isLeader(this.group)).isTrue();
		awaitEvents(first, GRANTED);
		assertThat(second.events().kinds(this.group)).isEmpty();
	}

	@Test
	void closingTheLeaderTellsItAndHandsLeadershipOver() throws Exception {
		Participant first = participant("p1");
		Participant second = participant("p2");
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		second.leadership().join(this.group);
		awaitZnodes(2);
		awaitEvents(first, GRANTED);

		first.leadership().close();
		// Told on the closing thread before the call returns, or right after by a thread finishing
		// its turn of telling (see Leadership#yieldLeadership).
		awaitEvents(first, GRANTED, REVOKED);
		assertThat(second.leadership().awaitLeadership(this.group, LONG)).isTrue();
		assertThat(second.leadership().getLeader(this.group)).contains("p2");
		assertThat(first.events().kinds(this.group)).containsExactly(GRANTED, REVOKED);
		awaitZnodes(1);
	}

	@Test
	void closedLeadershipRefusesToWork() throws Exception {
		Participant first = participant("p1");
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		awaitEvents(first, GRANTED);
		CuratorLeadership closed = first.leadership();
		closed.close();
		closed.close();

		// A closed instance leads nothing and joins nothing.
		assertThat(closed.isLeader(this.group)).isFalse();
		assertThat(closed.getGroups()).isEmpty();
		assertThatIllegalStateException().isThrownBy(() -> closed.awaitLeadership(this.group, Duration.ZERO));
		assertThatIllegalStateException().isThrownBy(() -> closed.yieldLeadership(this.group));
		assertThatIllegalStateException().isThrownBy(() -> closed.getLeader(this.group));
		assertThatIllegalStateException().isThrownBy(() -> closed.join("other"));
		assertThat(closed.getGroups()).isEmpty();
		assertThat(closed.getParticipantId()).isEqualTo("p1");
		awaitEvents(first, GRANTED, REVOKED);
	}

	@Test
	void listenerThatThrowsDoesNotStopTheOthers() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		CuratorLeadership leadership = new CuratorLeadership(client, BASE_PATH, "p1");
		leadership.addListener(new LeadershipListener() {

			@Override
			public void granted(LeadershipGrantedEvent event) {
				throw new IllegalStateException("listener failure on purpose");
			}

		});
		leadership.addListener(LeadershipListener.NO_OP);
		RecordingLeadershipListener events = RecordingLeadershipListener.recording(leadership);
		this.participants.add(new Participant("p1", client, leadership, events));

		assertThat(leadership.awaitLeadership(this.group, LONG)).isTrue();
		await().atMost(LONG).until(() -> events.kinds(this.group).equals(List.of(GRANTED)));
		leadership.yieldLeadership(this.group);
		await().atMost(LONG).until(() -> events.kinds(this.group).equals(List.of(GRANTED, REVOKED, GRANTED)));
		assertThat(leadership.isLeader(this.group)).isTrue();
	}

	/**
	 * A listener that yields when it is granted (on Curator's thread): every listener, also those
	 * after it, is told of the grant before the revocation this causes; alone, the participant then
	 * leads again.
	 */
	@Test
	void listenerMayYieldWhenGranted() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		CuratorLeadership leadership = new CuratorLeadership(client, BASE_PATH, "p1");
		AtomicBoolean yielded = new AtomicBoolean();
		leadership.addListener(new LeadershipListener() {

			@Override
			public void granted(LeadershipGrantedEvent event) {
				if (yielded.compareAndSet(false, true)) {
					leadership.yieldLeadership(event.group());
				}
			}

		});
		RecordingLeadershipListener events = RecordingLeadershipListener.recording(leadership);
		this.participants.add(new Participant("p1", client, leadership, events));

		leadership.join(this.group);
		await().atMost(LONG).until(() -> events.kinds(this.group).size() == 3);
		assertThat(yielded).isTrue();
		assertThat(events.kinds(this.group)).containsExactly(GRANTED, REVOKED, GRANTED);
		assertThat(leadership.isLeader(this.group)).isTrue();
	}

	@ParameterizedTest
	@NullAndEmptySource
	@ValueSource(strings = { "a/b", "/a", "a/", ".", "..", "a\u0000b", "a\u0001b", "\ud800", "x\ud83d" })
	void groupNamesMustBeOneLegalPathSegment(String name) {
		// Checked before any request: the observer's client serves.
		CuratorLeadership leadership = new CuratorLeadership(observer, BASE_PATH, "p1");
		this.participants
			.add(new Participant("p1", observer, leadership, RecordingLeadershipListener.recording(leadership)));
		assertThatIllegalArgumentException().isThrownBy(() -> leadership.isLeader(name))
			.withMessageContaining("'" + name + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> leadership.awaitLeadership(name, Duration.ZERO))
			.withMessageContaining("'" + name + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> leadership.yieldLeadership(name))
			.withMessageContaining("'" + name + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> leadership.getLeader(name))
			.withMessageContaining("'" + name + "'");
		assertThatIllegalArgumentException().isThrownBy(() -> leadership.join(name))
			.withMessageContaining("'" + name + "'");
		assertThat(leadership.getGroups()).isEmpty();
	}

	@Test
	void constructorChecksBasePathAndParticipantId() {
		CuratorFramework client = observer;
		assertThatIllegalArgumentException().isThrownBy(() -> new CuratorLeadership(client, "leaders", "p1"))
			.withMessageContaining("'leaders'");
		assertThatIllegalArgumentException().isThrownBy(() -> new CuratorLeadership(client, "/leaders/", "p1"));
		assertThatIllegalArgumentException().isThrownBy(() -> new CuratorLeadership(client, BASE_PATH, ""));
		assertThat(CuratorLeadership.defaultParticipantId()).endsWith("/" + ProcessHandle.current().pid())
			.doesNotStartWith("/");
		try (CuratorLeadership atRoot = new CuratorLeadership(client, "/", "p1")) {
			assertThatIllegalArgumentException().isThrownBy(() -> atRoot.isLeader("zookeeper"))
				.withMessageContaining("reserved");
		}
	}

	@Test
	void getLeaderFailsWhenZooKeeperCannotAnswer() throws Exception {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = socket.getLocalPort();
		}
		CuratorFramework unreachable = zooKeeper.newStartedClient((builder) -> builder
			.connectString("127.0.0.1:" + closedPort)
			.connectionTimeoutMs(500)
			.retryPolicy(new RetryOneTime(100)));
		try (CuratorLeadership leadership = new CuratorLeadership(unreachable, BASE_PATH, "p1")) {
			assertTimeoutPreemptively(LONG, () -> {
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> leadership.getLeader(this.group))
					.withMessageContaining("'" + this.group + "'")
					.withMessageContaining("unreachable");
			});
			assertThat(leadership.isLeader(this.group)).isFalse();
		}
	}

	/**
	 * The leader's session is expired on the server (a long partition, ended): its znode goes, so
	 * the next participant leads at once; the old leader is told when the server drops its
	 * connection. Both within the session timeout + 1 s. The old leader then gets a new session and
	 * Curator queues it again with a new znode (the latch checks its znode on RECONNECTED and finds
	 * it gone), without leading.
	 */
	@Test
	void termTokensIncreaseFromLeaderToLeaderAndAnEndedTermIsLostForGood() throws Exception {
		CuratorFramework firstClient = zooKeeper.newClient((builder) -> builder
			.sessionTimeoutMs((int) SHORT_SESSION.toMillis())
			.connectionTimeoutMs((int) SHORT_SESSION.toMillis()));
		Participant first = participant("p1", firstClient);
		Participant second = participant("p2");
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		second.leadership().join(this.group);
		awaitZnodes(2);
		assertThat(second.leadership().term(this.group)).as("a participant that does not lead").isEmpty();

		LockHandle firstTerm = first.leadership().term(this.group).orElseThrow();
		assertThat(firstTerm.path()).isEqualTo(BASE_PATH + "/" + this.group);
		assertThat(firstTerm.state()).isEqualTo(LockState.HELD);
		long firstToken = firstTerm.fencingToken();

		// Yielded: the term ends for good, the next leader's token is higher.
		first.leadership().yieldLeadership(this.group);
		assertThat(second.leadership().awaitLeadership(this.group, LONG)).isTrue();
		assertThat(firstTerm.state()).isEqualTo(LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(firstTerm::fencingToken);
		LockHandle secondTerm = second.leadership().term(this.group).orElseThrow();
		long secondToken = secondTerm.fencingToken();
		assertThat(secondToken).isGreaterThan(firstToken);
		assertThat(secondTerm.path()).isEqualTo(firstTerm.path());

		// The first participant leads again after the second yields: a new term, a higher token.
		second.leadership().yieldLeadership(this.group);
		assertThat(first.leadership().awaitLeadership(this.group, LONG)).isTrue();
		LockHandle thirdTerm = first.leadership().term(this.group).orElseThrow();
		long thirdToken = thirdTerm.fencingToken();
		assertThat(thirdToken).isGreaterThan(secondToken);
		assertThat(secondTerm.isHeld()).isFalse();

		// Its session expires: the term is lost, and the next leader's token is higher again.
		zooKeeper.expireSession(firstClient);
		assertThat(second.leadership().awaitLeadership(this.group, LONG)).isTrue();
		await().atMost(LONG).until(() -> thirdTerm.state() == LockState.LOST);
		assertThat(second.leadership().term(this.group).orElseThrow().fencingToken()).isGreaterThan(thirdToken);
		// Back in a new session, the first participant queues behind: no term.
		assertThat(first.leadership().term(this.group)).isEmpty();
	}

	@Test
	void leaderWhoseSessionExpiresIsToldAndReplacedWithinTheSessionTimeout() throws Exception {
		CuratorFramework leaderClient = zooKeeper.newClient((builder) -> builder
			.sessionTimeoutMs((int) SHORT_SESSION.toMillis())
			.connectionTimeoutMs((int) SHORT_SESSION.toMillis()));
		Participant old = participant("p1", leaderClient);
		assertThat(old.leadership().awaitLeadership(this.group, LONG)).isTrue();
		List<Participant> others = List.of(participant("p2"), participant("p3"));
		others.forEach((participant) -> participant.leadership().join(this.group));
		awaitZnodes(3);
		long oldSession = leaderClient.getZookeeperClient().getZooKeeper().getSessionId();

		long expiring = System.nanoTime();
		zooKeeper.expireSession(leaderClient);
		Duration bound = SHORT_SESSION.plusSeconds(1);
		await().atMost(LONG)
			.until(() -> old.events().firstAt(REVOKED, this.group) != 0
					&& others.stream().anyMatch((other) -> other.events().firstAt(GRANTED, this.group) != 0));
		long toldAt = old.events().firstAt(REVOKED, this.group);
		Participant next = others.stream()
			.filter((other) -> other.events().firstAt(GRANTED, this.group) != 0)
			.findFirst()
			.orElseThrow();
		long grantedAt = next.events().firstAt(GRANTED, this.group);
		long toldMs = TimeUnit.NANOSECONDS.toMillis(toldAt - expiring);
		long grantedMs = TimeUnit.NANOSECONDS.toMillis(grantedAt - expiring);
		System.out.printf("LEADERSHIP handover=expiry old_told_ms=%d new_leader_ms=%d session_timeout_ms=%d%n", toldMs,
				grantedMs, SHORT_SESSION.toMillis());

		assertThat(Duration.ofMillis(toldMs)).as("old leader told after").isLessThanOrEqualTo(bound);
		assertThat(Duration.ofMillis(grantedMs)).as("next leader granted after").isLessThanOrEqualTo(bound);
		assertThat(old.events().events(this.group).get(1).leaderWhenTold()).as("isLeader when told").isFalse();
		assertThat(old.leadership().isLeader(this.group)).isFalse();

		// Queued again in the new session, and exactly one leader.
		await().atMost(LONG).ignoreExceptions().until(() -> {
			long session = leaderClient.getZookeeperClient().getZooKeeper().getSessionId();
			return session != oldSession && znodeOwners().contains(session) && znodeOwners().size() == 3;
		});
		List<Participant> all = List.of(old, others.get(0), others.get(1));
		Participant leader = awaitSingleLeader(all);
		assertThat(leader).isSameAs(next);
		for (Participant participant : all) {
			assertThat(participant.leadership().getLeader(this.group)).contains(next.id());
		}
		awaitEvents(old, GRANTED, REVOKED);
		awaitEvents(next, GRANTED);
	}

	private Participant participant(String id) throws InterruptedException {
		return participant(id, zooKeeper.newClient());
	}

	private Participant participant(String id, CuratorFramework client) {
		CuratorLeadership leadership = new CuratorLeadership(client, BASE_PATH, id);
		Participant participant = new Participant(id, client, leadership,
				RecordingLeadershipListener.recording(leadership));
		this.participants.add(participant);
		return participant;
	}

	/** Wait until exactly one participant says it leads and its znode is first; return it. */
	private Participant awaitSingleLeader(List<Participant> all) {
		List<Participant> leaders = new ArrayList<>();
		await().atMost(LONG).until(() -> {
			leaders.clear();
			for (Participant participant : all) {
				if (participant.leadership().isLeader(this.group)) {
					leaders.add(participant);
				}
			}
			return leaders.size() == 1;
		});
		return leaders.get(0);
	}

	/**
	 * Wait until a participant was told exactly these events of the group, in this order: they are
	 * published just after the change, which {@code isLeader} sees at once. A duplicate fails.
	 */
	private void awaitEvents(Participant participant, String... kinds) {
		await().atMost(LONG)
			.untilAsserted(() -> assertThat(participant.events().kinds(this.group)).as(participant.id())
				.containsExactly(kinds));
	}

	/** Wait until the group has this many znodes; return their names. */
	private List<String> awaitZnodes(int count) {
		List<String> znodes = new ArrayList<>();
		await().atMost(LONG).until(() -> {
			znodes.clear();
			znodes.addAll(children());
			return znodes.size() == count;
		});
		return znodes;
	}

	private List<Long> znodeOwners() throws Exception {
		List<Long> owners = new ArrayList<>();
		for (String child : children()) {
			Stat stat = observer.checkExists().forPath(latchPath() + "/" + child);
			if (stat != null) {
				owners.add(stat.getEphemeralOwner());
			}
		}
		return owners;
	}

	private List<String> children() throws Exception {
		try {
			return observer.getChildren().forPath(latchPath());
		}
		catch (KeeperException.NoNodeException ex) {
			// Not created yet, or reaped (a container) after its last znode went.
			return List.of();
		}
	}

	private String latchPath() {
		return BASE_PATH + "/" + this.group;
	}

	/** One instance of the application: its client, its leadership, what it was told. */
	private record Participant(String id, CuratorFramework client, CuratorLeadership leadership,
			RecordingLeadershipListener events) {

	}

}
