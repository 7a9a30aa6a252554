package io.github.zklock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.tck.TestObservationRegistry;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@link ZkLockProvider} against a real ZooKeeper, with two "applications" (two clients, each with
 * its own zk-lock registry, template and provider).
 *
 * <p>Covers every scenario of ShedLock's {@code AbstractLockProviderIntegrationTest} and
 * {@code AbstractExtensibleLockProviderIntegrationTest} (7.10.1; 8 and 7 scenarios), written anew
 * from what each checks, where "locked" means the lock's ephemeral znode exists and the other
 * application cannot lock the name, "unlocked" that no ephemeral znode is left:
 * <ul>
 * <li>{@code shouldCreateLock}: {@link #locksANameUntilItIsUnlocked};</li>
 * <li>{@code shouldNotReturnSecondLock}:
 * {@link #refusesASecondLockOfALockedNameInThisApplicationAndInAnother};</li>
 * <li>{@code shouldCreateTwoIndependentLocks}: {@link #locksOfDifferentNamesAreIndependent};</li>
 * <li>{@code shouldLockTwiceInARow}: {@link #locksANameAgainAfterItWasUnlocked};</li>
 * <li>{@code shouldTimeout} (the lock is free once {@code lockAtMostFor} has passed, though its
 * holder never unlocked): {@link #freesTheLockForAnotherApplicationOnceLockAtMostForHasPassed};</li>
 * <li>{@code shouldBeAbleToLockRightAfterUnlock}: {@link #locksANameRightAfterEachUnlock};</li>
 * <li>{@code fuzzTestShouldPass}: {@link ZkLockProviderFuzzTests};</li>
 * <li>{@code shouldLockAtLeastFor}: {@link #keepsTheLockForLockAtLeastForAfterAQuickUnlock};</li>
 * <li>{@code shouldBeAbleToExtendLock}, {@code shouldBeAbleToExtendMultipleTimes} (still locked
 * after the original {@code lockAtMostFor}): {@link #extendsALockOnceOrSeveralTimesPastItsFirstLockAtMostFor};</li>
 * <li>{@code shouldNotBeAbleToExtendUnlockedLock}, {@code lockCanNotBeExtendedTwice},
 * {@code lockCanNotBeUnlockedAfterExtending}: {@link #aLockIsUsedOnceByUnlockOrExtend};</li>
 * <li>{@code shouldNotBeAbleToExtendExpiredLock} (past {@code lockAtMostFor}, the extension is
 * empty and the lock unlocked): {@link #cannotExtendALockWhoseLockAtMostForHasPassed};</li>
 * <li>{@code shouldBeAbleToExtendAtLeast}:
 * {@link #extensionKeepsTheLockForItsLockAtLeastForCountedFromTheExtension}.</li>
 * </ul>
 * Not applicable: ShedLock's {@code AbstractStorageBasedLockProviderIntegrationTest} (a lock
 * record in a store, the "locked until" column, a record left by an older version): there is no
 * record here, only the ephemeral znode and the holder's own ceiling.
 *
 * <p>Also: an extension's {@code lockAtMostFor} counts from the extension, also when shorter; a
 * zero {@code lockAtMostFor} sets no ceiling and the configuration's wins over the template's
 * default; an unlocked lock kept until {@code lockAtLeastFor} (equal to {@code lockAtMostFor},
 * or past an extension's ceiling) ends as released then, not as expired; a holder that dies
 * frees the lock with its session before {@code lockAtMostFor}; {@code lockAtLeastFor} does not
 * outlive the holder's session; a grant lost while the job runs is reported (handle state,
 * lock-state listener) and its unlock does not fail; lock names as one encoded path segment; the
 * key prefix; the exclusion with a zk-lock request on the same key; the name in metrics.
 * ZooKeeper down: {@link ZkLockProviderOutageTests}.
 */
class ZkLockProviderTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration LOCK_AT_MOST_FOR = Duration.ofMinutes(5);

	private static final Duration AT_LEAST = Duration.ofSeconds(1);

	/** How early a timed event may be seen: the release is scheduled by the wall clock's nanos. */
	private static final Duration CLOCK_GRANULARITY = Duration.ofMillis(20);

	private Application first;

	private Application second;

	/** Looks at the tree from outside the applications; one for the class (a client takes 0.1 s to close). */
	private static CuratorFramework observer;

	private String name;

	@BeforeAll
	static void connectObserver() throws InterruptedException {
		observer = zooKeeper.newClient();
	}

	@BeforeEach
	void start(TestInfo testInfo) throws InterruptedException {
		this.first = Application.start(zooKeeper);
		this.second = Application.start(zooKeeper);
		this.name = testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void stop() {
		this.first.registry().close();
		this.second.registry().close();
	}

	@Test
	void locksANameUntilItIsUnlocked() throws Exception {
		Optional<SimpleLock> lock = this.first.provider().lock(config(this.name));

		assertThat(lock).isPresent();
		assertLocked(this.name);
		assertThat(znodes(this.name)).as("one lease of the non-reentrant lock").hasSize(1);
		lock.get().unlock();
		assertUnlocked(this.name);
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@Test
	void refusesASecondLockOfALockedNameInThisApplicationAndInAnother() throws Exception {
		SimpleLock lock = this.first.provider().lock(config(this.name)).orElseThrow();

		assertThat(this.first.provider().lock(config(this.name))).as("same provider, same thread").isEmpty();
		assertThat(this.second.provider().lock(config(this.name))).as("another application").isEmpty();
		assertThat(znodes(this.name)).as("the refused attempts leave nothing behind").hasSize(1);
		lock.unlock();
		assertUnlocked(this.name);
	}

	@Test
	void locksOfDifferentNamesAreIndependent() throws Exception {
		SimpleLock one = this.first.provider().lock(config(this.name + "-1")).orElseThrow();
		SimpleLock two = this.first.provider().lock(config(this.name + "-2")).orElseThrow();

		assertLocked(this.name + "-1");
		assertLocked(this.name + "-2");
		one.unlock();
		assertUnlocked(this.name + "-1");
		assertLocked(this.name + "-2");
		two.unlock();
		assertUnlocked(this.name + "-2");
	}

	@Test
	void locksANameAgainAfterItWasUnlocked() throws Exception {
		this.first.provider().lock(config(this.name)).orElseThrow().unlock();

		Optional<SimpleLock> again = this.first.provider().lock(config(this.name));
		assertThat(again).isPresent();
		again.get().unlock();
		assertUnlocked(this.name);
	}

	@Test
	void locksANameRightAfterEachUnlock() throws Exception {
		for (int i = 0; i < 10; i++) {
			Application holder = (i % 2 == 0) ? this.first : this.second;
			Application other = (i % 2 == 0) ? this.second : this.first;
			Optional<SimpleLock> lock = holder.provider().lock(config(this.name));
			assertThat(lock).as("round " + i).isPresent();
			assertThat(holder.provider().lock(config(this.name))).as("round " + i).isEmpty();
			assertThat(other.provider().lock(config(this.name))).as("round " + i).isEmpty();
			lock.get().unlock();
		}
		assertUnlocked(this.name);
	}

	@Test
	void keepsTheLockForLockAtLeastForAfterAQuickUnlock() throws Exception {
		long grantedAt = System.nanoTime();
		SimpleLock lock = this.first.provider()
			.lock(config(this.name, AT_LEAST.multipliedBy(2), AT_LEAST))
			.orElseThrow();
		lock.unlock();

		// The unlocking thread is back at once; the key stays taken in ZooKeeper.
		assertThat(znodes(this.name)).hasSize(1);
		assertThat(this.first.provider().lock(config(this.name))).isEmpty();
		assertThat(this.second.provider().lock(config(this.name))).isEmpty();

		SimpleLock next = await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
			.isGreaterThanOrEqualTo(AT_LEAST.minus(CLOCK_GRANULARITY));
		next.unlock();
		assertUnlocked(this.name);
	}

	@Test
	void unlockAfterLockAtLeastForHasPassedReleasesAtOnce() throws Exception {
		SimpleLock lock = this.first.provider()
			.lock(config(this.name, LOCK_AT_MOST_FOR, Duration.ofMillis(50)))
			.orElseThrow();
		// The job runs longer than lockAtLeastFor.
		await().pollDelay(Duration.ofMillis(100)).atMost(Duration.ofSeconds(1)).until(() -> true);

		lock.unlock();
		assertUnlocked(this.name);
		SimpleLock next = this.second.provider().lock(config(this.name)).orElseThrow();
		next.unlock();
	}

	@Test
	void freesTheLockForAnotherApplicationOnceLockAtMostForHasPassed() throws Exception {
		List<LockStateEvent> events = new CopyOnWriteArrayList<>();
		this.first.registry().addLockStateListener(events::add);
		Duration atMost = Duration.ofMillis(500);
		SimpleLock lock = this.first.provider().lock(config(this.name, atMost, Duration.ZERO)).orElseThrow();
		long grantedAt = System.nanoTime();
		LockHandle handle = new CuratorLockAdmin(this.first.registry()).heldLocks().get(0);
		assertThat(this.second.provider().lock(config(this.name))).as("locked before lockAtMostFor").isEmpty();

		// The holder never unlocks (a job still running, or stuck): its own application ends the grant.
		SimpleLock next = await().atMost(atMost.plusSeconds(1))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
			.isGreaterThanOrEqualTo(atMost.minus(CLOCK_GRANULARITY));
		assertThat(handle.state()).isEqualTo(LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(handle::checkHeld)
			.withMessageContaining("held longer than lockAtMostFor (PT0.5S)");
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(events).extracting(LockStateEvent::state).containsExactly(LockState.LOST));

		// The job ends and ShedLock unlocks: quietly, and the other application keeps its lock.
		lock.unlock();
		assertLocked(this.name);
		next.unlock();
		assertUnlocked(this.name);
	}

	@Test
	void freesTheLockWhenItsHoldersSessionEndsBeforeLockAtMostFor() throws Exception {
		SimpleLock lock = this.first.provider().lock(config(this.name)).orElseThrow();
		assertThat(this.second.provider().lock(config(this.name))).isEmpty();

		// The holder dies as far as ZooKeeper can tell: its session ends, and the znode with it,
		// long before its lockAtMostFor of five minutes.
		zooKeeper.expireSession(this.first.client());
		SimpleLock next = await().atMost(Duration.ofSeconds(10))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		next.unlock();
		lock.unlock();
		assertUnlocked(this.name);
	}

	@Test
	void takesTheCeilingFromTheConfigurationAndNoneForAZeroLockAtMostFor() throws Exception {
		LockTemplate withDefault = LockTemplate.builder(this.first.registry())
			.defaultWaitTime(Duration.ZERO)
			.defaultLockAtMostFor(Duration.ofMillis(300))
			.build();
		ZkLockProvider provider = new ZkLockProvider(withDefault);
		SimpleLock configured = provider.lock(config(this.name + "-configured")).orElseThrow();
		SimpleLock none = provider.lock(config(this.name + "-none", Duration.ZERO, Duration.ZERO)).orElseThrow();
		CuratorLockAdmin admin = new CuratorLockAdmin(this.first.registry());
		LockHandle configuredHandle = admin.heldLocks().stream()
			.filter((handle) -> handle.path().endsWith("-configured"))
			.findFirst()
			.orElseThrow();
		LockHandle noneHandle = admin.heldLocks().stream()
			.filter((handle) -> handle.path().endsWith("-none"))
			.findFirst()
			.orElseThrow();

		assertThat(configuredHandle.deadline()).hasValueSatisfying((deadline) -> assertThat(deadline)
			.isAfter(Instant.now().plus(LOCK_AT_MOST_FOR).minusSeconds(10)));
		assertThat(noneHandle.deadline()).isEmpty();
		// Well past the template's default: both still held.
		await().pollDelay(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2)).until(() -> true);
		assertLocked(this.name + "-configured");
		assertLocked(this.name + "-none");
		configured.unlock();
		none.unlock();
		assertUnlocked(this.name + "-configured");
		assertUnlocked(this.name + "-none");
	}

	@Test
	void anUnlockedLockEndsAsReleasedWhenItsLockAtLeastForPassesNotAsExpired() throws Exception {
		List<LockStateEvent> events = new CopyOnWriteArrayList<>();
		this.first.registry().addLockStateListener(events::add);
		CuratorLockAdmin admin = new CuratorLockAdmin(this.first.registry());

		// Both times equal, as in ShedLock's own example: the ceiling comes with the kept release.
		long grantedAt = System.nanoTime();
		this.first.provider().lock(config(this.name, AT_LEAST, AT_LEAST)).orElseThrow().unlock();
		LockHandle equal = admin.heldLocks().get(0);
		SimpleLock next = await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
			.isGreaterThanOrEqualTo(AT_LEAST.minus(CLOCK_GRANULARITY));
		await().atMost(Duration.ofSeconds(5)).until(() -> equal.state() == LockState.RELEASED);
		next.unlock();

		// The ceiling before the end of lockAtLeastFor (an extension's shorter lockAtMostFor): the
		// lock is still kept until then, and ends as released.
		grantedAt = System.nanoTime();
		SimpleLock kept = this.first.provider()
			.lock(config(this.name, LOCK_AT_MOST_FOR, AT_LEAST.multipliedBy(2)))
			.orElseThrow()
			.extend(AT_LEAST, Duration.ZERO)
			.orElseThrow();
		LockHandle composed = admin.heldLocks().get(0);
		kept.unlock();
		next = await().atMost(AT_LEAST.multipliedBy(2).plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
			.isGreaterThanOrEqualTo(AT_LEAST.multipliedBy(2).minus(CLOCK_GRANULARITY));
		await().atMost(Duration.ofSeconds(5)).until(() -> composed.state() == LockState.RELEASED);
		assertThat(events).as("no lost grant reported for a job that finished in time").isEmpty();
		next.unlock();
	}

	@Test
	void lockAtLeastForDoesNotOutliveTheHoldersSession() throws Exception {
		// Longer than the expiry takes to be noticed (about 1.5 s here).
		Duration atLeast = Duration.ofSeconds(3);
		long unlockedAt = System.nanoTime();
		this.first.provider().lock(config(this.name, atLeast, atLeast)).orElseThrow().unlock();
		LockHandle handle = new CuratorLockAdmin(this.first.registry()).heldLocks().get(0);
		assertThat(this.second.provider().lock(config(this.name))).isEmpty();

		zooKeeper.expireSession(this.first.client());
		SimpleLock next = await().atMost(Duration.ofSeconds(10))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - unlockedAt)).isLessThan(atLeast);
		next.unlock();
		// The delayed release of the lost grant still comes, without an error, before the client closes.
		await().atMost(atLeast.plusSeconds(5)).until(() -> handle.state() == LockState.RELEASED);
	}

	@Test
	void aGrantLostWhileTheJobRunsIsReportedUnlocksQuietlyAndIsNotExtended() throws Exception {
		List<LockStateEvent> events = new CopyOnWriteArrayList<>();
		this.first.registry().addLockStateListener(events::add);
		SimpleLock unlocked = this.first.provider().lock(config(this.name + "-unlocked")).orElseThrow();
		SimpleLock extended = this.first.provider().lock(config(this.name + "-extended")).orElseThrow();
		List<LockHandle> handles = new CuratorLockAdmin(this.first.registry()).heldLocks();
		assertThat(handles).hasSize(2);

		zooKeeper.expireSession(this.first.client());
		await().atMost(Duration.ofSeconds(10))
			.until(() -> handles.stream().allMatch((handle) -> handle.state() == LockState.LOST));
		// Each handle's listeners are told after its state changes: wait for the events too.
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(events).filteredOn((event) -> event.state() == LockState.LOST)
				.extracting(LockStateEvent::path)
				.containsExactlyInAnyOrder(Application.lockPath(this.name + "-unlocked"),
						Application.lockPath(this.name + "-extended")));
		SimpleLock taken = this.second.provider().lock(config(this.name + "-unlocked")).orElseThrow();

		// The job ends and ShedLock unlocks: no error, the lost grant is let go.
		unlocked.unlock();
		// A job extending its lock learns that it is gone; the grant is let go, the lock used up.
		assertThat(extended.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		assertThatIllegalStateException().isThrownBy(extended::unlock);
		assertThat(handles).allSatisfy((handle) -> assertThat(handle.state()).isEqualTo(LockState.RELEASED));
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
		assertLocked(this.name + "-unlocked");
		taken.unlock();
		SimpleLock next = this.second.provider().lock(config(this.name + "-extended")).orElseThrow();
		next.unlock();
	}

	@Test
	void extendsALockOnceOrSeveralTimesPastItsFirstLockAtMostFor() throws Exception {
		Duration atMost = Duration.ofMillis(500);
		SimpleLock once = this.first.provider().lock(config(this.name + "-once", atMost, Duration.ZERO))
			.orElseThrow();
		SimpleLock thrice = this.first.provider().lock(config(this.name + "-thrice", atMost, Duration.ZERO))
			.orElseThrow();

		SimpleLock extended = once.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
		SimpleLock extendedThrice = thrice.extend(Duration.ofSeconds(10), Duration.ZERO)
			.orElseThrow()
			.extend(Duration.ofSeconds(10), Duration.ZERO)
			.orElseThrow()
			.extend(Duration.ofSeconds(10), Duration.ZERO)
			.orElseThrow();
		// Well past the first lockAtMostFor: still locked.
		await().pollDelay(atMost.multipliedBy(2)).atMost(Duration.ofSeconds(2)).until(() -> true);

		assertLocked(this.name + "-once");
		assertLocked(this.name + "-thrice");
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLocks()).hasSize(2)
			.allSatisfy((handle) -> assertThat(handle.isHeld()).isTrue());
		extended.unlock();
		extendedThrice.unlock();
		assertUnlocked(this.name + "-once");
		assertUnlocked(this.name + "-thrice");
	}

	@Test
	void anExtensionsLockAtMostForCountsFromTheExtensionAlsoWhenShorter() throws Exception {
		Duration atMost = Duration.ofMillis(500);
		SimpleLock lock = this.first.provider().lock(config(this.name, LOCK_AT_MOST_FOR, Duration.ZERO))
			.orElseThrow();
		long extendedAt = System.nanoTime();
		SimpleLock extended = lock.extend(atMost, Duration.ZERO).orElseThrow();

		SimpleLock next = await().atMost(atMost.plusSeconds(1))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - extendedAt))
			.isGreaterThanOrEqualTo(atMost.minus(CLOCK_GRANULARITY));
		// Expired: it cannot be extended again; its unlock would have been quiet.
		assertThat(extended.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		assertLocked(this.name);
		next.unlock();
	}

	@Test
	void cannotExtendALockWhoseLockAtMostForHasPassed() throws Exception {
		// As ShedLock's scenario: 2 ms, then an extension 4 ms later, whether or not the ceiling ran yet.
		SimpleLock shortLived = this.first.provider()
			.lock(config(this.name + "-2ms", Duration.ofMillis(2), Duration.ZERO))
			.orElseThrow();
		await().pollDelay(Duration.ofMillis(4)).atMost(Duration.ofSeconds(1)).until(() -> true);

		assertThat(shortLived.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		await().atMost(Duration.ofSeconds(5)).until(() -> znodes(this.name + "-2ms").isEmpty());
		assertThatIllegalStateException().as("used up").isThrownBy(shortLived::unlock);
		SimpleLock other = this.second.provider().lock(config(this.name + "-2ms")).orElseThrow();
		other.unlock();

		// Once the ceiling has certainly ended the grant.
		SimpleLock ended = this.first.provider()
			.lock(config(this.name + "-ended", Duration.ofMillis(200), Duration.ZERO))
			.orElseThrow();
		LockHandle handle = new CuratorLockAdmin(this.first.registry()).heldLocks().get(0);
		await().atMost(Duration.ofSeconds(5)).until(() -> handle.state() == LockState.LOST);
		assertThat(ended.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		assertThat(handle.state()).as("let go").isEqualTo(LockState.RELEASED);
		await().atMost(Duration.ofSeconds(5)).until(() -> znodes(this.name + "-ended").isEmpty());
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@Test
	void extensionKeepsTheLockForItsLockAtLeastForCountedFromTheExtension() throws Exception {
		SimpleLock lock = this.first.provider().lock(config(this.name, Duration.ofSeconds(10), Duration.ZERO))
			.orElseThrow();
		long extendedAt = System.nanoTime();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), AT_LEAST).orElseThrow();

		extended.unlock();
		assertLocked(this.name);
		SimpleLock next = await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - extendedAt))
			.isGreaterThanOrEqualTo(AT_LEAST.minus(CLOCK_GRANULARITY));
		next.unlock();
	}

	@Test
	void extensionKeepsTheLockAtLeastAsLongAsTheGrantsOwnLockAtLeastFor() throws Exception {
		long grantedAt = System.nanoTime();
		SimpleLock lock = this.first.provider().lock(config(this.name, Duration.ofSeconds(10), AT_LEAST))
			.orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();

		extended.unlock();
		assertLocked(this.name);
		SimpleLock next = await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.second.provider().lock(config(this.name)).orElse(null), (granted) -> granted != null);
		assertThat(Duration.ofNanos(System.nanoTime() - grantedAt))
			.isGreaterThanOrEqualTo(AT_LEAST.minus(CLOCK_GRANULARITY));
		next.unlock();
	}

	@Test
	void aLockIsUsedOnceByUnlockOrExtend() throws Exception {
		SimpleLock unlocked = this.first.provider().lock(config(this.name + "-unlocked")).orElseThrow();
		unlocked.unlock();
		assertUnlocked(this.name + "-unlocked");
		assertThatIllegalStateException().isThrownBy(unlocked::unlock).withMessageContaining("already unlocked");
		assertThatIllegalStateException().isThrownBy(() -> unlocked.extend(Duration.ofSeconds(10), Duration.ZERO));

		SimpleLock lock = this.first.provider().lock(config(this.name)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), AT_LEAST).orElseThrow();
		assertThatIllegalStateException().isThrownBy(() -> lock.extend(Duration.ofSeconds(10), AT_LEAST));
		assertThatIllegalStateException().isThrownBy(lock::unlock);
		assertLocked(this.name);

		// Durations ShedLock refuses are refused before the lock is used up.
		assertThatIllegalArgumentException()
			.isThrownBy(() -> extended.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)));
		assertThatIllegalArgumentException().isThrownBy(() -> extended.extend(Duration.ofSeconds(-1), Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> extended.extend(Duration.ZERO, Duration.ZERO))
			.withMessageContaining("zero lockAtMostFor");
		SimpleLock last = extended.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
		last.unlock();
		// The first extension's lockAtLeastFor still keeps the grant, then it goes.
		assertLocked(this.name);
		await().atMost(AT_LEAST.plusSeconds(5)).until(() -> znodes(this.name).isEmpty());
	}

	@Test
	void mapsANameToOneEncodedSegmentBelowTheKeyPrefix() throws Exception {
		ZkLockProvider provider = this.first.provider();
		assertThat(provider.getKeyPrefix()).isEqualTo("/shedlock");
		assertThat(provider.keyFor("report")).isEqualTo("/shedlock/report");
		assertThat(provider.keyFor("a/b")).isEqualTo("/shedlock/a%2Fb");
		assertThat(provider.keyFor("a%2Fb")).isEqualTo("/shedlock/a%252Fb");
		assertThat(provider.keyFor("..")).isEqualTo("/shedlock/%2E%2E");
		assertThat(provider.keyFor(".")).isEqualTo("/shedlock/%2E");
		assertThat(provider.keyFor("北京-report")).isEqualTo("/shedlock/北京-report");
		assertThat(provider.keyFor("night\tjob")).isEqualTo("/shedlock/night%09job");
		assertThat(provider.keyFor("\uD83D\uDD52")).isEqualTo("/shedlock/%F0%9F%95%92");

		List<String> names = List.of("a/b", "a%2Fb", "..", ".", "北京-report", "night\tjob", "\uD83D\uDD52");
		List<SimpleLock> locks = names.stream()
			.map((each) -> provider.lock(config(each)).orElseThrow())
			.toList();
		try {
			// Each name is its own lock, one segment below the prefix, climbing nowhere.
			assertThat(observer.getChildren().forPath("/locks/shedlock")).contains("a%2Fb", "a%252Fb",
					"%2E%2E", "%2E", "北京-report", "night%09job", "%F0%9F%95%92");
			assertThat(observer.checkExists().forPath("/locks/shedlock/a")).isNull();
			for (String each : names) {
				assertThat(this.second.provider().lock(config(each))).as(each).isEmpty();
				assertThat(ZooKeeperExtension.ephemeralZnodes(observer,
						Application.ROOT + provider.keyFor(each))).as(each).hasSize(1);
			}
		}
		finally {
			locks.forEach(SimpleLock::unlock);
		}
	}

	@Test
	void placesTheLocksBelowAGivenKeyPrefix() throws Exception {
		ZkLockProvider jobs = new ZkLockProvider(this.first.template(), "/jobs/shedlock");
		ZkLockProvider topLevel = new ZkLockProvider(this.first.template(), "");
		assertThat(jobs.keyFor(this.name)).isEqualTo("/jobs/shedlock/" + this.name);
		assertThat(topLevel.keyFor(this.name)).isEqualTo("/" + this.name);

		SimpleLock lock = jobs.lock(config(this.name)).orElseThrow();
		try {
			assertThat(ZooKeeperExtension.ephemeralZnodes(observer, "/locks/jobs/shedlock/" + this.name)).hasSize(1);
			SimpleLock other = this.first.provider().lock(config(this.name)).orElseThrow();
			other.unlock();
			SimpleLock top = topLevel.lock(config(this.name)).orElseThrow();
			top.unlock();
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void excludesANonReentrantZkLockRequestOnTheSameKey() throws Exception {
		LockRequest request = LockRequest.of(this.first.provider().keyFor(this.name))
			.withReentrant(false)
			.withWaitTime(Duration.ZERO);
		SimpleLock lock = this.first.provider().lock(config(this.name)).orElseThrow();
		assertThat(this.second.template().tryAcquire(request)).isEmpty();
		lock.unlock();

		LockHandle handle = this.second.template().acquire(request);
		assertThat(this.first.provider().lock(config(this.name))).isEmpty();
		handle.release();
	}

	@Test
	void reportsItsGrantsUnderTheLockNameInObservations() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		LockTemplate observed = LockTemplate.builder(this.first.registry())
			.defaultWaitTime(Duration.ZERO)
			.observationRegistry(observations)
			.build();
		ZkLockProvider provider = new ZkLockProvider(observed);

		SimpleLock lock = provider.lock(config("report/daily")).orElseThrow();
		assertThat(provider.lock(config("report/daily"))).isEmpty();
		lock.unlock();

		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2);
		assertThat(observations).hasAnObservation((observation) -> observation
			.hasNameEqualTo("zk.lock.acquire")
			.hasLowCardinalityKeyValue("name", "shedlock:report/daily")
			.hasLowCardinalityKeyValue("outcome", "acquired")
			.hasHighCardinalityKeyValue("path", "/shedlock/report%2Fdaily"));
		// Busy: ShedLock skips the run, and so the attempt is observed as a skip, not a timeout.
		assertThat(observations).hasAnObservation((observation) -> observation
			.hasNameEqualTo("zk.lock.acquire")
			.hasLowCardinalityKeyValue("name", "shedlock:report/daily")
			.hasLowCardinalityKeyValue("outcome", "skipped"));
		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2)
			.hasHandledContextsThatSatisfy((contexts) -> assertThat(contexts)
				.filteredOn((context) -> "zk.lock.acquire".equals(context.getName()))
				.extracting((context) -> context.getLowCardinalityKeyValue("outcome"))
				.filteredOn((outcome) -> outcome != null)
				.extracting(KeyValue::getValue)
				.containsExactlyInAnyOrder("acquired", "skipped"));
		// The hold ends as released, not expired: the lock was unlocked within its lockAtMostFor.
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held")
			.that()
			.hasLowCardinalityKeyValue("name", "shedlock:report/daily")
			.hasLowCardinalityKeyValue("outcome", "released");
	}

	@Test
	void rejectsAKeyPrefixThatIsNotALegalKeyAndNamesThatCannotBeKeys() {
		LockTemplate template = this.first.template();
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> new ZkLockProvider(template, "no-leading-slash"));
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> new ZkLockProvider(template, "/trailing/"));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> new ZkLockProvider(template, "/"));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> this.first.provider().keyFor(""));

		String longName = "k".repeat(CuratorLockRegistry.MAX_PATH_LENGTH);
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> this.first.provider().lock(config(longName)))
			.withMessageContaining("longer than the limit");
	}

	private static LockConfiguration config(String name) {
		return config(name, LOCK_AT_MOST_FOR, Duration.ZERO);
	}

	private static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
		return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
	}

	/** Locked: its znode is there and the other application cannot lock the name. */
	private void assertLocked(String lockName) throws Exception {
		assertThat(znodes(lockName)).as("ephemeral znodes of " + lockName).isNotEmpty();
		Optional<SimpleLock> other = this.second.provider().lock(config(lockName));
		other.ifPresent(SimpleLock::unlock);
		assertThat(other).as("another application's attempt at " + lockName).isEmpty();
	}

	/** Unlocked: no ephemeral znode left below the lock's znode. */
	private void assertUnlocked(String lockName) throws Exception {
		assertThat(znodes(lockName)).as("ephemeral znodes of " + lockName).isEmpty();
	}

	private List<String> znodes(String lockName) throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(observer, Application.lockPath(lockName));
	}

}
