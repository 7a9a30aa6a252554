package io.github.zklock.aop;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.tck.TestObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code lockAtMostFor} on annotated methods, on a real ZooKeeper, with two applications (two
 * contexts, two clients, two sessions): application A's method, holding a
 * {@code @DistributedLock} or a {@code @DistributedSemaphore} permit with a one-second ceiling, is
 * stuck far past it; application B calls the method on the same key and is granted within the
 * ceiling plus one second, with a higher fencing token; A's grant is LOST with the reason, A's
 * lock state listener is told, A's method is not stopped and returns without its lock, and no
 * znode is left. A's {@code zk.lock.held} observation ends with {@code outcome=expired} for the
 * grant its ceiling ended, {@code outcome=released} for one released before its ceiling.
 */
class LockAtMostForMethodTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration CEILING = Duration.ofSeconds(1);

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final List<LockStateEvent> eventsOfA = new CopyOnWriteArrayList<>();

	private final ExecutorService threadOfA = Executors.newSingleThreadExecutor();

	private TestObservationRegistry observationsOfA;

	private AnnotationConfigApplicationContext applicationA;

	private AnnotationConfigApplicationContext applicationB;

	@BeforeEach
	void start() throws InterruptedException {
		this.observationsOfA = TestObservationRegistry.create();
		this.applicationA = LockApplications.start(zooKeeper,
				(context) -> context.registerBean(TestObservationRegistry.class, () -> this.observationsOfA),
				Ceilinged.class);
		this.applicationA.getBean(CuratorLockRegistry.class).addLockStateListener(this.eventsOfA::add);
		this.applicationB = LockApplications.start(zooKeeper, (context) -> {
		}, Ceilinged.class);
	}

	@AfterEach
	void stop() {
		this.threadOfA.shutdownNow();
		this.applicationA.close();
		this.applicationB.close();
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "lock", "permit" })
	void stuckMethodLosesItsGrantAtTheCeilingAndTheOtherApplicationGetsIn(String kind) throws Exception {
		Ceilinged a = this.applicationA.getBean(Ceilinged.class);
		Ceilinged b = this.applicationB.getBean(Ceilinged.class);
		Stuck stuck = new Stuck();
		CompletableFuture<LockState> runOfA = CompletableFuture.supplyAsync(() -> call(a, kind, stuck), this.threadOfA);
		Grant grantOfA = stuck.entered.get(BOUND.toSeconds(), TimeUnit.SECONDS);

		Stuck notStuck = Stuck.notStuck();
		assertThat(call(b, kind, notStuck)).isEqualTo(LockState.HELD);
		Grant grantOfB = notStuck.entered.getNow(null);
		long releasedAfterMs = TimeUnit.NANOSECONDS.toMillis(grantOfB.grantedAt() - grantOfA.grantedAt());

		try {
			assertThat(releasedAfterMs).as("B granted at A's ceiling, within a second of it")
				.isBetween(CEILING.toMillis() - 100, CEILING.toMillis() + 1000);
			assertThat(grantOfB.token()).isGreaterThan(grantOfA.token());
			assertThat(grantOfA.handle().state()).isEqualTo(LockState.LOST);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(grantOfA.handle()::checkHeld)
				.withMessageContaining("held longer than lockAtMostFor (PT1S)");
			await().atMost(BOUND).untilAsserted(() -> assertThat(this.eventsOfA).singleElement().satisfies((event) -> {
				assertThat(event.state()).isEqualTo(LockState.LOST);
				assertThat(event.path()).isEqualTo("/locks/ceiling/" + kind);
			}));
			assertThat(runOfA).as("A is still stuck: the ceiling does not stop the method").isNotDone();
		}
		finally {
			stuck.unstick.countDown();
		}
		assertThat(runOfA).succeedsWithin(BOUND).isEqualTo(LockState.LOST);
		await().atMost(BOUND)
			.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(
					this.applicationB.getBean(CuratorFramework.class), "/locks/ceiling")).isEmpty());
	}

	@Test
	void holdObservationEndsExpiredAtTheCeilingAndReleasedOtherwise() throws Exception {
		Ceilinged a = this.applicationA.getBean(Ceilinged.class);
		assertThat(a.quick()).isEqualTo(LockState.HELD);
		assertThat(this.observationsOfA).hasObservationWithNameEqualTo("zk.lock.held")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("name", "/ceiling/quick")
			.hasLowCardinalityKeyValue("outcome", "released");

		this.observationsOfA.clear();
		Stuck stuck = new Stuck();
		CompletableFuture<LockState> runOfA = CompletableFuture.supplyAsync(() -> a.lock(stuck), this.threadOfA);
		Grant grantOfA = stuck.entered.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		await().atMost(BOUND).until(() -> grantOfA.handle().state() == LockState.LOST);
		assertThat(this.observationsOfA).hasObservationWithNameEqualTo("zk.lock.held").that().isNotStopped();
		stuck.unstick.countDown();
		assertThat(runOfA).succeedsWithin(BOUND).isEqualTo(LockState.LOST);
		assertThat(this.observationsOfA).hasNumberOfObservationsWithNameEqualTo("zk.lock.held", 1)
			.hasObservationWithNameEqualTo("zk.lock.held")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("name", "/ceiling/lock")
			.hasLowCardinalityKeyValue("mode", "EXCLUSIVE")
			.hasLowCardinalityKeyValue("outcome", "expired");
	}

	private static LockState call(Ceilinged service, String kind, Stuck stuck) {
		return kind.equals("lock") ? service.lock(stuck) : service.permit(stuck);
	}

	/** What a call saw when it was granted: its handle, its token and when (System.nanoTime()). */
	record Grant(LockHandle handle, long token, long grantedAt) {
	}

	/** Tells the test when a call is granted, and keeps it stuck until the test lets go (10 s at most). */
	static final class Stuck {

		final CompletableFuture<Grant> entered = new CompletableFuture<>();

		final CountDownLatch unstick = new CountDownLatch(1);

		static Stuck notStuck() {
			Stuck stuck = new Stuck();
			stuck.unstick.countDown();
			return stuck;
		}

		/** In the method: record the grant, be stuck, then say what became of the grant. */
		LockState hold() {
			LockHandle handle = LockContext.require();
			this.entered.complete(new Grant(handle, handle.fencingToken(), System.nanoTime()));
			try {
				this.unstick.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return handle.state();
		}

	}

	static class Ceilinged {

		@DistributedLock(path = "/ceiling/lock", lockAtMostFor = "1s")
		public LockState lock(Stuck stuck) {
			return stuck.hold();
		}

		@DistributedSemaphore(path = "/ceiling/permit", permits = 1, lockAtMostFor = "1s")
		public LockState permit(Stuck stuck) {
			return stuck.hold();
		}

		@DistributedLock(path = "/ceiling/quick", lockAtMostFor = "1s")
		public LockState quick() {
			return LockContext.require().state();
		}

	}

}
