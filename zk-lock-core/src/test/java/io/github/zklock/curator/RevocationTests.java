package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockTemplate;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.handedOver;
import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for revoking a lock ({@link CuratorLockRegistry#revoke}) on a real ZooKeeper, with two
 * applications (two clients, two registries): application A holds, application B revokes and
 * waits. Curator's revocation protocol (default) and the forced delete, for every lock kind; the
 * holder's grant becomes LOST (state, listener event, the reason in {@link LockLostException}),
 * the waiter is granted, the holder's later release is harmless and no znode is left; a local
 * hand-off chain hands no grant on a revoked znode; a raw Curator holder that does not watch its
 * znode is reported as not released; a free key is reported NOT_HELD with nothing written; and
 * the participants of a key show holder, process id, host, waiters and chain length.
 */
class RevocationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration CHECK_INTERVAL = Duration.ofMillis(100);

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final List<LockStateEvent> holderEvents = new CopyOnWriteArrayList<>();

	private CuratorFramework holderClient;

	private CuratorLockRegistry holder;

	private LockTemplate holderLocks;

	private CuratorLockRegistry other;

	private String key;

	@BeforeEach
	void start(TestInfo testInfo) throws Exception {
		this.holderClient = zooKeeper.newClient();
		this.holder = new CuratorLockRegistry(this.holderClient, "/locks", 100);
		this.holder.setRevocationCheckInterval(CHECK_INTERVAL);
		this.holder.addLockStateListener(this.holderEvents::add);
		this.holderLocks = new LockTemplate(this.holder, BOUND);
		this.other = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.key = "/revoke/" + testInfo.getTestMethod().orElseThrow().getName()
				+ testInfo.getDisplayName().replaceAll("[^A-Za-z0-9]", "");
	}

	@AfterEach
	void stop() {
		this.holder.close();
		this.other.close();
	}

	@ParameterizedTest
	@ValueSource(strings = { "EXCLUSIVE", "READ", "WRITE", "NON_REENTRANT", "PERMIT" })
	void revocationMakesTheHolderLoseItsGrantAndGrantsTheWaiter(String kind) throws Exception {
		LockHandle held = this.holderLocks.acquire(request(kind));
		long token = held.fencingToken();
		try (LockThread waiter = new LockThread("waiter")) {
			CompletableFuture<Optional<RegistryGrant>> waiting = queueExcludedWaiter(waiter, kind);

			Revocation revocation = admin(this.other).revoke(this.key, RevocationMode.REQUEST, BOUND);

			assertThat(revocation.action()).isEqualTo(RevocationAction.REVOCATION_REQUESTED);
			assertThat(revocation.released()).isTrue();
			assertThat(revocation.holders()).singleElement()
				.satisfies((participant) -> assertThat(participant.pid()).isEqualTo(ProcessHandle.current().pid()));
			assertThat(held.state()).isEqualTo(LockState.LOST);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(held::checkHeld)
				.withMessageContaining("revoked");
			assertThat(this.holderEvents).extracting(LockStateEvent::state).containsExactly(LockState.LOST);
			LockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow();
			assertThat(granted.isHeld()).isTrue();
			assertThatNoException().isThrownBy(held::release);
			waiter.release(granted);
		}
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.holderClient, "/locks")).isEmpty();
		assertLocksAgainInTheSameThread(kind, token);
	}

	@ParameterizedTest
	@ValueSource(strings = { "EXCLUSIVE", "READ", "WRITE", "NON_REENTRANT", "PERMIT" })
	void forcedRevocationDeletesTheHolderZnodeAndTheHolderLearnsIt(String kind) throws Exception {
		LockHandle held = this.holderLocks.acquire(request(kind));
		long token = held.fencingToken();
		try (LockThread waiter = new LockThread("waiter")) {
			CompletableFuture<Optional<RegistryGrant>> waiting = queueExcludedWaiter(waiter, kind);

			Revocation revocation = admin(this.other).revoke(this.key, RevocationMode.FORCE, Duration.ZERO);

			assertThat(revocation.action()).isEqualTo(RevocationAction.FORCED_DELETE);
			assertThat(revocation.released()).isTrue();
			LockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow();
			await().atMost(BOUND).until(() -> held.state() == LockState.LOST);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(held::checkHeld)
				.withMessageContaining("deleted");
			// Listeners are told after the state changes, on the watch's thread.
			await().atMost(BOUND)
				.untilAsserted(() -> assertThat(this.holderEvents).extracting(LockStateEvent::state)
					.containsExactly(LockState.LOST));
			assertThatNoException().isThrownBy(held::release);
			waiter.release(granted);
		}
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.holderClient, "/locks")).isEmpty();
		assertLocksAgainInTheSameThread(kind, token);
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void revokedChainHandsNoGrantOnItsZnode(boolean force) throws Exception {
		LockHandle first = this.holderLocks.acquire(this.key, LockMode.EXCLUSIVE, null);
		String revokedNode = admin(this.holder).describeHeldLocks().get(0).node();
		long revokedToken = first.fencingToken();
		try (LockThread secondThread = new LockThread("second")) {
			CompletableFuture<Optional<RegistryGrant>> second = secondThread.tryAcquire(this.holder,
					new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, BOUND));
			await().atMost(BOUND).until(() -> admin(this.holder).describeWaitingLocks().size() == 1);

			assertThat(admin(this.other).revoke(this.key, (force ? RevocationMode.FORCE : RevocationMode.REQUEST), BOUND).released()).isTrue();
			await().atMost(BOUND).until(() -> first.state() == LockState.LOST);
			first.release();

			LockHandle next = second.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow();
			assertThat(handedOver(next)).as("handed over on the revoked znode").isFalse();
			assertThat(admin(this.holder).describeHeldLocks()).singleElement()
				.satisfies((lock) -> assertThat(lock.node()).isNotEqualTo(revokedNode));
			assertThat(next.fencingToken()).isGreaterThan(revokedToken);
			secondThread.release(next);
		}
	}

	@Test
	void holderThatDoesNotWatchItsZnodeIsReportedNotReleased() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(zooKeeper.newClient(), this.other.lockPath(this.key));
		assertThat(raw.acquire(10, TimeUnit.SECONDS)).isTrue();

		Revocation revocation = admin(this.other).revoke(this.key, RevocationMode.REQUEST, Duration.ofMillis(500));

		assertThat(revocation.action()).isEqualTo(RevocationAction.REVOCATION_REQUESTED);
		assertThat(revocation.released()).isFalse();
		assertThat(raw.isAcquiredInThisProcess()).isTrue();
		raw.release();
	}

	@Test
	void holderWithTheCheckSwitchedOffIgnoresRevocation() throws Exception {
		this.holder.setRevocationCheckInterval(Duration.ZERO);
		LockHandle held = this.holderLocks.acquire(this.key, LockMode.EXCLUSIVE, null);

		assertThat(admin(this.other).revoke(this.key, RevocationMode.REQUEST, Duration.ofMillis(500)).released()).isFalse();
		assertThat(held.isHeld()).isTrue();
		held.release();
	}

	@Test
	void freeKeyIsNotHeldAndNothingIsWritten() throws Exception {
		Revocation revocation = admin(this.other).revoke(this.key, RevocationMode.REQUEST, BOUND);

		assertThat(revocation.action()).isEqualTo(RevocationAction.NOT_HELD);
		assertThat(revocation.holders()).isEmpty();
		assertThat(this.holderClient.checkExists().forPath(this.other.lockPath(this.key))).isNull();
	}

	@Test
	void participantsShowHolderProcessWaitersAndChainLength() throws Exception {
		LockHandle first = this.holderLocks.acquire(this.key, LockMode.WRITE, null);
		try (LockThread secondThread = new LockThread("second"); LockThread readerThread = new LockThread("reader")) {
			CompletableFuture<Optional<RegistryGrant>> second = secondThread.tryAcquire(this.holder,
					new LockTarget(this.key, LockMode.WRITE, true, 0, BOUND));
			await().atMost(BOUND).until(() -> admin(this.holder).describeWaitingLocks().size() == 1);
			first.release();
			LockHandle handedOver = second.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow();
			CompletableFuture<Optional<RegistryGrant>> reader = readerThread.tryAcquire(this.other,
					new LockTarget(this.key, LockMode.READ, true, 0, BOUND));
			await().atMost(BOUND).until(() -> admin(this.other).describeWaitingLocks().size() == 1);

			List<LockParticipant> participants = admin(this.other).describeParticipants(this.key);
			assertThat(participants).hasSize(2);
			assertThat(participants.get(0)).satisfies((writer) -> {
				assertThat(writer.kind()).isEqualTo("WRITE");
				assertThat(writer.holder()).isTrue();
				assertThat(writer.pid()).isEqualTo(ProcessHandle.current().pid());
				assertThat(writer.host()).isEqualTo(LockNodeData.hostName());
				assertThat(writer.owner()).isEqualTo(LockNodeData.IDENTITY);
				assertThat(writer.fencingToken()).isEqualTo(handedOver.fencingToken());
				assertThat(writer.chainLength()).as("known to the holder only").isNull();
			});
			assertThat(participants.get(1)).satisfies((waiting) -> {
				assertThat(waiting.kind()).isEqualTo("READ");
				assertThat(waiting.holder()).isFalse();
			});
			assertThat(admin(this.holder).describeParticipants(this.key).get(0).chainLength()).isEqualTo(2);

			secondThread.release(handedOver);
			readerThread.release(reader.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow());
		}
	}

	@Test
	void queueCountsWaitersInZooKeeperAndInTheLocalQueue() throws Exception {
		LockHandle held = this.holderLocks.acquire(this.key, LockMode.EXCLUSIVE, null);
		try (LockThread localThread = new LockThread("local"); LockThread otherThread = new LockThread("other")) {
			// Queues behind the holder's turn on its znode (local hand-off): no znode of its own.
			CompletableFuture<Optional<RegistryGrant>> local = localThread.tryAcquire(this.holder,
					new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, BOUND));
			CompletableFuture<Optional<RegistryGrant>> remote = otherThread.tryAcquire(this.other,
					new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, BOUND));
			await().atMost(BOUND).until(() -> admin(this.holder).describeQueue(this.key).participants().size() == 2
					&& admin(this.holder).describeWaitingLocks().size() == 1);

			LockQueue seenByHolder = admin(this.holder).describeQueue(this.key);
			assertThat(seenByHolder.path()).isEqualTo(this.holder.lockPath(this.key));
			assertThat(seenByHolder.participants()).extracting(LockParticipant::holder)
				.containsExactly(true, false);
			assertThat(seenByHolder.waiters()).as("the other application's znode and the local thread").isEqualTo(2);
			assertThat(seenByHolder.localWaiters()).isOne();
			LockQueue seenByOther = admin(this.other).describeQueue(this.key);
			assertThat(seenByOther.waiters()).as("its own thread, which has a znode").isOne();
			assertThat(seenByOther.localWaiters()).isOne();

			held.release();
			localThread.release(local.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow());
			otherThread.release(remote.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow());
		}
	}

	@Test
	void semaphoreParticipantsHoldUpToItsPermits() throws Exception {
		LockTarget permit = new LockTarget(this.key, LockMode.EXCLUSIVE, false, 2, BOUND);
		LockHandle first = this.holderLocks.acquire(Targets.asRequest(permit));
		LockHandle second = this.holderLocks.acquire(Targets.asRequest(permit));
		try (LockThread waiter = new LockThread("waiter")) {
			CompletableFuture<Optional<RegistryGrant>> third = waiter.tryAcquire(this.other, permit);
			await().atMost(BOUND).until(() -> admin(this.other).describeParticipants(this.key).size() == 3);

			LockQueue queue = admin(this.other).describeQueue(this.key);
			assertThat(queue.participants()).extracting(LockParticipant::kind).containsOnly("PERMIT (of 2)");
			assertThat(queue.participants()).extracting(LockParticipant::holder)
				.containsExactly(true, true, false);
			assertThat(queue.waiters()).isOne();

			first.release();
			waiter.release(third.get(BOUND.toSeconds(), TimeUnit.SECONDS).orElseThrow());
			second.release();
		}
	}

	/**
	 * The holder's thread, whose grant was revoked and released, locks the key again: Curator's
	 * per-thread bookkeeping was cleaned up, and the grant is a new znode.
	 */
	private void assertLocksAgainInTheSameThread(String kind, long revokedToken) {
		LockHandle again = this.holderLocks.acquire(request(kind).withWaitTime(Duration.ZERO));
		try {
			assertThat(again.isHeld()).isTrue();
			assertThat(again.fencingToken()).isGreaterThan(revokedToken);
		}
		finally {
			again.release();
		}
	}

	/**
	 * Queue the other application, on the waiter's thread, for the key in a mode the holder's grant
	 * of the kind excludes; return once it waits.
	 */
	private CompletableFuture<Optional<RegistryGrant>> queueExcludedWaiter(LockThread waiter, String kind) {
		CompletableFuture<Optional<RegistryGrant>> waiting = waiter.tryAcquire(this.other,
				Targets.asTarget(request(kind).withMode(excluding(kind)).withWaitTime(BOUND)));
		await().atMost(BOUND).until(() -> admin(this.other).describeWaitingLocks().size() == 1);
		return waiting;
	}

	private LockRequest request(String kind) {
		return switch (kind) {
			case "NON_REENTRANT" -> LockRequest.of(this.key).withReentrant(false);
			case "PERMIT" -> LockRequest.permit(this.key, 1);
			default -> LockRequest.of(this.key).withMode(LockMode.valueOf(kind));
		};
	}

	/** The mode a waiter asks for so that it waits for the holder: WRITE against a READ holder. */
	private static LockMode excluding(String kind) {
		return kind.equals("READ") ? LockMode.WRITE : LockMode.valueOf(kind.equals("WRITE") ? "WRITE" : "EXCLUSIVE");
	}

}
