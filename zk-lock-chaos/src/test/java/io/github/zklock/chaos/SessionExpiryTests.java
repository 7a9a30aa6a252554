package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.zklock.LockHandle;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.ChainLoad;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LockThread;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.handedOver;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Sessions expired on the server (a second connection takes the session over and closes it): a
 * waiter's, which is then granted in its new session; and, with local hand-off, the session of an
 * application whose threads chain on the key, expired while one of them holds it: none of its
 * threads rides the dead znode. A holder's session closed while another client waits, measured per
 * client socket, is {@link SessionCloseTests}.
 */
@Tag("chaos")
class SessionExpiryTests {

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	/** A server per test (each socket's run of the parameterized test too), with the chaos tick. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private Contender contender;

	@BeforeEach
	void start() throws Exception {
		this.contender = new Contender(this.zooKeeper);
	}

	@AfterEach
	void stop() throws Exception {
		// The extension closes the clients and the server after this.
		this.contender.close();
	}

	/**
	 * A waiter's session expires while it waits. Curator's mutex then creates a new lock znode in
	 * the new session (its retry on the lost znode) and, once the holder releases, grants the lock
	 * on that znode. The grant is real: its znode exists and belongs to the waiter's current
	 * session, so the handle must say HELD and give a fencing token.
	 */
	@Test
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void waiterWhoseSessionExpiredIsGrantedAHeldLockInItsNewSession() throws Exception {
		String path = "/waiter-expiry";
		String lockPath = LockWorker.ROOT + path;
		LockHandle held = this.contender.registry().tryAcquire(Chaos.exclusive(path, Duration.ZERO)).orElseThrow();
		long holderSession = this.contender.client().getZookeeperClient().getZooKeeper().getSessionId();
		CuratorFramework waiterClient = this.zooKeeper.newClient(Chaos.clientSettings(SESSION_TIMEOUT, ClientSocket.NIO));
		CuratorLockRegistry waiter = new CuratorLockRegistry(waiterClient, LockWorker.ROOT, 16);
		try {
			long firstSession = waiterClient.getZookeeperClient().getZooKeeper().getSessionId();
			Future<String[]> granted = this.contender.submit(() -> {
				LockHandle handle = waiter.tryAcquire(Chaos.exclusive(path, Duration.ofSeconds(60))).orElseThrow();
				try {
					String session = Long.toHexString(waiterClient.getZookeeperClient().getZooKeeper().getSessionId());
					return new String[] { handle.state().name(), session, String.join(",", owners(waiterClient, lockPath)) };
				}
				finally {
					handle.release();
				}
			});
			Chaos.awaitLockNodes(this.contender.client(), lockPath, 2);
			Chaos.expireSession(waiterClient, this.zooKeeper.getConnectString(), Duration.ofSeconds(20));
			// The waiter is queued again, with a znode of a session that is neither the holder's nor its first.
			await().atMost(Duration.ofSeconds(30)).until(() -> owners(this.contender.client(), lockPath).stream()
				.anyMatch((owner) -> !owner.equals(Long.toHexString(holderSession))
						&& !owner.equals(Long.toHexString(firstSession))));
			held.release();
			String[] grant = granted.get(60, TimeUnit.SECONDS);
			Chaos.report("waiter_expiry state_of_grant=%s waiter_session=%s lock_znode_owners=%s", grant[0], grant[1],
					grant[2]);
			assertThat(grant[2]).as("owner of the granted lock znode").isEqualTo(grant[1]);
			assertThat(grant[0]).as("state of a grant whose znode belongs to the current session")
				.isEqualTo(LockState.HELD.name());
		}
		finally {
			waiter.close();
			waiterClient.close();
		}
	}

	/**
	 * Local hand-off on (the default): four threads of application A take the key in turns, most
	 * grants handed over locally; then a fifth thread of A holds it mid-chain, the others queue
	 * behind it locally, the contender (application B) queues in ZooKeeper, and A's session is
	 * expired on the server. The holder is told: in doubt when its connection is closed, lost once
	 * the client reconnects and learns of the expiry. It releases when told the given state (in
	 * doubt: while the client is disconnected; lost: in the new session). No thread of A is ever
	 * handed a grant on the dead znode: every grant of A after the holder's has a higher token, and
	 * the first is made through ZooKeeper (not a local hand-off) and held. B is granted, with a
	 * higher token, and no holder of either application is ever inside the key with another.
	 */
	@ParameterizedTest
	@EnumSource(value = LockState.class, names = { "IN_DOUBT", "LOST" })
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void sessionExpiryMidChainLosesTheHolderAndNoWaiterRidesTheDeadZnode(LockState releaseWhen) throws Exception {
		String path = "/chain-expiry";
		Duration wait = Duration.ofSeconds(30);
		CuratorFramework clientA = this.zooKeeper.newClient(Chaos.clientSettings(SESSION_TIMEOUT, ClientSocket.NIO));
		CuratorLockRegistry applicationA = new CuratorLockRegistry(clientA, LockWorker.ROOT, 16);
		List<LockStateEvent> events = new CopyOnWriteArrayList<>();
		AtomicReference<LockHandle> holderGrant = new AtomicReference<>();
		CountDownLatch told = new CountDownLatch(1);
		applicationA.addLockStateListener((event) -> {
			events.add(event);
			if (event.handle() == holderGrant.get() && event.state() == releaseWhen) {
				told.countDown();
			}
		});
		ChainLoad.Section section = new ChainLoad.Section();
		LockThread holderThread = new LockThread("holder");
		LockThread contenderThread = new LockThread("contender");
		ChainLoad chain = ChainLoad.startRetrying(applicationA, Chaos.exclusive(path, wait), 4, Duration.ofMillis(1),
				section);
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> chain.localCount() >= 10);
			LockHandle held = holderThread.acquire(applicationA, Chaos.exclusive(path, wait));
			holderGrant.set(held);
			long heldToken = held.fencingToken();
			// The chain's threads wait behind the holder: every later grant of A comes after it.
			int grantsBefore = chain.count();
			CompletableFuture<long[]> contenderGrant = contenderThread.submit(() -> {
				LockHandle granted = this.contender.registry().tryAcquire(Chaos.exclusive(path, wait)).orElseThrow();
				try {
					long[] grant = { granted.fencingToken(), granted.isHeld() ? 1 : 0 };
					section.hold(Duration.ofMillis(20));
					return grant;
				}
				finally {
					granted.release();
				}
			});
			Chaos.awaitLockNodes(this.contender.client(), LockWorker.ROOT + path, 2);
			// The holder releases as soon as it is told.
			CompletableFuture<LockState> released = holderThread.submit(() -> {
				assertThat(told.await(20, TimeUnit.SECONDS)).as("holder told %s", releaseWhen).isTrue();
				LockState state = held.state();
				held.release();
				return state;
			});

			Chaos.expireSession(clientA, this.zooKeeper.getConnectString(), Duration.ofSeconds(20));
			LockState stateAtRelease = released.get(30, TimeUnit.SECONDS);
			assertThat(events).as("listener told the holder")
				.filteredOn((event) -> event.handle() == held)
				.extracting(LockStateEvent::state)
				.startsWith(LockState.IN_DOUBT)
				.contains(releaseWhen);
			long[] contenderGot = contenderGrant.get(30, TimeUnit.SECONDS);
			await().atMost(Duration.ofSeconds(30)).until(() -> chain.count() >= grantsBefore + 5);
			chain.close();

			List<ChainLoad.Grant> before = chain.grants().subList(0, grantsBefore);
			List<ChainLoad.Grant> after = chain.grants().subList(grantsBefore, chain.count());
			Chaos.report("chain_expiry release_when=%s state_at_release=%s holder_local=%s holder_token=%d "
					+ "a_grants_before=%d a_local_before=%d a_grants_after=%d first_after=%s contender_token=%d "
					+ "lock_exceptions=%d %s", releaseWhen, stateAtRelease, handedOver(held), heldToken, before.size(),
					before.stream().filter(ChainLoad.Grant::local).count(), after.size(), after.get(0), contenderGot[0],
					chain.lockExceptions().size(), chain.lockExceptions());
			assertThat(after.get(0).local()).as("first grant of A after the expiry handed over locally").isFalse();
			assertThat(after.get(0).held()).as("first grant of A after the expiry held").isTrue();
			assertThat(after).as("grants of A after the holder's")
				.allSatisfy((grant) -> assertThat(grant.token()).isGreaterThan(heldToken));
			assertThat(contenderGot[1]).as("contender's grant held").isOne();
			assertThat(contenderGot[0]).as("contender's token").isGreaterThan(heldToken);
			assertThat(section.overlaps()).as("holders inside the key at once").isZero();
		}
		finally {
			chain.close();
			holderThread.close();
			contenderThread.close();
			applicationA.close();
		}
	}

	/** The sessions (hex) owning the znodes below a lock path. */
	private static List<String> owners(CuratorFramework client, String lockPath) throws Exception {
		List<String> owners = new ArrayList<>();
		for (String child : client.getChildren().forPath(lockPath)) {
			Stat stat = client.checkExists().forPath(lockPath + "/" + child);
			if (stat != null) {
				owners.add(Long.toHexString(stat.getEphemeralOwner()));
			}
		}
		return owners;
	}

}
