package io.github.zklock.curator;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.observation.tck.TestObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The ceiling of a grant ({@link LockRequest#withLockAtMostFor(Duration)}) on a real ZooKeeper,
 * with two applications (two clients, two registries): application A takes a grant with a ceiling
 * and never releases it (a stuck holder), application B waits for the key. For every kind, made on
 * a thread (Curator's recipes) or without one (the asynchronous grants), with local hand-off on
 * and off: A's grant becomes LOST with the reason "held longer than lockAtMostFor", its listener is
 * told, B is granted within the ceiling plus one second with a higher fencing token, A's later
 * release is harmless and no znode is left. Also: {@link LockHandle#extend(Duration)} moves the
 * ceiling, and fails on a grant the ceiling ended or that was released; the template's default
 * ceiling and its opt-out; a multi-lock's parts; {@code whenLost()} of an asynchronous grant; the
 * interrupt of a stuck thread-bound holder with interrupt-on-lost.
 */
class LockAtMostForTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration CEILING = Duration.ofMillis(400);

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final List<LockStateEvent> holderEvents = new CopyOnWriteArrayList<>();

	private CuratorFramework holderClient;

	private CuratorFramework otherClient;

	private CuratorLockRegistry holder;

	private LockTemplate holderLocks;

	private CuratorLockRegistry other;

	private LockTemplate otherLocks;

	private String key;

	@BeforeEach
	void start(TestInfo testInfo) throws Exception {
		this.holderClient = zooKeeper.newClient();
		this.holder = new CuratorLockRegistry(this.holderClient, "/locks", 100);
		this.holder.addLockStateListener(this.holderEvents::add);
		this.holderLocks = new LockTemplate(this.holder, BOUND);
		this.otherClient = zooKeeper.newClient();
		this.other = new CuratorLockRegistry(this.otherClient, "/locks", 100);
		this.otherLocks = new LockTemplate(this.other, BOUND);
		this.key = "/ceiling/" + testInfo.getTestMethod().orElseThrow().getName()
				+ testInfo.getDisplayName().replaceAll("[^A-Za-z0-9]", "");
	}

	@AfterEach
	void stop() {
		this.holder.close();
		this.other.close();
		ClosedTogether.close(this.holderClient, this.otherClient);
	}

	@ParameterizedTest(name = "{0}, async={1}, handoff={2}")
	@CsvSource({ "EXCLUSIVE, false, true", "EXCLUSIVE, false, false", "EXCLUSIVE, true, true",
			"EXCLUSIVE, true, false", "NON_REENTRANT, false, true", "NON_REENTRANT, true, true", "READ, false, true",
			"READ, true, true", "WRITE, false, true", "WRITE, false, false", "WRITE, true, true", "WRITE, true, false",
			"PERMIT, false, true", "PERMIT, true, true" })
	void stuckHolderLosesItsGrantAtItsCeilingAndTheOtherApplicationIsGranted(String kind, boolean async,
			boolean handoff) throws Exception {
		this.holder.setLocalHandoff(handoff ? LocalHandoff.DEFAULT : LocalHandoff.DISABLED);
		LockRequest request = request(kind).withLockAtMostFor(CEILING);
		LockHandle held = async ? this.holderLocks.async().acquire(request).get(BOUND.toSeconds(), TimeUnit.SECONDS)
				: this.holderLocks.acquire(request);
		long token = held.fencingToken();
		assertThat(held.deadline()).hasValueSatisfying(
				(deadline) -> assertThat(deadline).isBetween(Instant.now(), Instant.now().plus(CEILING)));
		assertThat(admin(this.holder).describeHeldLocks()).singleElement()
			.satisfies((lock) -> assertThat(lock.deadline()).isEqualTo(held.deadline().orElseThrow()));

		AtomicReference<Instant> grantedAt = new AtomicReference<>();
		CompletableFuture<AsyncLockHandle> waiting = this.otherLocks.async()
			.acquire(request(kind).withMode(excluding(kind)).withWaitTime(BOUND))
			.whenComplete((handle, failure) -> grantedAt.set(Instant.now()));
		AsyncLockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		long afterCeilingMs = afterDeadlineMs(held, grantedAt.get());
		// Quoted by the guide (lost-locks.adoc, "A ceiling on the hold").
		System.out.println("CEILING kind=" + kind + " async=" + async + " handoff=" + handoff + " lock_at_most_for_ms="
				+ CEILING.toMillis() + " other_application_granted_after_ms=" + (CEILING.toMillis() + afterCeilingMs));

		assertThat(afterCeilingMs).as("granted after the ceiling, within a second of it").isBetween(0L, 1000L);
		assertThat(granted.fencingToken()).isGreaterThan(token);
		assertThat(held.state()).isEqualTo(LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(held::checkHeld)
			.withMessageContaining("held longer than lockAtMostFor (PT0.4S)");
		await().atMost(BOUND)
			.untilAsserted(() -> assertThat(this.holderEvents).extracting(LockStateEvent::state)
				.containsExactly(LockState.LOST));
		if (held instanceof AsyncLockHandle asyncHeld) {
			// The ceiling tells the work of a grant no thread owns, whatever interrupt-on-lost says.
			assertThat(asyncHeld.whenLost().toCompletableFuture()).succeedsWithin(BOUND);
		}
		assertThatNoException().isThrownBy(held::release);
		granted.release();
		await().atMost(BOUND)
			.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(this.holderClient, "/locks")).isEmpty());
	}

	@ParameterizedTest(name = "{0}, async holder={1}, async waiter={2}, handoff={3}")
	@CsvSource({ "EXCLUSIVE, false, false, true", "EXCLUSIVE, false, true, true", "EXCLUSIVE, true, false, true",
			"EXCLUSIVE, true, true, true", "EXCLUSIVE, false, false, false", "EXCLUSIVE, true, true, false",
			"WRITE, false, false, true", "WRITE, true, true, true", "NON_REENTRANT, false, false, true",
			"NON_REENTRANT, true, true, true", "PERMIT, false, false, true", "PERMIT, true, true, true",
			"READ, true, true, true", "READ, false, false, true" })
	void stuckHolderLosesItsGrantAtItsCeilingAndAWaiterOfItsOwnApplicationIsGranted(String kind, boolean asyncHolder,
			boolean asyncWaiter, boolean handoff) throws Exception {
		this.holder.setLocalHandoff(handoff ? LocalHandoff.DEFAULT : LocalHandoff.DISABLED);
		LockRequest request = request(kind).withLockAtMostFor(CEILING);
		CompletableFuture<LockHandle> heldFuture = new CompletableFuture<>();
		CompletableFuture<Void> releaseHolder = new CompletableFuture<>();
		Thread stuck = new Thread(() -> {
			try {
				LockHandle held = asyncHolder
						? this.holderLocks.async().acquire(request).get(BOUND.toSeconds(), TimeUnit.SECONDS)
						: this.holderLocks.acquire(request);
				heldFuture.complete(held);
				releaseHolder.get(BOUND.toSeconds() * 3, TimeUnit.SECONDS);
				held.release();
			}
			catch (Exception ex) {
				heldFuture.completeExceptionally(ex);
			}
		}, "stuck-holder");
		stuck.start();
		LockHandle held = heldFuture.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		long token = held.fencingToken();
		LockRequest waiterRequest = request(kind).withMode(excluding(kind)).withWaitTime(BOUND);
		try (LockThread waiterThread = new LockThread("waiter")) {
			AtomicReference<Instant> grantedAt = new AtomicReference<>();
			LockHandle granted = asyncWaiter
					? this.holderLocks.async()
						.acquire(waiterRequest)
						.whenComplete((handle, failure) -> grantedAt.set(Instant.now()))
						.get(BOUND.toSeconds(), TimeUnit.SECONDS)
					: waiterThread.call(() -> {
						LockHandle handle = this.holderLocks.acquire(waiterRequest);
						grantedAt.set(Instant.now());
						return handle;
					});
			long afterCeilingMs = afterDeadlineMs(held, grantedAt.get());
			System.out.println("CEILING kind=" + kind + " async_holder=" + asyncHolder + " async_waiter=" + asyncWaiter
					+ " handoff=" + handoff + " lock_at_most_for_ms=" + CEILING.toMillis()
					+ " same_application_granted_after_ms=" + (CEILING.toMillis() + afterCeilingMs));
			assertThat(afterCeilingMs).as("granted after the ceiling, within a second of it").isBetween(0L, 1000L);
			assertThat(held.state()).isEqualTo(LockState.LOST);
			assertThat(granted.isHeld()).isTrue();
			long grantedToken = asyncWaiter ? granted.fencingToken() : waiterThread.call(granted::fencingToken);
			assertThat(grantedToken).isGreaterThan(token);
			if (asyncWaiter) {
				granted.release();
			}
			else {
				waiterThread.release(granted);
			}
		}
		finally {
			releaseHolder.complete(null);
			stuck.join(BOUND.toMillis());
		}
		await().atMost(BOUND)
			.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(this.holderClient, "/locks")).isEmpty());
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void extendMovesTheCeilingFromNowAndFailsOnceTheCeilingEndedTheGrant(boolean async) throws Exception {
		// A ceiling of its own, longer than CEILING: each extension below must come before the
		// ceiling it moves, with half a second or more to spare for a test thread scheduled late.
		Duration ceiling = Duration.ofSeconds(1);
		LockRequest request = LockRequest.of(this.key).withReentrant(false).withLockAtMostFor(ceiling);
		LockHandle held = async ? this.holderLocks.async().acquire(request).get(BOUND.toSeconds(), TimeUnit.SECONDS)
				: this.holderLocks.acquire(request);
		Instant firstDeadline = held.deadline().orElseThrow();
		CompletableFuture<AsyncLockHandle> waiting = this.otherLocks.async()
			.acquire(LockRequest.of(this.key).withReentrant(false));

		// Extended twice, each before the ceiling: the key stays taken past the first ceiling.
		Thread.sleep(300);
		assertThat(held.extend(Duration.ofMillis(1500))).isSameAs(held);
		Thread.sleep(ceiling.toMillis());
		assertThat(waiting).isNotDone();
		assertThat(held.isHeld()).isTrue();
		// The last ceiling is waited for whole: short, and unlike the earlier ones (1 s, 1.5 s), so
		// that the message below names the one that ended the grant.
		held.extend(Duration.ofMillis(1100));
		assertThat(held.deadline()).hasValueSatisfying((deadline) -> assertThat(deadline).isAfter(firstDeadline));

		AsyncLockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(held.state()).isEqualTo(LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> held.extend(CEILING))
			.withMessageContaining("held longer than lockAtMostFor (PT1.1S)");
		held.release();
		granted.release();
	}

	@Test
	void aReleasedGrantCannotBeExtendedAndItsCeilingNoLongerRuns() throws Exception {
		LockHandle held = this.holderLocks.acquire(LockRequest.of(this.key).withLockAtMostFor(CEILING));
		held.release();
		assertThatIllegalStateException().isThrownBy(() -> held.extend(CEILING)).withMessageContaining("released");
		LockHandle next = this.holderLocks.acquire(LockRequest.of(this.key));
		Thread.sleep(CEILING.toMillis() + 200);
		assertThat(next.isHeld()).isTrue();
		assertThat(this.holderEvents).isEmpty();
		next.release();
	}

	@Test
	void aGrantWithoutCeilingCanBeGivenOneByExtend() throws Exception {
		LockHandle held = this.holderLocks.acquire(LockRequest.of(this.key));
		assertThat(held.deadline()).isEmpty();
		held.extend(CEILING);
		assertThat(held.deadline()).isPresent();
		await().atMost(BOUND).until(() -> held.state() == LockState.LOST);
		held.release();
	}

	@Test
	void extendRefusesAZeroOrNegativeCeiling() throws Exception {
		try (LockHandle held = this.holderLocks.acquire(LockRequest.of(this.key))) {
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> held.extend(Duration.ZERO));
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> held.extend(Duration.ofSeconds(-1)));
			assertThat(held.deadline()).isEmpty();
		}
	}

	@Test
	void theTemplateDefaultCeilingAppliesUnlessTheRequestSetsNone() throws Exception {
		LockTemplate withDefault = LockTemplate.builder(this.holder)
			.defaultWaitTime(BOUND)
			.defaultLockAtMostFor(CEILING)
			.build();
		assertThat(withDefault.getDefaultLockAtMostFor()).isEqualTo(CEILING);
		assertThat(this.holderLocks.getDefaultLockAtMostFor()).isEqualTo(LockRequest.NO_CEILING);
		LockHandle defaulted = withDefault.acquire(LockRequest.of(this.key));
		LockHandle none = withDefault.acquire(LockRequest.of(this.key + "-none").withLockAtMostFor(LockRequest.NO_CEILING));
		assertThat(defaulted.deadline()).isPresent();
		assertThat(none.deadline()).isEmpty();
		await().atMost(BOUND).until(() -> defaulted.state() == LockState.LOST);
		Thread.sleep(200);
		assertThat(none.isHeld()).isTrue();
		defaulted.release();
		none.release();
	}

	@Test
	void aMultiLockEndsEveryPartAndExtendsEveryPart() throws Exception {
		LockRequest request = LockRequest.of(List.of(this.key + "/b", this.key + "/a")).withLockAtMostFor(CEILING);
		LockHandle held = this.holderLocks.acquire(request);
		held.extend(Duration.ofSeconds(1));
		assertThat(held.parts()).allSatisfy((part) -> assertThat(part.deadline()).isPresent());
		assertThat(held.deadline()).isEqualTo(held.parts().stream().map((part) -> part.deadline().orElseThrow())
			.min(Instant::compareTo));
		AsyncLockHandle other = this.otherLocks.async()
			.acquire(LockRequest.of(List.of(this.key + "/a", this.key + "/b")).withWaitTime(BOUND))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(held.state()).isEqualTo(LockState.LOST);
		assertThat(held.parts()).allSatisfy((part) -> assertThat(part.state()).isEqualTo(LockState.LOST));
		held.release();
		other.release();
	}

	@Test
	void interruptOnLostInterruptsAStuckThreadBoundHolder() throws Exception {
		this.holder.setInterruptOnLost(true);
		CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
		Thread stuck = new Thread(() -> {
			LockHandle held = this.holderLocks.acquire(LockRequest.of(this.key).withLockAtMostFor(CEILING));
			try {
				Thread.sleep(BOUND.toMillis());
				interrupted.complete(false);
			}
			catch (InterruptedException ex) {
				interrupted.complete(held.state() == LockState.LOST);
			}
			finally {
				held.release();
			}
		}, "stuck-holder");
		stuck.start();
		assertThat(interrupted).succeedsWithin(BOUND).isEqualTo(true);
		stuck.join(BOUND.toMillis());
	}

	@Test
	void theHoldObservationOfAGrantTheCeilingEndedHasOutcomeExpired() throws Exception {
		TestObservationRegistry observations = TestObservationRegistry.create();
		LockTemplate observed = LockTemplate.builder(this.holder)
			.defaultWaitTime(BOUND)
			.observationRegistry(observations)
			.build();
		LockHandle held = observed.acquire(LockRequest.of(this.key).withLockAtMostFor(CEILING));
		await().atMost(BOUND).until(() -> held.state() == LockState.LOST);
		held.release();
		LockHandle lost = observed.acquire(LockRequest.of(this.key + "-lost").withLockAtMostFor(BOUND));
		admin(this.other).revoke(this.key + "-lost", RevocationMode.FORCE, Duration.ZERO);
		await().atMost(BOUND).until(() -> lost.state() == LockState.LOST);
		lost.release();

		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.held", 2);
		assertThat(observations).hasAnObservation((observation) -> observation.hasNameEqualTo("zk.lock.held")
			.hasLowCardinalityKeyValue("outcome", "expired")
			.hasHighCardinalityKeyValue("path", "/locks" + this.key));
		assertThat(observations).hasAnObservation((observation) -> observation.hasNameEqualTo("zk.lock.held")
			.hasLowCardinalityKeyValue("outcome", "lost")
			.hasHighCardinalityKeyValue("path", "/locks" + this.key + "-lost"));
	}

	@Test
	void aGrantKeptForLockAtLeastForAsLongAsItsCeilingEndsReleasedNotLost() throws Exception {
		LockHandle held = this.holderLocks.acquire(LockRequest.of(this.key)
			.withReentrant(false)
			.withLockAtLeastFor(CEILING)
			.withLockAtMostFor(CEILING));
		held.release();
		assertThat(held.deadline()).hasValueSatisfying(
				(deadline) -> assertThat(deadline).isAfter(Instant.now().plus(CEILING).plusMillis(500)));
		await().atMost(BOUND).until(() -> held.state() == LockState.RELEASED);
		Thread.sleep(1200);
		assertThat(this.holderEvents).isEmpty();
	}

	@Test
	void aCeilingShorterThanLockAtLeastForIsRefused() {
		LockRequest request = LockRequest.of(this.key).withReentrant(false).withLockAtLeastFor(Duration.ofSeconds(2));
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> request.withLockAtMostFor(Duration.ofSeconds(1)))
			.withMessageContaining("lockAtMostFor must not be shorter than lockAtLeastFor");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> request.withLockAtMostFor(Duration.ofSeconds(-1)))
			.withMessageContaining("NO_CEILING for none");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> request.withLockAtMostFor(Duration.ZERO))
			.withMessageContaining("use a positive duration, or NO_CEILING for none");
		assertThat(request.withLockAtMostFor(Duration.ofSeconds(2)).lockAtMostFor()).isEqualTo(Duration.ofSeconds(2));
	}

	private static CuratorLockAdmin admin(CuratorLockRegistry registry) {
		return Admins.admin(registry);
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
		return switch (kind) {
			case "READ", "WRITE" -> LockMode.WRITE;
			default -> LockMode.EXCLUSIVE;
		};
	}

	/**
	 * How long after the holder's deadline (its grant's decision plus the ceiling) the waiter was
	 * granted, read where the grant arrived. Measured from the deadline, not from when the holder's
	 * call returned: a holder thread scheduled late after its grant (a loaded machine) would
	 * otherwise make the ceiling look early.
	 */
	private static long afterDeadlineMs(LockHandle held, Instant grantedAt) {
		return Duration.between(held.deadline().orElseThrow(), grantedAt).toMillis();
	}

}
