package io.github.zklock;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for the multi-lock of {@link LockTemplate} (a {@link LockRequest} of several keys, through
 * {@code acquire}, {@code execute} with each on-busy policy, and the skip of one key) on a real
 * ZooKeeper server:
 * the canonical order of the keys (sorted by lock path, duplicates merged) and the parts' paths and
 * fencing tokens; no deadlock between callers naming the keys in opposite orders, in one
 * application and across two; all or nothing (a busy key, one wait budget for all keys, a failure
 * midway or an invalid key leave no key held and no znode); release in reverse order, bound to the
 * acquiring thread; the handle's state after a session expiry; reentrancy inside a grant of one of
 * the keys; READ and WRITE multi-locks across applications; the callback forms with
 * {@link LockContext} and observations; the ZooKeeper requests of an uncontended cycle; invalid
 * arguments. "Two applications" are two clients of one server, each with its own registry and
 * template.
 */
class MultiLockTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration LONG = Duration.ofSeconds(10);

	/** How early a timed wait may end: Curator waits by {@code System.currentTimeMillis()}. */
	private static final Duration CLOCK_GRANULARITY = Duration.ofMillis(10);

	private CuratorFramework client;

	private CuratorFramework observer;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate other;

	/** The test's own node below the root: every key of the test lives below it. */
	private String base;

	private String a;

	private String b;

	private String c;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.observer = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
		this.template = new LockTemplate(this.registry, LONG);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.other = new LockTemplate(this.otherRegistry, LONG);
		this.base = "/" + testInfo.getTestMethod().orElseThrow().getName();
		this.a = this.base + "/a";
		this.b = this.base + "/b";
		this.c = this.base + "/c";
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.registry.close();
		this.otherRegistry.close();
	}

	@Test
	void keysAreAcquiredSortedByLockPathWithDuplicatesMerged() throws Exception {
		RecordingRegistry recording = new RecordingRegistry(this.registry);
		LockTemplate recorded = new LockTemplate(recording, LONG);
		LockHandle multi = recorded.acquire(LockRequest.of(List.of(this.c, this.a, this.b, this.a)).withWaitTime(Duration.ZERO));

		assertThat(recording.acquired).containsExactly(this.a, this.b, this.c);
		assertThat(multi.parts()).extracting(LockHandle::path)
			.containsExactly(ROOT + this.a, ROOT + this.b, ROOT + this.c);
		// The set answers path() and fencingToken() for its first part, in canonical order.
		assertThat(multi.path()).isEqualTo(ROOT + this.a);
		assertThat(multi.fencingToken()).isEqualTo(multi.parts().get(0).fencingToken());
		assertThat(multi.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(multi.state()).isEqualTo(LockState.HELD);
		assertThat(multi.isHeld()).isTrue();
		multi.checkHeld();
		// One grant per distinct key, nothing more.
		assertThat(admin(this.registry).heldLockCount()).isEqualTo(3);
		multi.release();
	}

	@Test
	void eachPartHasTheFencingTokenOfItsOwnZnodeAndTheMultiLockAnswersForItsFirstPart() throws Exception {
		LockHandle multi = this.template.acquire(LockRequest.of(List.of(this.b, this.a)).withWaitTime(Duration.ZERO));
		List<Long> tokens = new ArrayList<>();
		for (LockHandle part : multi.parts()) {
			// The part's znode is the only child of its lock path: nobody else takes part.
			List<String> children = this.observer.getChildren().forPath(part.path());
			assertThat(children).hasSize(1);
			Stat stat = this.observer.checkExists().forPath(ZKPaths.makePath(part.path(), children.get(0)));
			assertThat(part.fencingToken()).as(part.path()).isPositive().isEqualTo(stat.getCzxid());
			assertThat(part.parts()).containsExactly(part);
			tokens.add(part.fencingToken());
		}
		assertThat(tokens).doesNotHaveDuplicates();
		assertThat(multi.fencingToken()).isEqualTo(tokens.get(0));
		assertThat(multi.path()).isEqualTo(multi.parts().get(0).path());
		multi.release();
	}

	@Test
	void oneDistinctKeyGivesThePlainGrantOfThatKey() {
		LockHandle single = this.template.acquire(LockRequest.of(List.of(this.a, this.a)).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO));
		assertThat(single.parts()).containsExactly(single);
		assertThat(single.path()).isEqualTo(ROOT + this.a);
		assertThat(single.fencingToken()).isPositive();
		assertThat(admin(this.registry).heldLockCount()).isOne();
		single.release();
		assertThat(single.state()).isEqualTo(LockState.RELEASED);
	}

	@Test
	void twoThreadsNamingTheKeysInOppositeOrdersNeverDeadlock() {
		assertNoDeadlock(this.template, this.template);
	}

	@Test
	void twoApplicationsNamingTheKeysInOppositeOrdersNeverDeadlock() {
		assertNoDeadlock(this.template, this.other);
	}

	/**
	 * Two threads lock the same two keys, named in opposite orders, many times each. Taken in the
	 * order given, the first time each holds its first key and waits for the other's would hang
	 * both (for their wait time, which is longer than the test's bound).
	 */
	private void assertNoDeadlock(LockTemplate first, LockTemplate second) {
		int cycles = 200;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger done = new AtomicInteger();
		LockCallback<Void> critical = (handle) -> {
			if (inside.incrementAndGet() != 1) {
				overlaps.incrementAndGet();
			}
			handle.checkHeld();
			inside.decrementAndGet();
			done.incrementAndGet();
			return null;
		};
		assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
			CompletableFuture<Void> one = inNewThread(() -> {
				for (int i = 0; i < cycles; i++) {
					first.execute(LockRequest.of(List.of(this.a, this.b)).withWaitTime(Duration.ofSeconds(90)), critical).result();
				}
				return null;
			});
			CompletableFuture<Void> two = inNewThread(() -> {
				for (int i = 0; i < cycles; i++) {
					second.execute(LockRequest.of(List.of(this.b, this.a)).withWaitTime(Duration.ofSeconds(90)), critical).result();
				}
				return null;
			});
			CompletableFuture.allOf(one, two).get();
		});
		assertThat(done).hasValue(2 * cycles);
		assertThat(overlaps).as("callbacks running at once").hasValue(0);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.otherRegistry).heldLockCount()).isZero();
	}

	@Test
	void busyKeyFailsTheWholeMultiLockAndLeavesTheOthersFree() throws Exception {
		LockHandle heldElsewhere = this.other.acquire(this.b, LockMode.EXCLUSIVE, Duration.ZERO);

		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.acquire(LockRequest.of(List.of(this.b, this.a)).withWaitTime(Duration.ZERO)))
			.satisfies((ex) -> {
				assertThat(ex.getPath()).isEqualTo(ROOT + this.b);
				assertThat(ex.getMode()).isEqualTo(LockMode.EXCLUSIVE);
				assertThat(ex.getWaitTime()).isZero();
			})
			.withMessageContaining("'" + ROOT + this.b + "'")
			.withMessageContaining("1 of 2");
		assertThat(admin(this.registry).heldLockCount()).isZero();
		// The key acquired before the busy one is free for the other application at once.
		this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO).release();
		assertThat(lockZnodes()).containsExactlyElementsOf(lockZnodes(this.b));
		heldElsewhere.release();
	}

	@Test
	void busyKeysFailWithinOneWaitTime() throws Exception {
		Duration waitTime = Duration.ofMillis(300);
		LockHandle heldA = this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO);
		LockHandle heldB = this.other.acquire(this.b, LockMode.EXCLUSIVE, Duration.ZERO);

		long started = System.nanoTime();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.acquire(LockRequest.of(List.of(this.b, this.a)).withWaitTime(waitTime)))
			.satisfies((ex) -> {
				// The first busy key in the canonical order.
				assertThat(ex.getPath()).isEqualTo(ROOT + this.a);
				assertThat(ex.getWaitTime()).isEqualTo(waitTime);
			});
		Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
		// The recipe counts its wait in whole milliseconds of the wall clock.
		assertThat(elapsed).isGreaterThanOrEqualTo(waitTime.minus(CLOCK_GRANULARITY))
			.isLessThan(waitTime.multipliedBy(2));
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).hasSize(2);
		heldA.release();
		heldB.release();
	}

	/**
	 * The first key is freed late in the wait time and the second stays busy: with one budget the
	 * call fails once the wait time is over, where a full wait per key would last until three
	 * quarters of it plus all of it.
	 */
	@Test
	void waitTimeIsOneBudgetForAllKeys() throws Exception {
		Duration waitTime = Duration.ofSeconds(1);
		LockHandle heldA = this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO);
		LockHandle heldB = this.other.acquire(this.b, LockMode.EXCLUSIVE, Duration.ZERO);
		AtomicReference<Duration> elapsed = new AtomicReference<>();
		long started = System.nanoTime();
		CompletableFuture<LockHandle> waiter = inNewThread(() -> {
			try {
				return this.template.acquire(LockRequest.of(List.of(this.b, this.a)).withWaitTime(waitTime));
			}
			finally {
				elapsed.set(Duration.ofNanos(System.nanoTime() - started));
			}
		});
		// Queued behind the other application on the first key, which it frees late.
		await().atMost(LONG).until(() -> lockZnodes(this.a).size() > 1);
		long releaseAt = started + waitTime.multipliedBy(3).dividedBy(4).toNanos();
		await().atMost(LONG).pollInterval(Duration.ofMillis(5)).until(() -> System.nanoTime() >= releaseAt);
		heldA.release();

		assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).cause()
			.isInstanceOf(LockAcquisitionException.class)
			.satisfies((ex) -> assertThat(((LockAcquisitionException) ex).getPath()).isEqualTo(ROOT + this.b));
		assertThat(elapsed.get()).isGreaterThanOrEqualTo(waitTime.minus(CLOCK_GRANULARITY))
			.isLessThan(waitTime.plus(waitTime.dividedBy(2)));
		// The first key was granted, then released with the failure.
		assertThat(admin(this.registry).heldLockCount()).isZero();
		this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO).release();
		heldB.release();
	}

	@Test
	void failureMidwayReleasesTheKeysAlreadyAcquired() throws Exception {
		// This thread holds READ on the second key: asking WRITE on it fails after the first key.
		LockHandle read = this.template.acquire(this.b, LockMode.READ, Duration.ZERO);

		assertThatExceptionOfType(LockUpgradeException.class)
			.isThrownBy(() -> this.template.acquire(LockRequest.of(List.of(this.b, this.a)).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO)))
			.withMessageContaining(ROOT + this.b);
		assertThat(admin(this.registry).heldLockCount()).isOne();
		this.other.acquire(this.a, LockMode.WRITE, Duration.ZERO).release();
		assertThat(lockZnodes(this.a)).isEmpty();
		// The READ grant is untouched.
		assertThat(read.isHeld()).isTrue();
		assertThat(this.other.tryAcquire(this.b, LockMode.WRITE, Duration.ZERO)).isEmpty();
		read.release();
	}

	@Test
	void invalidKeyAmongValidOnesRequestsNothing() throws Exception {
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(
				() -> this.template.acquire(LockRequest.of(List.of(this.a, "no-slash", this.b)).withWaitTime(Duration.ZERO)));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(
				() -> this.template.acquire(LockRequest.of(List.of(this.a, this.b + "//c")).withWaitTime(Duration.ZERO)));
		assertThat(admin(this.registry).cachedKeyCount()).as("keys requested").isZero();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		for (String key : List.of(this.a, this.b)) {
			this.other.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO).release();
		}
	}

	@Test
	void releaseReleasesEveryPartInReverseOrderOnce() throws Exception {
		RecordingRegistry recording = new RecordingRegistry(this.registry);
		LockHandle multi = new LockTemplate(recording, LONG).acquire(LockRequest.of(List.of(this.c, this.b, this.a)).withWaitTime(Duration.ZERO));
		assertThat(lockZnodes()).hasSize(3);

		multi.release();
		assertThat(recording.released).containsExactly(ROOT + this.c, ROOT + this.b, ROOT + this.a);
		assertThat(multi.state()).isEqualTo(LockState.RELEASED);
		assertThat(multi.isHeld()).isFalse();
		assertThat(multi.parts()).allSatisfy((part) -> assertThat(part.state()).isEqualTo(LockState.RELEASED));
		assertThatIllegalStateException().isThrownBy(multi::checkHeld).withMessageContaining("released");
		assertThat(lockZnodes()).isEmpty();

		multi.release();
		multi.close();
		assertThat(recording.released).hasSize(3);
		assertThat(multi.state()).isEqualTo(LockState.RELEASED);
		for (String key : List.of(this.a, this.b, this.c)) {
			this.other.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO).release();
		}
	}

	@Test
	void releaseFromAnotherThreadFailsAndReleasesNothing() throws Exception {
		LockHandle multi = this.template.acquire(LockRequest.of(List.of(this.a, this.b)).withWaitTime(Duration.ZERO));

		CompletableFuture<Void> elsewhere = inNewThread(() -> {
			multi.release();
			return null;
		});
		assertThatThrownBy(() -> elsewhere.get(10, TimeUnit.SECONDS)).cause()
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("must be released by it");
		assertThat(multi.state()).isEqualTo(LockState.HELD);
		assertThat(multi.parts()).allSatisfy((part) -> assertThat(part.isHeld()).isTrue());
		assertThat(lockZnodes()).hasSize(2);
		assertThat(this.other.tryAcquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		assertThat(this.other.tryAcquire(this.b, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();

		multi.release();
		assertThat(multi.state()).isEqualTo(LockState.RELEASED);
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void multiLockIsLostWhenTheHoldersSessionExpires() throws Exception {
		LockHandle multi = this.template.acquire(LockRequest.of(List.of(this.a, this.b)).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO));

		zooKeeper.expireSession(this.client);
		await().atMost(LONG).until(() -> multi.state() == LockState.LOST);
		assertThat(multi.isHeld()).isFalse();
		// The multi-lock is lost with its first part; the parts are marked one after the other.
		await().atMost(LONG)
			.untilAsserted(() -> assertThat(multi.parts())
				.allSatisfy((part) -> assertThat(part.state()).isEqualTo(LockState.LOST)));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(multi::checkHeld)
			.withMessageContaining("session was lost");
		// The expired session's znodes are gone: the other application takes both keys.
		this.other.acquire(LockRequest.of(List.of(this.a, this.b)).withMode(LockMode.WRITE).withWaitTime(LONG)).release();

		// Releasing a lost multi-lock is harmless.
		multi.release();
		assertThat(multi.state()).isEqualTo(LockState.RELEASED);
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void multiLockNestedInAGrantOfOneOfItsKeysReentersThatKey() throws Exception {
		this.template.execute(this.b, LockMode.EXCLUSIVE, Duration.ZERO, (outer) -> {
			long outerToken = outer.fencingToken();
			// Wait zero: the key this thread holds is re-entered, not waited for.
			LockHandle multi = this.template.acquire(LockRequest.of(List.of(this.b, this.a)).withWaitTime(Duration.ZERO));
			assertThat(multi.parts()).extracting(LockHandle::path).containsExactly(ROOT + this.a, ROOT + this.b);
			assertThat(multi.parts().get(1).fencingToken()).isEqualTo(outerToken);
			// One znode per key: the nested grant re-entered the outer one's.
			assertThat(lockZnodes()).hasSize(2);

			multi.release();
			assertThat(outer.isHeld()).isTrue();
			assertThat(outer.fencingToken()).isEqualTo(outerToken);
			assertThat(lockZnodes()).containsExactlyElementsOf(lockZnodes(this.b));
			assertThat(this.other.tryAcquire(this.b, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
			this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO).release();
			return null;
		});
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void readMultiLocksOfTwoApplicationsHoldTogetherAndWriteExcludesThem() throws Exception {
		List<String> keys = List.of(this.a, this.b);
		LockHandle mine = this.template.acquire(LockRequest.of(keys).withMode(LockMode.READ).withWaitTime(Duration.ZERO));
		LockHandle theirs = this.other.acquire(LockRequest.of(keys).withMode(LockMode.READ).withWaitTime(Duration.ZERO));
		assertThat(mine.isHeld()).isTrue();
		assertThat(theirs.isHeld()).isTrue();
		theirs.release();

		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.other.acquire(LockRequest.of(keys).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO)))
			.satisfies((ex) -> assertThat(ex.getPath()).isEqualTo(ROOT + this.a));
		mine.release();

		LockHandle write = this.other.acquire(LockRequest.of(keys).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO));
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.acquire(LockRequest.of(keys).withMode(LockMode.READ).withWaitTime(Duration.ZERO)));
		write.release();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void executeRunsTheCallbackUnderTheMultiLockAndReleasesIt() throws Exception {
		AtomicReference<LockHandle> seen = new AtomicReference<>();
		String result = this.template.execute(LockRequest.of(List.of(this.b, this.a)).withWaitTime(Duration.ZERO), (handle) -> {
					seen.set(handle);
					assertThat(LockContext.current()).containsSame(handle);
					assertThat(LockContext.held()).containsExactly(handle);
					assertThat(handle.parts()).extracting(LockHandle::path)
						.containsExactly(ROOT + this.a, ROOT + this.b);
					assertThat(handle.isHeld()).isTrue();
					return "done";
				}).result();
		assertThat(result).isEqualTo("done");
		assertReleased(seen.get());

		IllegalStateException failure = new IllegalStateException("business failure");
		assertThatThrownBy(() -> this.template.execute(
				LockRequest.of(List.of(this.a, this.b)).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO),
				(handle) -> {
					seen.set(handle);
					throw failure;
				}))
			.isSameAs(failure);
		assertReleased(seen.get());

		IOException checked = new IOException("checked failure");
		assertThatExceptionOfType(UndeclaredThrowableException.class)
			.isThrownBy(() -> this.template.execute(LockRequest.of(List.of(this.a, this.b)).withWaitTime(Duration.ZERO), (handle) -> {
						seen.set(handle);
						throw checked;
					}).result())
			.withCause(checked);
		assertReleased(seen.get());
	}

	@Test
	void executeRunsTheCallbackInsideTheHoldObservationOfEveryKey() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		this.template.execute(LockRequest.of(List.of(this.b, this.a)).withWaitTime(Duration.ZERO), (handle) -> {
			// The parts' hold scopes are nested in acquisition order: the innermost is the last key's.
			Observation current = observations.getCurrentObservation();
			assertThat(current).isNotNull();
			assertThat(current.getContext().getName()).isEqualTo("zk.lock.held");
			assertThat(current.getContext().getHighCardinalityKeyValue("path").getValue()).isEqualTo(ROOT + this.b);
			return null;
		}).result();
		assertThat(observations.getCurrentObservation()).isNull();
		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.held", 2)
			.hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2);
	}

	@Test
	void executeSkipsAMultiLockWhenAKeyIsBusyAndObservesTheSkip() throws Exception {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockHandle heldElsewhere = this.other.acquire(this.b, LockMode.EXCLUSIVE, Duration.ZERO);
		LockRequest request = LockRequest.of(List.of(this.b, this.a))
			.withWaitTime(Duration.ZERO)
			.withOnBusy(OnBusy.SKIP)
			.withName("/pair");
		AtomicBoolean ran = new AtomicBoolean();

		LockResult<String> result = this.template.execute(request, (handle) -> {
			ran.set(true);
			return "ran";
		});
		assertThat(result).isEqualTo(LockResult.skipped());
		assertThat(ran).as("callback ran").isFalse();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO).release();
		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2)
			.hasHandledContextsThatSatisfy((contexts) -> {
				// Each key observed under the request's name: a, then the busy b.
				assertThat(outcomes(contexts)).containsExactly(Map.entry("/pair", "acquired"),
						Map.entry("/pair", "skipped"));
			});
		// The first key's hold ended with the skip.
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held").that().hasBeenStopped();

		heldElsewhere.release();
		assertThat(this.template.execute(request, (handle) -> {
			assertThat(LockContext.current()).containsSame(handle);
			assertThat(handle.parts()).hasSize(2);
			return "ran";
		})).isEqualTo(LockResult.executed("ran"));
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void executeSkipsOneKeyWhenItIsBusyAndObservesTheSkip() throws Exception {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockHandle heldElsewhere = this.other.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO);
		AtomicBoolean ran = new AtomicBoolean();

		Integer result = this.template.execute(request(this.a).withName("/job").withOnBusy(OnBusy.SKIP), (handle) -> {
			ran.set(true);
			return 1;
		}).orElse(-1);
		assertThat(result).isEqualTo(-1);
		assertThat(ran).as("callback ran").isFalse();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).containsExactlyElementsOf(lockZnodes(this.a)).hasSize(1);
		assertThat(observations).hasNumberOfObservationsEqualTo(1)
			.hasObservationWithNameEqualTo("zk.lock.acquire")
			.that()
			.hasBeenStopped()
			.doesNotHaveError()
			.hasLowCardinalityKeyValue("outcome", "skipped")
			.hasLowCardinalityKeyValue("name", "/job");

		heldElsewhere.release();
		assertThat(this.template.execute(request(this.a).withOnBusy(OnBusy.SKIP), (handle) -> 1).orElse(-1)).isEqualTo(1);
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void uncontendedCycleOfTwoKeysSendsTheRequestsOfTwoSingleKeyCycles() throws Exception {
		CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();
		CuratorFramework counted = zooKeeper.newClient(
				(builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(counts)));
		try (CuratorLockRegistry countedRegistry = new CuratorLockRegistry(counted, ROOT, 100)) {
			LockTemplate locks = new LockTemplate(countedRegistry, LONG);
			List<String> keys = List.of(this.b, this.a);
			// Once first: the lock paths' container znodes and the recipes exist from then on.
			locks.acquire(LockRequest.of(keys).withWaitTime(Duration.ZERO)).release();

			counts.reset();
			locks.acquire(this.a, LockMode.EXCLUSIVE, Duration.ZERO).release();
			Map<String, Long> single = counts.snapshot();
			long singleWrites = counts.writes();

			counts.reset();
			LockHandle multi = locks.acquire(LockRequest.of(keys).withWaitTime(Duration.ZERO));
			assertThat(multi.parts()).hasSize(2);
			multi.release();
			Map<String, Long> multiCycle = counts.snapshot();

			// A single cycle: create the lock znode, read the queue, delete the znode.
			assertThat(single).as("single-key cycle")
				.isEqualTo(Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
			assertThat(singleWrites).isEqualTo(2);
			assertThat(multiCycle).as("two-key cycle")
				.containsOnlyKeys(single.keySet())
				.allSatisfy((operation, count) -> assertThat(count).isEqualTo(2 * single.get(operation)));
			assertThat(counts.total()).isEqualTo(6);
			assertThat(counts.writes()).isEqualTo(2 * singleWrites).isEqualTo(4);
		}
	}

	@Test
	void invalidArgumentsAreRejectedBeforeAnyRequest() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.template.acquire(LockRequest.of(List.of()).withWaitTime(Duration.ZERO)))
			.withMessageContaining("at least one key");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.template.execute(LockRequest.of(List.of()).withMode(LockMode.READ), (handle) -> null));
		// Keys that would differ in mode, reentrancy or wait time cannot be asked for any more: one
		// request has one of each. What is left to refuse: a permit of several keys, READ or WRITE
		// not reentrant, an illegal key among legal ones (checked before the first key is requested).
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.permit(this.a, 2).withKeys(List.of(this.a, this.b)))
			.withMessageContaining("permit");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.of(List.of(this.a, this.b)).withMode(LockMode.READ).withReentrant(false))
			.withMessageContaining("READ");
		AtomicBoolean ran = new AtomicBoolean();
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> this.template.execute(
				LockRequest.of(List.of(this.a, this.b + "//bad")).withOnBusy(OnBusy.SKIP),
				(handle) -> ran.getAndSet(true)));
		assertThat(ran).isFalse();
		assertThat(admin(this.registry).cachedKeyCount()).as("keys requested").isZero();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	private LockTemplate observed(TestObservationRegistry observations) {
		return LockTemplate.builder(this.registry).defaultWaitTime(LONG).observationRegistry(observations).build();
	}

	private LockRequest request(String key) {
		return LockRequest.of(key).withWaitTime(Duration.ZERO);
	}

	/** The name and outcome of each {@code zk.lock.acquire} observation, in order. */
	private static List<Map.Entry<String, String>> outcomes(List<Observation.Context> contexts) {
		return contexts.stream()
			.filter((context) -> context.getName().equals("zk.lock.acquire"))
			.map((context) -> Map.entry(context.getLowCardinalityKeyValue("name").getValue(),
					context.getLowCardinalityKeyValue("outcome").getValue()))
			.toList();
	}

	private void assertReleased(LockHandle multi) throws Exception {
		assertThat(multi).isNotNull();
		assertThat(multi.parts()).hasSize(2);
		assertThat(multi.state()).isEqualTo(LockState.RELEASED);
		assertThat(LockContext.current()).isEmpty();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		this.other.acquire(LockRequest.of(List.of(this.a, this.b)).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO)).release();
	}

	/** The ephemeral znodes below the test's keys, at any depth: every grant and waiter. */
	private List<String> lockZnodes() throws Exception {
		return lockZnodes(this.base);
	}

	private List<String> lockZnodes(String key) throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + key);
	}

	/** Run a blocking task in a new daemon thread, as another caller would. */
	private static <T> CompletableFuture<T> inNewThread(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, (runnable) -> {
			Thread thread = new Thread(runnable);
			thread.setDaemon(true);
			thread.start();
		});
	}

	/**
	 * Passes requests on to a real registry, keeping the keys granted in order, and wraps the
	 * grants to keep the lock paths released in order.
	 */
	private static final class RecordingRegistry implements LockRegistry {

		private final LockRegistry delegate;

		private final List<String> acquired = new CopyOnWriteArrayList<>();

		private final List<String> released = new CopyOnWriteArrayList<>();

		RecordingRegistry(LockRegistry delegate) {
			this.delegate = delegate;
		}

		@Override
		public Optional<RegistryGrant> tryAcquire(LockTarget target) {
			Optional<RegistryGrant> handle = this.delegate.tryAcquire(target);
			handle.ifPresent((granted) -> this.acquired.add(target.key()));
			return handle.map(RecordedHandle::new);
		}

		@Override
		public String lockPath(String key) {
			return this.delegate.lockPath(key);
		}

		private final class RecordedHandle implements RegistryGrant {

			private final RegistryGrant delegate;

			RecordedHandle(RegistryGrant delegate) {
				this.delegate = delegate;
			}

			@Override
			public String path() {
				return this.delegate.path();
			}

			@Override
			public LockMode mode() {
				return this.delegate.mode();
			}

			@Override
			public boolean isHeld() {
				return this.delegate.isHeld();
			}

			@Override
			public LockState state() {
				return this.delegate.state();
			}

			@Override
			public void checkHeld() {
				this.delegate.checkHeld();
			}

			@Override
			public long fencingToken() {
				return this.delegate.fencingToken();
			}

			@Override
			public void release() {
				boolean held = this.delegate.state() != LockState.RELEASED;
				this.delegate.release();
				if (held) {
					RecordingRegistry.this.released.add(this.delegate.path());
				}
			}

			@Override
			public CompletableFuture<Void> releaseAsync() {
				boolean held = this.delegate.state() != LockState.RELEASED;
				CompletableFuture<Void> deleted = this.delegate.releaseAsync();
				if (held) {
					RecordingRegistry.this.released.add(this.delegate.path());
				}
				return deleted;
			}

			@Override
			public CompletionStage<Void> whenLost() {
				return this.delegate.whenLost();
			}

		}

	}

}
