package io.github.zklock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on {@link ZkLockRegistry}: two
 * "applications" (two clients, two initiators) campaign for one role.
 *
 * <p>The initiator's loop, as of Spring Integration 7.0.5: {@code tryLock(heartBeat)}; a
 * candidate that gets the lock is leader; a leader calls {@code tryLock(heartBeat)} again at every
 * heartbeat and, when granted, {@code unlock()} at once, then sleeps a heartbeat; a leader whose
 * {@code tryLock} fails or throws is revoked (after one {@code unlock()}); {@code stop()} interrupts
 * the loop, which unlocks once if leader. The heartbeat re-lock therefore nests one grant in the
 * leader's own and releases it: with zk-lock's reentrant views the hold count goes 1, 2, 1 and never
 * grows, and the final {@code unlock()} releases the lock znode. These tests check it: the leader
 * holds one or two grants at any time, and none (no znode either) once stopped.
 *
 * <p>The heartbeat re-lock is also how the initiator learns that its lock is gone. Curator grants
 * a re-entry locally, so a leader whose session expired would re-lock successfully for ever while
 * the other candidate, finding the znode gone, leads too; the view refuses to re-enter a lost
 * grant ({@code LockLostException}), and the initiator then unlocks and revokes. With a default
 * time to live, each heartbeat's re-lock renews the leader's grant.
 */
class LockRegistryLeaderInitiatorTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROLE = "cluster-singleton";

	private static final Duration BOUND = Duration.ofSeconds(10);

	private Application first;

	private Application second;

	private CuratorFramework observer;

	private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();

	@BeforeEach
	void start() throws InterruptedException {
		this.first = Application.start(zooKeeper);
		this.second = Application.start(zooKeeper);
		this.observer = zooKeeper.newClient();
	}

	@AfterEach
	void stop() {
		this.initiators.forEach(LockRegistryLeaderInitiator::destroy);
		this.first.registry().close();
		this.second.registry().close();
	}

	@Test
	void electsExactlyOneLeaderThatStaysLeaderThroughItsHeartbeats() {
		Campaign one = campaign(this.first, "one");
		Campaign two = campaign(this.second, "two");
		await().atMost(BOUND).until(() -> one.candidate.grants.get() + two.candidate.grants.get() == 1);
		Campaign leader = (one.candidate.grants.get() == 1) ? one : two;
		Campaign follower = (leader == one) ? two : one;
		// About 15 heartbeats: each nests a grant in the leader's and releases it again.
		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> {
			int held = new CuratorLockAdmin(leader.application.registry()).heldLockCount();
			return leader.initiator.getContext().isLeader() && !follower.initiator.getContext().isLeader()
					&& leader.candidate.grants.get() == 1 && follower.candidate.grants.get() == 0
					&& leader.candidate.revocations.get() == 0 && (held == 1 || held == 2);
		});
	}

	@Test
	void aLeaderWithATimeToLiveStaysLeaderPastItThroughItsHeartbeats() {
		// Each heartbeat's re-lock renews the leader's grant: three times the ttl without a revocation.
		Duration ttl = Duration.ofMillis(500);
		this.first.locks().setDefaultTtl(ttl);
		this.second.locks().setDefaultTtl(ttl);
		Campaign one = campaign(this.first, "one");
		Campaign two = campaign(this.second, "two");
		await().atMost(BOUND).until(() -> one.candidate.grants.get() + two.candidate.grants.get() == 1);
		Campaign leader = (one.candidate.grants.get() == 1) ? one : two;
		Campaign follower = (leader == one) ? two : one;
		await().during(ttl.multipliedBy(3)).atMost(Duration.ofSeconds(5)).until(() -> leader.initiator.getContext()
			.isLeader() && !follower.initiator.getContext().isLeader() && leader.candidate.grants.get() == 1
				&& follower.candidate.grants.get() == 0 && leader.candidate.revocations.get() == 0);
	}

	@Test
	void handsLeadershipOverWhenTheLeaderStopsAndLeavesNoLockBehind() throws Exception {
		Campaign one = campaign(this.first, "one");
		Campaign two = campaign(this.second, "two");
		await().atMost(BOUND).until(() -> one.candidate.grants.get() + two.candidate.grants.get() == 1);
		Campaign leader = (one.candidate.grants.get() == 1) ? one : two;
		Campaign follower = (leader == one) ? two : one;

		long stopped = System.nanoTime();
		leader.initiator.stop();
		await().atMost(BOUND).until(() -> follower.candidate.grants.get() == 1);
		assertThat(Duration.ofNanos(System.nanoTime() - stopped)).as("hand-over").isLessThan(Duration.ofSeconds(5));
		await().atMost(BOUND).until(() -> leader.candidate.revocations.get() == 1);
		assertThat(leader.candidate.grants).hasValue(1);
		assertThat(new CuratorLockAdmin(leader.application.registry()).heldLockCount()).as("grants left by the stopped leader").isZero();
		await().atMost(BOUND).until(() -> lockZnodes().size() == 1);

		follower.initiator.stop();
		await().atMost(BOUND).until(() -> follower.candidate.revocations.get() == 1);
		assertThat(new CuratorLockAdmin(follower.application.registry()).heldLockCount()).isZero();
		await().atMost(BOUND).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void publishesGrantedAndRevokedEventsForTheRole() {
		Campaign only = campaign(this.first, "only");
		await().atMost(BOUND).until(() -> only.events.size() == 1);
		assertThat(only.events.get(0)).isInstanceOfSatisfying(OnGrantedEvent.class, (granted) -> {
			assertThat(granted.getRole()).isEqualTo(ROLE);
			assertThat(granted.getSource()).isSameAs(only.initiator);
			assertThat(granted.getContext().isLeader()).isTrue();
		});
		only.initiator.stop();
		await().atMost(BOUND).until(() -> only.events.size() == 2);
		assertThat(only.events.get(1)).isInstanceOfSatisfying(OnRevokedEvent.class,
				(revoked) -> assertThat(revoked.getRole()).isEqualTo(ROLE));
		assertThat(new CuratorLockAdmin(only.application.registry()).heldLockCount()).isZero();
	}

	@Test
	void yieldingHandsLeadershipToTheOtherCandidate() {
		Campaign one = campaign(this.first, "one");
		await().atMost(BOUND).until(() -> one.candidate.grants.get() == 1);
		// The other candidate queues behind the leader, and stays queued: its tryLock waits longer
		// than the test. With a short heartbeat it would leave the queue after each one and queue
		// again a busy wait later, and the yielding leader, which tries again a busy wait after its
		// unlock, could find the lock free first and lead again: a yield gives the others a chance,
		// it does not hand over (the initiator's own tests check only the revocation).
		Campaign two = campaign(this.second, "two", BOUND.multipliedBy(2));
		await().atMost(BOUND).until(() -> lockZnodes().size() == 2);

		one.initiator.getContext().yield();
		await().atMost(BOUND).until(() -> two.candidate.grants.get() == 1);
		// Spring Integration unlocks before it tells the candidate: the other may be granted first.
		await().atMost(BOUND).untilAsserted(() -> {
			assertThat(one.candidate.revocations).hasValue(1);
			assertThat(one.initiator.getContext().isLeader()).isFalse();
		});
	}

	@Test
	void leaderWhoseSessionExpiresIsRevokedAndTheOtherCandidateLeads() throws Exception {
		Campaign one = campaign(this.first, "one");
		await().atMost(BOUND).until(() -> one.candidate.grants.get() == 1);
		Campaign two = campaign(this.second, "two");
		await().atMost(BOUND).until(() -> lockZnodes().size() == 2);

		this.first.expireSession(zooKeeper);
		await().atMost(BOUND).until(() -> two.candidate.grants.get() == 1);
		await().atMost(BOUND).until(() -> one.candidate.revocations.get() == 1);
		assertThat(one.initiator.getContext().isLeader()).isFalse();
	}

	private Campaign campaign(Application application, String id) {
		return campaign(application, id, Duration.ofMillis(100));
	}

	/**
	 * @param heartBeat how long the candidate's {@code tryLock} waits, and how often a leader locks
	 * again
	 */
	private Campaign campaign(Application application, String id, Duration heartBeat) {
		CountingCandidate candidate = new CountingCandidate(id);
		LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(application.locks(), candidate);
		initiator.setHeartBeatMillis(heartBeat.toMillis());
		initiator.setBusyWaitMillis(10);
		List<AbstractLeaderEvent> events = new CopyOnWriteArrayList<>();
		initiator.setLeaderEventPublisher(new DefaultLeaderEventPublisher((event) -> {
			if (event instanceof AbstractLeaderEvent leaderEvent) {
				events.add(leaderEvent);
			}
		}));
		this.initiators.add(initiator);
		initiator.start();
		return new Campaign(application, candidate, initiator, events);
	}

	private List<String> lockZnodes() throws Exception {
		try {
			return this.observer.getChildren().forPath(Application.lockPath(ROLE));
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

	private record Campaign(Application application, CountingCandidate candidate,
			LockRegistryLeaderInitiator initiator, List<AbstractLeaderEvent> events) {
	}

	private static final class CountingCandidate extends AbstractCandidate {

		final AtomicInteger grants = new AtomicInteger();

		final AtomicInteger revocations = new AtomicInteger();

		CountingCandidate(String id) {
			super(id, ROLE);
		}

		@Override
		public void onGranted(Context context) {
			this.grants.incrementAndGet();
		}

		@Override
		public void onRevoked(Context context) {
			this.revocations.incrementAndGet();
		}

	}

}
