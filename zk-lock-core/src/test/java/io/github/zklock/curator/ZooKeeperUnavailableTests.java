package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A stopped ZooKeeper is reported as an infrastructure failure, never as a busy lock; held grants
 * and {@link CuratorLockRegistry#lastConnectionState()} follow the connection through a server stop,
 * restart and session expiry.
 */
class ZooKeeperUnavailableTests {

	/** One server per test: the tests stop it. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private TestingServer server;

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	@BeforeEach
	void start() throws Exception {
		this.server = this.zooKeeper.getServer();
		this.client = this.zooKeeper.newClient((builder) -> builder.connectionTimeoutMs(1000)
			.sessionTimeoutMs(4000)
			.retryPolicy(new RetryOneTime(100)));
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
	}

	@AfterEach
	void stop() {
		// The extension closes the clients and the server after this.
		this.registry.close();
	}

	@Test
	void serverDownIsALockExceptionNotBusy() throws Exception {
		this.server.stop();
		for (LockMode mode : LockMode.values()) {
			LockTarget request = new LockTarget("/down", mode, true, 0, Duration.ofMillis(100));
			assertTimeoutPreemptively(Duration.ofSeconds(20),
					() -> assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> this.registry.tryAcquire(request))
						.isNotInstanceOf(LockAcquisitionException.class)
						.withMessageContaining("ZooKeeper is unreachable"));
		}
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void serverDownWhileWaitingInTheLocalQueueIsALockExceptionNotBusy() throws Exception {
		LockHandle held = this.registry.tryAcquire(exclusive("/queued", Duration.ZERO)).orElseThrow();
		// A successor of this process queues in ZooKeeper; a third thread would wait locally.
		Thread successor = new Thread(() -> {
			try {
				this.registry.tryAcquire(exclusive("/queued", Duration.ofSeconds(3)));
			}
			catch (LockException ex) {
				// The server stops under it: expected.
			}
		});
		successor.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> admin(this.registry).describeWaitingLocks().size() == 1);
		this.server.stop();
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.client.getZookeeperClient().isConnected());
		assertTimeoutPreemptively(Duration.ofSeconds(20),
				() -> assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> this.registry.tryAcquire(exclusive("/queued", Duration.ofMillis(300))))
					.isNotInstanceOf(LockAcquisitionException.class)
					.withMessageContaining("ZooKeeper"));
		held.release();
		successor.join(30_000);
		assertThat(successor.isAlive()).isFalse();
	}

	@Test
	void heldLockIsInDoubtWhenTheConnectionIsSuspended() {
		// One thread from grant to release, as the grant is bound to it.
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
			LockHandle handle = this.registry.tryAcquire(exclusive("/held", Duration.ZERO)).orElseThrow();
			assertThat(handle.isHeld()).isTrue();
			this.server.stop();
			await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
			assertThatExceptionOfType(LockLostException.class).isThrownBy(handle::checkHeld);
			// Releasing without a server logs and returns: the ephemeral znode dies with the session.
			handle.release();
		});
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void heldLockIsRegainedWhenTheSameSessionReconnects() {
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
			LockHandle handle = this.registry.tryAcquire(exclusive("/regained", Duration.ZERO)).orElseThrow();
			long token = handle.fencingToken();
			List<LockStateEvent> events = new CopyOnWriteArrayList<>();
			this.registry.addLockStateListener(events::add);
			List<ConnectionState> states = new CopyOnWriteArrayList<>();
			this.client.getConnectionStateListenable().addListener((client, state) -> states.add(state));
			// A quick restart keeps the session (it is in the server's log): SUSPENDED, then RECONNECTED.
			this.server.restart();
			await().atMost(Duration.ofSeconds(15)).until(() -> states.contains(ConnectionState.RECONNECTED));
			assertThat(states).startsWith(ConnectionState.SUSPENDED).doesNotContain(ConnectionState.LOST);
			// Curator calls its connection state listeners in no fixed order: the registry's may come
			// after the test's.
			await().atMost(Duration.ofSeconds(15))
				.untilAsserted(() -> assertThat(events).extracting(LockStateEvent::state)
					.containsExactly(LockState.IN_DOUBT, LockState.HELD));
			assertThat(handle.isHeld()).isTrue();
			assertThat(handle.fencingToken()).isEqualTo(token);
			assertThat(events).extracting(LockStateEvent::state).containsExactly(LockState.IN_DOUBT, LockState.HELD);
			assertThat(events).allSatisfy((event) -> {
				assertThat(event.handle()).isSameAs(handle);
				assertThat(event.fencingToken()).hasValue(token);
			});
			handle.release();
		});
	}

	@Test
	void expiredSessionLosesTheLockForGood() throws Exception {
		CuratorFramework other = this.zooKeeper.newClient((builder) -> builder.retryPolicy(new RetryOneTime(100)));
		CuratorLockRegistry otherProcess = new CuratorLockRegistry(other, "/locks", 10);
		try {
			assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
				LockHandle handle = this.registry.tryAcquire(exclusive("/expired", Duration.ZERO)).orElseThrow();
				long token = handle.fencingToken();
				this.client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
				await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
				LockHandle next = otherProcess.tryAcquire(exclusive("/expired", Duration.ofSeconds(10)))
					.orElseThrow();
				assertThat(next.fencingToken()).isGreaterThan(token);
				// Even after this client reconnects with a new session, the old grant stays lost.
				await().atMost(Duration.ofSeconds(10)).until(() -> this.client.getZookeeperClient().isConnected());
				assertThat(handle.isHeld()).isFalse();
				assertThatExceptionOfType(LockLostException.class).isThrownBy(handle::checkHeld)
					.withMessageContaining("session was lost");
				handle.release();
				next.release();
			});
		}
		finally {
			otherProcess.close();
		}
	}

	/**
	 * Curator may report an expired session's LOST once more after the new session connected: its
	 * connection state thread forces RECONNECTED when it finds the new handle connected while its
	 * state is still LOST (CURATOR-525), and the framework's check of the handle's instance on that
	 * connection ({@code CuratorFrameworkImpl.checkInstanceIndex}) then posts LOST, and RECONNECTED
	 * again. A grant made in the new session before that late LOST is delivered is not lost by it:
	 * it stays held, with no event, and its thread is not interrupted. The sessions are real; the late
	 * LOST is delivered to the registry as Curator's connection state thread delivers it (that thread
	 * being late is the race, which a test on a real server cannot order).
	 */
	@Test
	void grantOfTheNewSessionStaysHeldWhenCuratorReportsTheExpiredSessionLostLate() {
		// One thread from grant to release, as the grant is bound to it.
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
			LockHandle expired = this.registry.tryAcquire(exclusive("/late-lost", Duration.ZERO)).orElseThrow();
			this.zooKeeper.expireSession(this.client);
			await().atMost(Duration.ofSeconds(10)).until(() -> expired.state() == LockState.LOST);
			expired.release();
			awaitConnectionState(this.registry, ConnectionState.RECONNECTED);
			this.registry.setInterruptOnLost(true);
			List<LockStateEvent> events = new CopyOnWriteArrayList<>();
			this.registry.addLockStateListener(events::add);
			LockHandle current = this.registry.tryAcquire(exclusive("/late-lost", Duration.ofSeconds(10)))
				.orElseThrow();
			long token = current.fencingToken();

			this.registry.held().stateChanged(this.client, ConnectionState.LOST);
			this.registry.held().stateChanged(this.client, ConnectionState.RECONNECTED);

			assertThat(Thread.interrupted()).as("holder interrupted").isFalse();
			assertThat(current.state()).isEqualTo(LockState.HELD);
			assertThat(current.fencingToken()).isEqualTo(token);
			assertThat(events).isEmpty();
			current.release();
		});
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void lastConnectionStateFollowsTheConnection() throws Exception {
		// A registry whose client never connected yet has seen no state. (One made right after its
		// client connected may still be told CONNECTED: Curator reports it on a thread of its own.)
		this.server.stop();
		// Curator reports LOST once its client was suspended for the session timeout: 2 s (was 4 s),
		// twice the server's least (its 1 s tick), so that a live link never times out here.
		CuratorFramework late = this.zooKeeper.newStartedClient((builder) -> builder.connectionTimeoutMs(1000)
			.sessionTimeoutMs(2000)
			.retryPolicy(new RetryOneTime(100)));
		CuratorLockRegistry lateRegistry = new CuratorLockRegistry(late, "/locks", 10);
		CuratorLockRegistry sameClient = new CuratorLockRegistry(late, "/locks", 10);
		assertThat(admin(lateRegistry).lastConnectionState()).isNull();

		this.server.restart();
		awaitConnectionState(lateRegistry, ConnectionState.CONNECTED);
		this.server.stop();
		awaitConnectionState(lateRegistry, ConnectionState.SUSPENDED);
		// Curator gives the session up after its timeout without a server.
		awaitConnectionState(lateRegistry, ConnectionState.LOST);
		this.server.restart();
		awaitConnectionState(lateRegistry, ConnectionState.RECONNECTED);
		awaitConnectionState(this.registry, ConnectionState.RECONNECTED);

		// A closed registry no longer follows: one still open on the same client (told of each change
		// in the same round) sees the next change, the closed one does not.
		lateRegistry.close();
		this.server.stop();
		awaitConnectionState(sameClient, ConnectionState.SUSPENDED);
		assertThat(admin(lateRegistry).lastConnectionState()).isEqualTo(ConnectionState.RECONNECTED);
		sameClient.close();
	}

	private static void awaitConnectionState(CuratorLockRegistry registry, ConnectionState state) {
		await().atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> admin(registry).lastConnectionState(), (last) -> last == state);
	}

	private static LockTarget exclusive(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.EXCLUSIVE, true, 0, waitTime);
	}

}
