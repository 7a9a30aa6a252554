package io.github.zklock.integration;

import java.time.Duration;
import java.time.Instant;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * The time to live of {@link ZkLockRegistry}'s locks ({@code DistributedLock.lock(ttl)},
 * {@code tryLock(waitTime, ttl)}, the registry's default) and their renewal
 * ({@code RenewableLockRegistry.renewLock}, the renewal scheduler), against a real ZooKeeper with
 * two "applications" (two clients, each with its own zk-lock registry).
 *
 * <p>Covers what Spring Integration's own tests (7.0.5) check of time to live and renewal,
 * written anew:
 * <ul>
 * <li>{@code testLockWithCustomTtl}, {@code testTryLockWithCustomTtl} (Redis, JDBC): a lock's own
 * ttl outlives the registry's shorter default, and its unlock is quiet:
 * {@link #aTtlGivenToTheLockReplacesTheDefault};</li>
 * <li>{@code testExpireTwoRegistries}, {@code testOutOfDateLockTaken},
 * {@code testUnlockAfterLockStatusHasBeenExpiredAndLockHasBeenAcquiredByAnotherProcess} (the
 * lock is free for another process once its ttl passed; the old holder's unlock throws
 * {@link ConcurrentModificationException}), {@code testUnlockAfterLockStatusHasBeenExpired},
 * {@code testExceptionOnExpire} (that unlock also when nobody took the lock):
 * {@link #aLockIsFreeForAnotherApplicationOnceItsTtlHasPassed} and
 * {@link #unlockingALockItsTtlEndedThrowsAlsoWhenNobodyTookIt};</li>
 * <li>{@code testReentrantLockAfterExpiration} (JDBC re-takes an expired lock on re-entry):
 * here the re-entry fails until the ended grant is unlocked,
 * {@link #aThreadCannotReenterALockItsTtlEndedUntilItUnlocksIt};</li>
 * <li>{@code testLockRenew}: {@link #renewLockWithoutATtlRenewsToTheDefault};</li>
 * <li>{@code testLockRenewLockNotOwned}: {@link #renewingALockTheThreadDoesNotHoldIsRefused};</li>
 * <li>{@code testLockRenewWithCustomTtl}: {@link #renewLockWithATtlKeepsTheLockPastItsFirstTtl};</li>
 * <li>{@code testRenewLock} (JDBC, renewing while another process waits):
 * {@link #renewingBeforeEachExpiryKeepsTheLockWhileAnotherApplicationWaits};</li>
 * <li>{@code testRenewalOnExpire} (Redis, the renewal scheduler):
 * {@link #theRenewalSchedulerKeepsALockPastItsTtlUntilItIsUnlocked};</li>
 * <li>{@code testExpireNotChanged} (Redis, another thread's failed attempt leaves the expiry):
 * {@link #anotherThreadsFailedAttemptLeavesTheTtl}.</li>
 * </ul>
 * Also: renewing a lock whose ttl passed fails; a plain {@code lock()} has no ttl unless the
 * registry or the template gives a default; a ttl of zero is none; a re-entry renews the grants
 * it nests in; the arguments are checked.
 */
class ZkLockRegistryTtlTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration TTL = Duration.ofMillis(700);

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** How early a timed event may be seen: the ceiling is scheduled by the wall clock's nanos. */
	private static final Duration CLOCK_GRANULARITY = Duration.ofMillis(50);

	private Application first;

	private Application second;

	private CuratorFramework observer;

	private final ExecutorService otherThread = Executors.newSingleThreadExecutor();

	private String key;

	@BeforeEach
	void start(TestInfo testInfo) throws InterruptedException {
		this.first = Application.start(zooKeeper);
		this.second = Application.start(zooKeeper);
		this.observer = zooKeeper.newClient();
		this.key = testInfo.getTestMethod().orElseThrow().getName()
				+ testInfo.getDisplayName().replaceAll("[^A-Za-z0-9]", "");
	}

	@AfterEach
	void stop() {
		this.otherThread.shutdownNow();
		this.first.registry().close();
		this.second.registry().close();
	}

	@ParameterizedTest
	@EnumSource
	void aLockIsFreeForAnotherApplicationOnceItsTtlHasPassed(TtlAcquisition acquisition) throws Exception {
		this.first.locks().setDefaultTtl(TTL);
		DistributedLock lock = this.first.locks().obtain(this.key);
		acquisition.acquire(lock, TTL);
		long grantedAt = System.nanoTime();
		Lock other = this.second.locks().obtain(this.key);
		assertThat(other.tryLock()).as("held before its ttl").isFalse();

		// The holder never unlocks in time (slow or stuck): its own application ends the grant.
		assertThat(other.tryLock(TTL.plusSeconds(1).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - grantedAt)).isGreaterThanOrEqualTo(TTL.minus(CLOCK_GRANULARITY));

		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock)
			.withMessageContaining("Lock was released in the store due to expiration");
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).as("released all the same").isZero();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		assertThat(this.first.locks().obtain(this.key).tryLock()).as("the other still holds it").isFalse();
		other.unlock();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void unlockingALockItsTtlEndedThrowsAlsoWhenNobodyTookIt() throws Exception {
		DistributedLock lock = this.first.locks().obtain(this.key);
		lock.lock(TTL);
		LockHandle handle = heldBy(this.first).get(0);
		await().atMost(BOUND).until(() -> handle.state() == LockState.LOST);

		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock)
			.withMessageContaining("Lock was released in the store due to expiration");
		await().atMost(BOUND).until(() -> lockZnodes().isEmpty());
	}

	@ParameterizedTest
	@EnumSource(names = { "LOCK_WITH_TTL", "TRY_LOCK_WITH_TTL" })
	void aTtlGivenToTheLockReplacesTheDefault(TtlAcquisition acquisition) throws Exception {
		this.first.locks().setDefaultTtl(Duration.ofMillis(200));
		Lock other = this.second.locks().obtain(this.key);
		for (int i = 0; i < 3; i++) {
			DistributedLock lock = this.first.locks().obtain(this.key);
			acquisition.acquire(lock, Duration.ofSeconds(5));
			try {
				// Past the registry's default: still held.
				await().pollDelay(Duration.ofMillis(300)).atMost(BOUND).until(() -> true);
				assertThat(other.tryLock()).as("round " + i).isFalse();
			}
			finally {
				assertThatNoException().isThrownBy(lock::unlock);
			}
		}
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void aThreadCannotReenterALockItsTtlEndedUntilItUnlocksIt() throws Exception {
		DistributedLock lock = this.first.locks().obtain(this.key);
		assertThat(lock.tryLock(Duration.ZERO, Duration.ofMillis(100))).isTrue();
		LockHandle handle = heldBy(this.first).get(0);
		await().atMost(BOUND).until(() -> handle.state() == LockState.LOST);

		assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::tryLock)
			.withMessageContaining("held longer than lockAtMostFor (PT0.1S)");
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> lock.lock(TTL));
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);

		assertThat(lock.tryLock()).as("a fresh grant once the ended one is unlocked").isTrue();
		lock.unlock();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void renewLockWithoutATtlRenewsToTheDefault() throws Exception {
		this.first.locks().setDefaultTtl(TTL);
		Lock lock = this.first.locks().obtain(this.key);
		assertThat(lock.tryLock()).isTrue();
		Instant firstDeadline = heldBy(this.first).get(0).deadline().orElseThrow();
		await().pollDelay(TTL.dividedBy(2)).atMost(BOUND).until(() -> true);

		this.first.locks().renewLock(this.key);
		Instant renewedDeadline = heldBy(this.first).get(0).deadline().orElseThrow();
		assertThat(renewedDeadline).isAfter(firstDeadline.plus(TTL.dividedBy(2)).minus(CLOCK_GRANULARITY));
		// Past the first ttl: still held.
		await().pollDelay(TTL.dividedBy(2).plusMillis(100)).atMost(BOUND).until(() -> true);
		assertThat(this.second.locks().obtain(this.key).tryLock()).isFalse();
		assertThatNoException().isThrownBy(lock::unlock);
	}

	@Test
	void renewLockWithoutATtlIsRefusedWhenThereIsNoDefault() {
		Lock lock = this.first.locks().obtain(this.key);
		assertThat(lock.tryLock()).isTrue();
		try {
			assertThat(this.first.locks().getDefaultTtl()).isZero();
			assertThatIllegalStateException().isThrownBy(() -> this.first.locks().renewLock(this.key))
				.withMessageContaining("has no default time to live");
			assertThat(heldBy(this.first).get(0).deadline()).as("unchanged: no ttl").isEmpty();
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void renewingALockTheThreadDoesNotHoldIsRefused() throws Exception {
		ZkLockRegistry locks = this.first.locks();
		locks.setDefaultTtl(TTL);
		locks.obtain(this.key);
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(() -> locks.renewLock(this.key));
		assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(() -> locks.renewLock(this.key, Duration.ofSeconds(2)));

		// Held by another thread of the same application: still not this thread's.
		Lock lock = locks.obtain(this.key);
		assertThat(this.otherThread.submit(() -> lock.tryLock()).get(10, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(() -> locks.renewLock(this.key));
		this.otherThread.submit(lock::unlock).get(10, TimeUnit.SECONDS);
	}

	@Test
	void renewingALockWhoseTtlPassedFails() throws Exception {
		DistributedLock lock = this.first.locks().obtain(this.key);
		lock.lock(Duration.ofMillis(100));
		LockHandle handle = heldBy(this.first).get(0);
		await().atMost(BOUND).until(() -> handle.state() == LockState.LOST);

		assertThatIllegalStateException().isThrownBy(() -> this.first.locks().renewLock(this.key, TTL))
			.withMessageContaining("Could not renew")
			.withMessageContaining("held longer than lockAtMostFor");
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);
	}

	@Test
	void renewLockWithATtlKeepsTheLockPastItsFirstTtl() throws Exception {
		DistributedLock lock = this.first.locks().obtain(this.key);
		Lock other = this.second.locks().obtain(this.key);
		assertThat(lock.tryLock(Duration.ofMillis(100), TTL)).isTrue();
		try {
			this.first.locks().renewLock(this.key, Duration.ofSeconds(5));
			await().pollDelay(TTL.plusMillis(100)).atMost(BOUND).until(() -> true);
			assertThat(other.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
		}
		finally {
			assertThatNoException().isThrownBy(lock::unlock);
		}
	}

	@Test
	void renewingBeforeEachExpiryKeepsTheLockWhileAnotherApplicationWaits() throws Exception {
		this.first.locks().setDefaultTtl(TTL);
		Lock lock = this.first.locks().obtain(this.key);
		lock.lockInterruptibly();
		long grantedAt = System.nanoTime();
		var waiting = this.otherThread.submit(() -> {
			Lock other = this.second.locks().obtain(this.key);
			other.lockInterruptibly();
			long at = System.nanoTime();
			other.unlock();
			return at;
		});

		// Three ttls of work, renewed every third of the ttl.
		while (System.nanoTime() - grantedAt < TTL.multipliedBy(3).toNanos()) {
			Thread.sleep(TTL.dividedBy(3).toMillis());
			this.first.locks().renewLock(this.key);
		}
		assertThat(waiting).isNotDone();
		long unlockedAt = System.nanoTime();
		lock.unlock();
		assertThat(waiting.get(10, TimeUnit.SECONDS)).as("the other got it after the unlock").isGreaterThan(unlockedAt);
	}

	@Test
	void theRenewalSchedulerKeepsALockPastItsTtlUntilItIsUnlocked() throws Exception {
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		scheduler.initialize();
		try {
			this.first.locks().setRenewalTaskScheduler(scheduler);
			this.first.locks().setDefaultTtl(TTL);
			Lock lock = this.first.locks().obtain(this.key);
			Lock other = this.second.locks().obtain(this.key);
			assertThat(lock.tryLock()).isTrue();

			// Twice the ttl, never renewed by the holder itself.
			await().pollDelay(TTL.multipliedBy(2)).atMost(BOUND).until(() -> true);
			assertThat(heldBy(this.first).get(0).isHeld()).isTrue();
			assertThat(other.tryLock()).isFalse();
			assertThatNoException().isThrownBy(lock::unlock);

			// The renewal stops with the unlock: a grant without renewal ends at its ttl.
			this.first.locks().setRenewalTaskScheduler(null);
			assertThat(lock.tryLock()).isTrue();
			assertThat(other.tryLock(TTL.plusSeconds(1).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
			assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);
			other.unlock();
		}
		finally {
			scheduler.shutdown();
		}
	}

	@Test
	void anotherThreadsFailedAttemptLeavesTheTtl() throws Exception {
		DistributedLock lock = this.first.locks().obtain(this.key);
		lock.lock(Duration.ofSeconds(10));
		try {
			Instant deadline = heldBy(this.first).get(0).deadline().orElseThrow();
			assertThat(this.otherThread.submit(() -> lock.tryLock(Duration.ZERO, Duration.ofSeconds(30)))
				.get(10, TimeUnit.SECONDS)).isFalse();
			assertThat(heldBy(this.first)).singleElement()
				.satisfies((handle) -> assertThat(handle.deadline()).contains(deadline));
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void aPlainLockHasNoTtlUnlessTheRegistryOrTheTemplateGivesADefault() throws Exception {
		Lock plain = this.first.locks().obtain(this.key);
		plain.lock();
		assertThat(heldBy(this.first)).singleElement().satisfies((handle) -> assertThat(handle.deadline()).isEmpty());
		plain.unlock();

		LockTemplate withDefault = LockTemplate.builder(this.first.registry())
			.defaultWaitTime(Duration.ofSeconds(10))
			.defaultLockAtMostFor(TTL)
			.build();
		ZkLockRegistry templateDefault = new ZkLockRegistry(withDefault);
		assertThat(templateDefault.getDefaultTtl()).isEqualTo(TTL);
		Lock defaulted = templateDefault.obtain(this.key);
		defaulted.lock();
		assertThat(heldBy(this.first)).singleElement().satisfies((handle) -> assertThat(handle.deadline()).isPresent());
		defaulted.unlock();

		// The registry's own default wins over the template's: here, none.
		templateDefault.setDefaultTtl(LockRequest.NO_CEILING);
		assertThat(templateDefault.getDefaultTtl()).isZero();
		defaulted.lock();
		await().pollDelay(TTL.plusMillis(200)).atMost(BOUND).until(() -> true);
		assertThat(heldBy(this.first)).singleElement().satisfies((handle) -> {
			assertThat(handle.deadline()).isEmpty();
			assertThat(handle.isHeld()).isTrue();
		});
		assertThatNoException().isThrownBy(defaulted::unlock);
		templateDefault.setDefaultTtl(null);
		assertThat(templateDefault.getDefaultTtl()).isEqualTo(TTL);
	}

	@Test
	void aReentryRenewsTheGrantsItNestsIn() throws Exception {
		DistributedLock lock = this.first.locks().obtain(this.key);
		lock.lock(TTL);
		long grantedAt = System.nanoTime();
		Lock other = this.second.locks().obtain(this.key);
		// A heartbeat as LockRegistryLeaderInitiator's: re-lock, unlock at once, before each ttl ends.
		while (System.nanoTime() - grantedAt < TTL.multipliedBy(2).toNanos()) {
			Thread.sleep(TTL.dividedBy(3).toMillis());
			assertThat(lock.tryLock(Duration.ZERO, TTL)).isTrue();
			lock.unlock();
		}
		assertThat(other.tryLock()).as("kept alive by the re-entries").isFalse();

		// The heartbeat stops: the outer grant ends one ttl after the last re-entry.
		assertThat(other.tryLock(TTL.plusSeconds(1).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);
		other.unlock();
	}

	@ParameterizedTest
	@EnumSource
	void aZeroTtlIsNone(TtlAcquisition acquisition) throws Exception {
		// Zero is none: neither the default (here a ttl) nor a ceiling reached at once.
		this.first.locks().setDefaultTtl((acquisition == TtlAcquisition.DEFAULT_TTL) ? Duration.ZERO : TTL);
		DistributedLock lock = this.first.locks().obtain(this.key);
		acquisition.acquire(lock, Duration.ZERO);
		try {
			assertThat(heldBy(this.first)).singleElement().satisfies((handle) -> {
				assertThat(handle.deadline()).isEmpty();
				assertThat(handle.isHeld()).isTrue();
			});
		}
		finally {
			lock.unlock();
		}
		if (acquisition == TtlAcquisition.DEFAULT_TTL) {
			assertThat(this.first.locks().getDefaultTtl()).isZero();
		}
	}

	@Test
	void refusesANegativeTtlAndRenewalsWithoutAPositiveOne() {
		DistributedLock lock = this.first.locks().obtain(this.key);
		assertThatIllegalArgumentException().isThrownBy(() -> lock.lock(Duration.ofSeconds(-1)))
			.withMessageContaining("time to live");
		assertThatIllegalArgumentException().isThrownBy(() -> lock.tryLock(Duration.ZERO, Duration.ofSeconds(-1)));
		assertThatIllegalArgumentException().isThrownBy(() -> this.first.locks().setDefaultTtl(Duration.ofSeconds(-1)));
		assertThatIllegalArgumentException().isThrownBy(() -> this.first.locks().renewLock(this.key, Duration.ZERO));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.first.locks().renewLock(this.key, Duration.ofSeconds(-1)));
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	private static List<LockHandle> heldBy(Application application) {
		return new CuratorLockAdmin(application.registry()).heldLocks();
	}

	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, Application.lockPath(this.key));
	}

	/** The ways to take a lock with a time to live. */
	enum TtlAcquisition {

		LOCK_WITH_TTL {
			@Override
			void acquire(DistributedLock lock, Duration ttl) {
				lock.lock(ttl);
			}
		},

		TRY_LOCK_WITH_TTL {
			@Override
			void acquire(DistributedLock lock, Duration ttl) throws InterruptedException {
				assertThat(lock.tryLock(Duration.ofSeconds(10), ttl)).isTrue();
			}
		},

		/** {@code lock()}, with the registry's default set to the ttl. */
		DEFAULT_TTL {
			@Override
			void acquire(DistributedLock lock, Duration ttl) {
				lock.lock();
			}
		};

		abstract void acquire(DistributedLock lock, Duration ttl) throws InterruptedException;

	}

}
