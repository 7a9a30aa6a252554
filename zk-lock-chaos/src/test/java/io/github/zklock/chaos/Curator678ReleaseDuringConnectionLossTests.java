package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
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
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LockThread;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Admins.chainLength;
import static io.github.zklock.curator.Polling.await;
import static io.github.zklock.curator.Targets.asRequest;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * <a href="https://issues.apache.org/jira/browse/CURATOR-678">CURATOR-678</a>: a grant is released
 * while its application's connection is lost but its session survives (a release whose delete fails
 * on the lost connection must not leave the lock znode behind). Application A holds a key through
 * its own client, connected through a {@link TcpProxy}, and its own {@link LockTemplate};
 * application B, connected directly, waits for the key. A's connection is dropped (new connections
 * refused), A's grant goes in doubt, and A's template releases it while A is still disconnected.
 * The release must return within a bound set by A's connection timeout and retry policy (Curator's
 * delete waits for a connection, then retries, then leaves the delete to its background guaranteed
 * delete and throws; the failure is logged), A's znode must be gone once A reconnects in the same
 * session, B must then be granted within a bound, and no znode of A's session may be left below the
 * lock path. Run for each lock kind whose release differs: a reentrant EXCLUSIVE lock
 * ({@code InterProcessMutex}, through the local hand-off's link), READ and WRITE
 * ({@code InterProcessReadWriteLock}), a non-reentrant EXCLUSIVE lock and a permit of a semaphore
 * (leases of {@code InterProcessSemaphoreV2}). And with a second thread of A waiting locally for
 * the key (local hand-off): a turn that ends while the connection is down never hands its znode on;
 * the second thread queues again in ZooKeeper, after B, and is granted a znode of its own once B is
 * done.
 */
@Tag("chaos")
class Curator678ReleaseDuringConnectionLossTests {

	private static final String PATH = "/release-cut";

	/** A's session timeout: longer than any cut here, so that the session survives it. */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(20);

	/** A's connection timeout: how long one Curator operation first waits for a connection. */
	private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(1);

	/** A's retries of a failed operation, with sleeps from 100 ms up to {@link #MAX_SLEEP}. */
	private static final int MAX_RETRIES = 1;

	private static final Duration MAX_SLEEP = Duration.ofMillis(400);

	/**
	 * Longest one try of a Curator operation waits while connections are refused: the ZooKeeper
	 * client fails the request when its next connection attempt fails, and with one server it sleeps
	 * a second plus up to another before each attempt.
	 */
	private static final Duration TRY_BOUND = Duration.ofMillis(2200);

	/**
	 * Longest a release may take while the connection is refused: the wait for a connection, one
	 * try plus {@link #MAX_RETRIES} retries, the sleeps between them, and a second for a loaded
	 * machine. About 3.5 s is typical with the settings above.
	 */
	private static final Duration RELEASE_BOUND = CONNECTION_TIMEOUT.plus(TRY_BOUND.multipliedBy(MAX_RETRIES + 1))
		.plus(MAX_SLEEP.multipliedBy(MAX_RETRIES))
		.plus(Duration.ofSeconds(1));

	/** Longest B may wait for its grant once A has reconnected (the guaranteed delete, a watch). */
	private static final Duration GRANT_AFTER_RECONNECT_BOUND = Duration.ofSeconds(5);

	private static final Duration WAIT = Duration.ofSeconds(30);

	/** One server for the class; each test has its own keys, clients and proxy. */
	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private TcpProxy proxy;

	private CuratorFramework clientA;

	private CuratorLockRegistry registryA;

	private LockTemplate templateA;

	private long sessionA;

	private final AtomicLong reconnectedA = new AtomicLong();

	private CuratorFramework clientB;

	private CuratorLockRegistry registryB;

	private final List<LockThread> threads = new ArrayList<>();

	@BeforeEach
	void start() throws Exception {
		this.proxy = TcpProxy.start(zooKeeper.getPort());
		this.clientA = zooKeeper.newClient((builder) -> builder.connectString(this.proxy.connectString())
			.sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
			.connectionTimeoutMs((int) CONNECTION_TIMEOUT.toMillis())
			.retryPolicy(new ExponentialBackoffRetry(100, MAX_RETRIES, (int) MAX_SLEEP.toMillis())));
		this.sessionA = this.clientA.getZookeeperClient().getZooKeeper().getSessionId();
		this.clientA.getConnectionStateListenable().addListener((client, state) -> {
			if (state == ConnectionState.RECONNECTED) {
				this.reconnectedA.compareAndSet(0, System.nanoTime());
			}
		});
		this.registryA = new CuratorLockRegistry(this.clientA, LockWorker.ROOT, 16);
		this.templateA = new LockTemplate(this.registryA, WAIT);
		this.clientB = zooKeeper.newClient(Chaos.clientSettings(SESSION_TIMEOUT, Chaos.ClientSocket.NIO));
		this.registryB = new CuratorLockRegistry(this.clientB, LockWorker.ROOT, 16);
	}

	@AfterEach
	void stop() throws Exception {
		// The extension closes the clients after this.
		for (LockThread thread : this.threads) {
			thread.close();
		}
		Chaos.closeQuietly(this.registryA);
		Chaos.closeQuietly(this.registryB);
		// A's client before its proxy: through a closed proxy its session's close cannot reach the
		// server, and the client retries until it gives up (about 1.5 s).
		Chaos.closeQuietly(this.clientA);
		Chaos.closeQuietly(this.proxy);
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	@Timeout(value = 90, unit = TimeUnit.SECONDS)
	void releaseWhileDisconnectedReturnsAndLeavesNoZnodeOnceReconnected(Kind kind) throws Exception {
		String key = PATH + "/" + kind.name().toLowerCase(Locale.ROOT);
		String lockPath = LockWorker.ROOT + key;
		LockThread holder = thread("a-holder");
		LockThread waiter = thread("b-waiter");
		LockThread other = thread("b-other");
		LockHandle otherPermit = null;
		if (kind == Kind.PERMIT) {
			// B holds the semaphore's other permit: A's release is what lets B's waiter in.
			otherPermit = other.acquire(this.registryB, kind.waiterRequest(key));
		}
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch releaseNow = new CountDownLatch(1);
		AtomicReference<LockHandle> holderGrant = new AtomicReference<>();
		AtomicReference<LockState> stateAtRelease = new AtomicReference<>();
		AtomicLong actionEnded = new AtomicLong();
		CompletableFuture<Long> holderDone = holder.submit(() -> {
			this.templateA.execute(asRequest(kind.holderRequest(key)), (handle) -> {
				holderGrant.set(handle);
				held.countDown();
				assertThat(releaseNow.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("told to release").isTrue();
				stateAtRelease.set(handle.state());
				actionEnded.set(System.nanoTime());
				return null;
			});
			return System.nanoTime();
		});
		assertThat(held.await(10, TimeUnit.SECONDS)).as("A granted").isTrue();
		CompletableFuture<Granted> waiterGrant = waiter.submit(() -> {
			LockHandle handle = this.registryB.tryAcquire(kind.waiterRequest(key)).orElseThrow();
			return new Granted(handle, System.nanoTime(), handle.isHeld());
		});
		await().atMost(Duration.ofSeconds(10))
			.until(() -> ZooKeeperExtension.ephemeralZnodes(this.clientB, lockPath).size() == kind.queuedZnodes);
		List<String> znodesOfA = ownedBy(this.clientB, lockPath, this.sessionA);
		assertThat(znodesOfA).as("A's lock znode").hasSize(1);

		this.proxy.drop(Duration.ofMinutes(5));
		await().atMost(SESSION_TIMEOUT).until(() -> holderGrant.get().state() == LockState.IN_DOUBT);
		releaseNow.countDown();
		long releasedAt = holderDone.get(RELEASE_BOUND.toSeconds() + 10, TimeUnit.SECONDS);
		long releaseMs = TimeUnit.NANOSECONDS.toMillis(releasedAt - actionEnded.get());
		boolean connectedAtReturn = this.clientA.getZookeeperClient().isConnected();
		List<String> leftAtReturn = ownedBy(this.clientB, lockPath, this.sessionA);
		boolean grantedBeforeHeal = waiterGrant.isDone();

		long healedAt = System.nanoTime();
		this.proxy.heal();
		Granted granted = waiterGrant.get(SESSION_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		List<String> leftAfterGrant = ownedBy(this.clientB, lockPath, this.sessionA);
		List<String> ephemeralsOfA = this.clientA.getZookeeperClient().getZooKeeper().getEphemerals(LockWorker.ROOT);
		// Curator may delete the znode, and B be granted, before it reports RECONNECTED.
		long reconnected = await().atMost(GRANT_AFTER_RECONNECT_BOUND).until(this.reconnectedA::get, (at) -> at != 0);
		long sessionAfter = this.clientA.getZookeeperClient().getZooKeeper().getSessionId();
		waiter.release(granted.handle());
		if (otherPermit != null) {
			other.release(otherPermit);
		}
		List<String> leftAtEnd = ZooKeeperExtension.ephemeralZnodes(this.clientB, lockPath);
		Chaos.fault("release-disconnected kind=%s release_ms=%d connected_at_return=%s a_znodes_at_return=%d "
				+ "reconnect_after_heal_ms=%d grant_after_reconnect_ms=%d a_znodes_after=%d lock_znodes_at_end=%d",
				kind, releaseMs, connectedAtReturn, leftAtReturn.size(),
				TimeUnit.NANOSECONDS.toMillis(reconnected - healedAt),
				TimeUnit.NANOSECONDS.toMillis(granted.at() - reconnected), leftAfterGrant.size(), leftAtEnd.size());

		assertThat(stateAtRelease.get()).as("A's grant when released").isEqualTo(LockState.IN_DOUBT);
		assertThat(holderGrant.get().state()).as("A's grant after the release").isEqualTo(LockState.RELEASED);
		assertThat(releaseMs).as("ms the release took while disconnected").isLessThanOrEqualTo(RELEASE_BOUND.toMillis());
		assertThat(connectedAtReturn).as("A still disconnected when the release returned").isFalse();
		assertThat(leftAtReturn).as("A's znode while A cannot reach the server").isEqualTo(znodesOfA);
		assertThat(grantedBeforeHeal).as("B granted while A's znode was there").isFalse();
		assertThat(reconnected).as("A reconnected").isPositive();
		assertThat(sessionAfter).as("A's session after the cut").isEqualTo(this.sessionA);
		assertThat(granted.held()).as("B's grant held").isTrue();
		assertThat(granted.at() - reconnected).as("ns from A's reconnection to B's grant")
			.isLessThanOrEqualTo(GRANT_AFTER_RECONNECT_BOUND.toNanos());
		assertThat(leftAfterGrant).as("znodes of A's session below the lock path").isEmpty();
		assertThat(ephemeralsOfA).as("ephemeral znodes of A's session").isEmpty();
		assertThat(leftAtEnd).as("lock znodes once B released").isEmpty();
		assertThat(admin(this.registryA).heldLockCount()).as("grants A still tracks").isZero();
	}

	/**
	 * Two threads of A on one key: the first holds it (its turn owns the lock znode), the second
	 * waits locally for its turn, B waits in ZooKeeper's queue. The connection drops and the first
	 * thread releases while A is disconnected: its turn must not hand the znode to the second
	 * thread (the znode is being deleted, and could be gone), so the second thread queues again in
	 * ZooKeeper, behind B. Once A reconnects, A's znode is deleted, B is granted, and only after B
	 * releases is the second thread granted: through ZooKeeper, not handed over, held, with a
	 * token higher than B's.
	 */
	@Test
	@Timeout(value = 90, unit = TimeUnit.SECONDS)
	void threadWaitingLocallyIsNotHandedTheZnodeReleasedWhileDisconnected() throws Exception {
		String key = PATH + "/handoff";
		String lockPath = LockWorker.ROOT + key;
		LockTarget request = new LockTarget(key, LockMode.EXCLUSIVE, true, 0, WAIT);
		LockThread first = thread("a-first");
		LockThread second = thread("a-second");
		LockThread waiter = thread("b-waiter");
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch releaseNow = new CountDownLatch(1);
		AtomicReference<LockHandle> firstGrant = new AtomicReference<>();
		AtomicLong firstToken = new AtomicLong();
		CompletableFuture<Long> firstDone = first.submit(() -> {
			this.templateA.execute(asRequest(request), (handle) -> {
				firstGrant.set(handle);
				firstToken.set(handle.fencingToken());
				held.countDown();
				assertThat(releaseNow.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("told to release").isTrue();
				return null;
			});
			return System.nanoTime();
		});
		assertThat(held.await(10, TimeUnit.SECONDS)).as("first thread of A granted").isTrue();
		Thread secondThread = second.call(Thread::currentThread);
		CompletableFuture<SecondGrant> secondGrant = second.submit(() -> this.templateA.execute(asRequest(request),
				(handle) -> new SecondGrant(System.nanoTime(), handle.state(), chainLength(this.registryA, handle) > 1,
						handle.fencingToken())).result());
		// Waiting for its turn, in the local queue (not in ZooKeeper's).
		await().atMost(Duration.ofSeconds(10)).until(() -> secondThread.getState() == Thread.State.TIMED_WAITING);
		CountDownLatch releaseB = new CountDownLatch(1);
		AtomicLong bReleasing = new AtomicLong();
		CompletableFuture<long[]> bGranted = new CompletableFuture<>();
		CompletableFuture<Void> bDone = waiter.submit(() -> {
			LockHandle handle = this.registryB.tryAcquire(request).orElseThrow();
			try {
				bGranted.complete(new long[] { System.nanoTime(), handle.fencingToken(), handle.isHeld() ? 1 : 0 });
				assertThat(releaseB.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("B told to release").isTrue();
			}
			finally {
				bReleasing.set(System.nanoTime());
				handle.release();
			}
			return null;
		});
		bDone.whenComplete((result, ex) -> {
			if (ex != null) {
				bGranted.completeExceptionally(ex);
			}
		});
		Chaos.awaitLockNodes(this.clientB, lockPath, 2);

		this.proxy.drop(Duration.ofMinutes(5));
		await().atMost(SESSION_TIMEOUT).until(() -> firstGrant.get().state() == LockState.IN_DOUBT);
		releaseNow.countDown();
		firstDone.get(RELEASE_BOUND.toSeconds() + 10, TimeUnit.SECONDS);
		boolean connectedAtReturn = this.clientA.getZookeeperClient().isConnected();
		boolean secondGrantedDuringCut = secondGrant.isDone();
		this.proxy.heal();

		long[] bGrant = bGranted.get(SESSION_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		// Curator may delete the znode, and B be granted, before it reports RECONNECTED.
		long reconnected = await().atMost(GRANT_AFTER_RECONNECT_BOUND).until(this.reconnectedA::get, (at) -> at != 0);
		boolean secondGrantedBeforeB = secondGrant.isDone();
		releaseB.countDown();
		bDone.get(10, TimeUnit.SECONDS);
		SecondGrant grant = secondGrant.get(WAIT.toSeconds(), TimeUnit.SECONDS);
		List<String> leftAtEnd = ZooKeeperExtension.ephemeralZnodes(this.clientB, lockPath);
		List<String> ephemeralsOfA = this.clientA.getZookeeperClient().getZooKeeper().getEphemerals(LockWorker.ROOT);
		Chaos.fault("release-disconnected kind=HANDOFF connected_at_return=%s second_granted_during_cut=%s "
				+ "b_grant_after_reconnect_ms=%d second_after_b_release_ms=%d second_local=%s tokens=%d->%d->%d "
				+ "lock_znodes_at_end=%d", connectedAtReturn, secondGrantedDuringCut,
				TimeUnit.NANOSECONDS.toMillis(bGrant[0] - reconnected),
				TimeUnit.NANOSECONDS.toMillis(grant.at() - bReleasing.get()), grant.local(), firstToken.get(), bGrant[1],
				grant.token(), leftAtEnd.size());

		assertThat(connectedAtReturn).as("A still disconnected when the first thread's release returned").isFalse();
		assertThat(secondGrantedDuringCut).as("second thread granted while A was disconnected").isFalse();
		assertThat(reconnected).as("A reconnected").isPositive();
		assertThat(bGrant[0] - reconnected).as("ns from A's reconnection to B's grant")
			.isLessThanOrEqualTo(GRANT_AFTER_RECONNECT_BOUND.toNanos());
		assertThat(secondGrantedBeforeB).as("second thread granted before B released").isFalse();
		assertThat(bGrant[2]).as("B's grant held").isOne();
		assertThat(bGrant[1]).as("B's token").isGreaterThan(firstToken.get());
		assertThat(grant.at()).as("second thread granted after B began to release").isGreaterThan(bReleasing.get());
		assertThat(grant.local()).as("second thread's grant handed over locally").isFalse();
		assertThat(grant.state()).as("second thread's grant").isEqualTo(LockState.HELD);
		assertThat(grant.token()).as("second thread's token").isGreaterThan(bGrant[1]);
		assertThat(leftAtEnd).as("lock znodes once all released").isEmpty();
		assertThat(ephemeralsOfA).as("ephemeral znodes of A's session").isEmpty();
	}

	private LockThread thread(String name) {
		LockThread thread = new LockThread(name);
		this.threads.add(thread);
		return thread;
	}

	/** The ephemeral znodes below a lock path (at any depth) that belong to the given session. */
	private static List<String> ownedBy(CuratorFramework client, String lockPath, long sessionId) throws Exception {
		List<String> owned = new ArrayList<>();
		for (String znode : ZooKeeperExtension.ephemeralZnodes(client, lockPath)) {
			Stat stat = client.checkExists().forPath(znode);
			if (stat != null && stat.getEphemeralOwner() == sessionId) {
				owned.add(znode);
			}
		}
		return owned;
	}

	/** The lock kinds whose release differs, with what A holds and what B waits for. */
	enum Kind {

		/** {@code InterProcessMutex}, on the local hand-off's link. */
		EXCLUSIVE(LockMode.EXCLUSIVE, LockMode.EXCLUSIVE, true, 0, 2),

		/** The read side of {@code InterProcessReadWriteLock}; B waits for WRITE. */
		READ(LockMode.READ, LockMode.WRITE, true, 0, 2),

		/** The write side, on the local hand-off's link; B waits for READ. */
		WRITE(LockMode.WRITE, LockMode.READ, true, 0, 2),

		/**
		 * A one-lease {@code InterProcessSemaphoreV2}. B's waiter holds the semaphore's internal
		 * lock znode and its lease znode while it waits.
		 */
		NON_REENTRANT(LockMode.EXCLUSIVE, LockMode.EXCLUSIVE, false, 0, 3),

		/** A permit of a two-permit semaphore whose other permit B holds. */
		PERMIT(LockMode.EXCLUSIVE, LockMode.EXCLUSIVE, false, 2, 4);

		private final LockMode holderMode;

		private final LockMode waiterMode;

		private final boolean reentrant;

		private final int permits;

		/** Ephemeral znodes below the lock path once B waits. */
		private final int queuedZnodes;

		Kind(LockMode holderMode, LockMode waiterMode, boolean reentrant, int permits, int queuedZnodes) {
			this.holderMode = holderMode;
			this.waiterMode = waiterMode;
			this.reentrant = reentrant;
			this.permits = permits;
			this.queuedZnodes = queuedZnodes;
		}

		LockTarget holderRequest(String key) {
			return request(key, this.holderMode);
		}

		LockTarget waiterRequest(String key) {
			return request(key, this.waiterMode);
		}

		private LockTarget request(String key, LockMode mode) {
			return new LockTarget(key, mode, this.reentrant, this.permits, WAIT);
		}

	}

	private record Granted(LockHandle handle, long at, boolean held) {
	}

	private record SecondGrant(long at, LockState state, boolean local, long token) {
	}

}
