package io.github.zklock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.integration.util.CheckedRunnable;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@link ZkLockRegistry} against a real ZooKeeper, with two "applications" (two clients, each
 * with its own zk-lock registry) where another process matters.
 *
 * <p>Covers the scenarios of Spring Integration's own {@code ZkLockRegistryTests} (7.0.5; named
 * {@code ZookeeperLockRegistryTests} in the issue), written anew from what each checks:
 * <ul>
 * <li>{@code testLock}, {@code testLockInterruptibly}, {@code testTryLock}:
 * {@link #grantsAndReleasesRepeatedlyLeavingNoZnodeBehind};</li>
 * <li>{@code testReentrantLock}, {@code testReentrantLockInterruptibly}:
 * {@link #reentersTheLockOfAnEqualKeyUntilTheLastUnlock} (locks of equal keys are equal, not
 * the same instance: nothing is cached);</li>
 * <li>{@code testTwoLocks}: {@link #locksOfDifferentKeysAreIndependent};</li>
 * <li>{@code testTwoThreadsSecondFailsToGetLock}:
 * {@link #anotherThreadTimesOutWhileTheLockIsHeldAndCannotUnlockIt};</li>
 * <li>{@code testTwoThreads}: {@link #anotherThreadWaitsUntilTheHolderUnlocks};</li>
 * <li>{@code testTwoThreadsDifferentRegistries}:
 * {@link #anotherApplicationWaitsUntilTheHolderUnlocks};</li>
 * <li>{@code testTwoThreadsWrongOneUnlocks}: {@link #unlockByAnotherThreadIsRefusedAndKeepsTheLock};</li>
 * <li>{@code voidLockFailsWhenServerDown}: {@link ZkLockRegistryOutageTests} (a server stop is
 * a {@code LockException} there, not {@code false});</li>
 * <li>{@code concurrentObtainCapacityTest}:
 * {@link #manyThreadsLockManyKeysAndTheKeyCacheStaysWithinItsCapacity}.</li>
 * </ul>
 * Not applicable: {@code expireUnusedOlderThan} (in {@code testLock}), the cache capacity and LRU
 * order of obtained locks ({@code concurrentObtainRemoveOrderTest},
 * {@code concurrentObtainAccessRemoveOrderTest}, {@code setCapacityTest}) and the bounded
 * key-to-path strategy that disables expiry ({@code testLockWithBoundedStrategy}):
 * {@code ZkLockRegistry} keeps no locks (a lock holds nothing but its key), so there is
 * nothing to expire or evict; the keys' state is kept, bounded and evicted by the zk-lock
 * registry below, whose eviction zk-lock-core tests. The keys map to znodes through the key
 * prefix and the segment encoding ({@link #mapsAKeyToOneEncodedSegmentBelowTheKeyPrefix}).
 *
 * <p>Also: the key mapping and its checks, no re-entry into a lock lost with the session, the
 * template methods {@code executeLocked}, and the exclusion with Spring Integration's
 * {@code ZookeeperLockRegistry} on a shared znode. Time to live and renewal (the scenarios of
 * the Redis and JDBC registries' tests): {@link ZkLockRegistryTtlTests}.
 */
class ZkLockRegistryTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private Application first;

	private Application second;

	/** Looks at the tree from outside the applications. */
	private CuratorFramework observer;

	private final ExecutorService otherThread = Executors.newSingleThreadExecutor();

	@BeforeEach
	void start() throws InterruptedException {
		this.first = Application.start(zooKeeper);
		this.second = Application.start(zooKeeper);
		this.observer = zooKeeper.newClient();
	}

	@AfterEach
	void stop() {
		this.otherThread.shutdownNow();
		this.first.registry().close();
		this.second.registry().close();
	}

	@ParameterizedTest
	@EnumSource
	void grantsAndReleasesRepeatedlyLeavingNoZnodeBehind(Acquisition acquisition) throws Exception {
		for (int i = 0; i < 10; i++) {
			Lock lock = this.first.locks().obtain("repeated");
			acquisition.acquire(lock);
			try {
				assertThat(lockZnodes("repeated")).hasSize(1);
				assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isOne();
				assertThat(this.second.locks().obtain("repeated").tryLock()).as("taken in another application")
					.isFalse();
			}
			finally {
				lock.unlock();
			}
			assertThat(lockZnodes("repeated")).isEmpty();
		}
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@ParameterizedTest
	@EnumSource
	void reentersTheLockOfAnEqualKeyUntilTheLastUnlock(Acquisition acquisition) throws Exception {
		for (int i = 0; i < 3; i++) {
			Lock outer = this.first.locks().obtain("reentrant");
			acquisition.acquire(outer);
			Lock inner = this.first.locks().obtain("reentrant");
			assertThat(inner).isEqualTo(outer).hasSameHashCodeAs(outer);
			acquisition.acquire(inner);
			assertThat(lockZnodes("reentrant")).as("one znode for both grants").hasSize(1);
			assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isEqualTo(2);
			inner.unlock();
			assertThat(this.second.locks().obtain("reentrant").tryLock()).as("still held by the outer grant")
				.isFalse();
			outer.unlock();
			assertThat(lockZnodes("reentrant")).isEmpty();
		}
		Lock lock = this.second.locks().obtain("reentrant");
		assertThat(lock.tryLock()).isTrue();
		lock.unlock();
	}

	@Test
	void locksOfDifferentKeysAreIndependent() throws Exception {
		Lock foo = this.first.locks().obtain("foo");
		Lock bar = this.first.locks().obtain("bar");
		assertThat(bar).isNotEqualTo(foo);
		foo.lockInterruptibly();
		try {
			bar.lockInterruptibly();
			assertThat(lockZnodes("foo")).hasSize(1);
			assertThat(lockZnodes("bar")).hasSize(1);
			bar.unlock();
			assertThat(lockZnodes("bar")).isEmpty();
			assertThat(lockZnodes("foo")).hasSize(1);
		}
		finally {
			foo.unlock();
		}
		assertThat(lockZnodes("foo")).isEmpty();
	}

	@Test
	void anotherThreadTimesOutWhileTheLockIsHeldAndCannotUnlockIt() throws Exception {
		Lock lock = this.first.locks().obtain("contended");
		lock.lock();
		try {
			Future<Throwable> attempt = this.otherThread.submit(() -> {
				Lock same = this.first.locks().obtain("contended");
				long start = System.nanoTime();
				assertThat(same.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
				assertThat(System.nanoTime() - start).as("waited").isGreaterThanOrEqualTo(
						TimeUnit.MILLISECONDS.toNanos(200));
				try {
					same.unlock();
					return null;
				}
				catch (IllegalMonitorStateException ex) {
					return ex;
				}
			});
			assertThat(attempt.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class)
				.hasMessageContaining("does not hold");
			assertThat(lockZnodes("contended")).hasSize(1);
		}
		finally {
			lock.unlock();
		}
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@Test
	void anotherThreadWaitsUntilTheHolderUnlocks() throws Exception {
		Lock lock = this.first.locks().obtain("handed-over");
		lock.lockInterruptibly();
		Future<Boolean> waiter;
		try {
			waiter = this.otherThread.submit(() -> lockAndUnlock(this.first.locks().obtain("handed-over")));
			// The second thread of the application waits in its local queue.
			await().atMost(Duration.ofSeconds(10)).until(() -> new CuratorLockAdmin(this.first.registry()).describeWaitingLocks().size() == 1);
			assertThat(waiter).isNotDone();
		}
		finally {
			lock.unlock();
		}
		assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(lockZnodes("handed-over")).isEmpty();
	}

	@Test
	void anotherApplicationWaitsUntilTheHolderUnlocks() throws Exception {
		Lock lock = this.first.locks().obtain("between-applications");
		lock.lockInterruptibly();
		Future<Boolean> waiter;
		try {
			waiter = this.otherThread.submit(() -> lockAndUnlock(this.second.locks().obtain("between-applications")));
			// The other application queues a znode behind the holder's.
			await().atMost(Duration.ofSeconds(10)).until(() -> lockZnodes("between-applications").size() == 2);
			assertThat(waiter).isNotDone();
		}
		finally {
			lock.unlock();
		}
		assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(lockZnodes("between-applications")).isEmpty();
	}

	@Test
	void unlockByAnotherThreadIsRefusedAndKeepsTheLock() throws Exception {
		Lock lock = this.first.locks().obtain("owned");
		lock.lockInterruptibly();
		try {
			Future<?> wrongUnlock = this.otherThread.submit(lock::unlock);
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> wrongUnlock.get(10, TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOf(IllegalMonitorStateException.class)
				.withMessageContaining("does not hold");
			assertThat(lockZnodes("owned")).hasSize(1);
			assertThat(this.second.locks().obtain("owned").tryLock()).isFalse();
		}
		finally {
			lock.unlock();
		}
		assertThat(lockZnodes("owned")).isEmpty();
	}

	/**
	 * Curator counts a re-entry without asking ZooKeeper, so re-locking is no proof of holding
	 * the lock; after the session is lost the view refuses it, until the lost grant is unlocked.
	 */
	@Test
	void refusesToReenterALockLostWithItsSessionUntilItIsUnlocked() throws Exception {
		Lock lock = this.first.locks().obtain("lost");
		lock.lock();
		this.first.expireSession(zooKeeper);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> new CuratorLockAdmin(this.first.registry()).heldLocks().get(0).state() == LockState.LOST);

		assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::tryLock)
			.withMessageContaining(Application.lockPath("lost"))
			.withMessageContaining("enclosing grant of the lock was lost")
			.withMessageContaining("session was lost");
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::lock);
		Lock taken = this.second.locks().obtain("lost");
		assertThat(taken.tryLock()).as("free for others once the session ended").isTrue();

		lock.unlock();
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
		assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).as("a fresh attempt, held elsewhere").isFalse();
		taken.unlock();
		assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
		lock.unlock();
		assertThat(lockZnodes("lost")).isEmpty();
	}

	@Test
	void unlockWithoutHoldingIsRefused() {
		assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(() -> this.first.locks().obtain("never-locked").unlock());
	}

	@Test
	void manyThreadsLockManyKeysAndTheKeyCacheStaysWithinItsCapacity() throws Exception {
		Application small = Application.start(zooKeeper, (builder) -> {
		}, 17);
		ExecutorService threads = Executors.newFixedThreadPool(4);
		try {
			CountDownLatch together = new CountDownLatch(4);
			List<Future<?>> done = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				String key = "capacity:" + i;
				done.add(threads.submit(() -> {
					together.countDown();
					together.await(10, TimeUnit.SECONDS);
					lockAndUnlock(small.locks().obtain(key));
					return null;
				}));
			}
			for (Future<?> each : done) {
				each.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
			small.registry().close();
		}
		assertThat(new CuratorLockAdmin(small.registry()).heldLockCount()).isZero();
		assertThat(new CuratorLockAdmin(small.registry()).cachedKeyCount()).isLessThanOrEqualTo(17);
		assertThat(this.observer.getChildren().forPath(Application.ROOT + ZkLockRegistry.DEFAULT_KEY_PREFIX))
			.filteredOn((key) -> key.startsWith("capacity:"))
			.hasSize(50)
			.allSatisfy((key) -> assertThat(lockZnodes(key)).isEmpty());
	}

	@Test
	void mapsAKeyToOneEncodedSegmentBelowTheKeyPrefix() throws Exception {
		ZkLockRegistry locks = this.first.locks();
		assertThat(locks.getKeyPrefix()).isEqualTo("/spring-integration");
		assertThat(locks.keyFor("order-42")).isEqualTo("/spring-integration/order-42");
		assertThat(locks.keyFor("order/42")).isEqualTo("/spring-integration/order%2F42");
		assertThat(locks.keyFor("..")).isEqualTo("/spring-integration/%2E%2E");
		assertThat(locks.keyFor("100%")).isEqualTo("/spring-integration/100%25");

		Lock lock = locks.obtain("order/42");
		lock.lock();
		try {
			assertThat(this.observer.getChildren().forPath("/locks/spring-integration/order%2F42")).hasSize(1);
			assertThat(this.observer.checkExists().forPath("/locks/spring-integration/order")).isNull();
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void keysWithEqualStringsShareTheLock() throws Exception {
		Lock number = this.first.locks().obtain(42);
		Lock text = this.first.locks().obtain("42");
		assertThat(number).isEqualTo(text);
		number.lock();
		assertThat(lockZnodes("42")).hasSize(1);
		// Equal views are interchangeable: taken through one, released through the other.
		text.unlock();
		assertThat(lockZnodes("42")).isEmpty();
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@Test
	void placesTheLocksBelowAGivenKeyPrefix() throws Exception {
		ZkLockRegistry orders = new ZkLockRegistry(this.first.template(), "/orders/aggregator");
		ZkLockRegistry topLevel = new ZkLockRegistry(this.first.template(), "");
		assertThat(orders.keyFor("o-1")).isEqualTo("/orders/aggregator/o-1");
		assertThat(topLevel.keyFor("o-1")).isEqualTo("/o-1");
		Lock lock = orders.obtain("o-1");
		lock.lock();
		try {
			assertThat(this.observer.getChildren().forPath("/locks/orders/aggregator/o-1")).hasSize(1);
			assertThat(topLevel.obtain("o-1").tryLock(0, TimeUnit.SECONDS)).as("another key").isTrue();
			topLevel.obtain("o-1").unlock();
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void rejectsANullKey() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.first.locks().obtain(null))
			.withMessageContaining("lockKey");
	}

	@Test
	void rejectsAKeyWhoseStringIsEmpty() {
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> this.first.locks().obtain(""))
			.withMessageContaining("empty");
	}

	@Test
	void rejectsAKeyTooLongForALockPathWhenObtained() {
		String longKey = "k".repeat(CuratorLockRegistry.MAX_PATH_LENGTH);
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> this.first.locks().obtain(longKey))
			.withMessageContaining("longer than the limit");
	}

	@Test
	void rejectsAKeyPrefixThatIsNotALegalKey() {
		LockTemplate template = this.first.template();
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> new ZkLockRegistry(template, "no-leading-slash"));
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> new ZkLockRegistry(template, "/trailing/"));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> new ZkLockRegistry(template, "/"));
	}

	@Test
	void hasNoConditions() {
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> this.first.locks().obtain("conditions").newCondition());
	}

	@Test
	void executeLockedRunsTheCallbackUnderTheLockAndReleasesItAfterwards() throws Exception {
		String result = this.first.locks().executeLocked("executed", () -> {
			assertThat(lockZnodes("executed")).hasSize(1);
			assertThat(this.second.locks().obtain("executed").tryLock()).isFalse();
			return "done";
		});
		assertThat(result).isEqualTo("done");
		assertThat(lockZnodes("executed")).isEmpty();

		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.first.locks()
				.executeLocked("executed", Duration.ofSeconds(1), (CheckedRunnable<RuntimeException>) () -> {
					throw new IllegalStateException("callback failed");
				}));
		assertThat(lockZnodes("executed")).as("released after a failing callback").isEmpty();
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@Test
	void executeLockedWithAWaitTimeTimesOutWhileAnotherApplicationHoldsTheLock() throws Exception {
		Lock held = this.second.locks().obtain("busy");
		held.lock();
		AtomicBoolean ran = new AtomicBoolean();
		try {
			assertThatExceptionOfType(TimeoutException.class)
				.isThrownBy(() -> this.first.locks().executeLocked("busy", Duration.ofMillis(200), () -> ran.set(true)))
				.withMessageContaining("busy");
		}
		finally {
			held.unlock();
		}
		assertThat(ran).isFalse();
		this.first.locks().executeLocked("busy", Duration.ofSeconds(5), () -> ran.set(true));
		assertThat(ran).isTrue();
	}

	/**
	 * The znode of a Curator {@code InterProcessMutex} is all there is to the lock, for either
	 * registry: on the same znode path they exclude each other, and by default they do not meet.
	 */
	@Test
	void excludesSpringIntegrationsZookeeperLockRegistryOnlyOnTheSameZnode() throws Exception {
		ZookeeperLockRegistry theirs = new ZookeeperLockRegistry(this.second.client());
		try {
			CuratorLockRegistry atTheTop = new CuratorLockRegistry(this.first.client(), "/", 10);
			ZkLockRegistry ours = new ZkLockRegistry(new LockTemplate(atTheTop, Duration.ZERO),
					"/SpringIntegration-LockRegistry");
			Lock theirLock = theirs.obtain("shared");
			theirLock.lock();
			try {
				assertThat(ours.obtain("shared").tryLock()).as("same znode").isFalse();
				Lock byDefault = this.first.locks().obtain("shared");
				assertThat(byDefault.tryLock()).as("default roots differ").isTrue();
				byDefault.unlock();
			}
			finally {
				theirLock.unlock();
			}
			Lock ourLock = ours.obtain("shared");
			ourLock.lock();
			try {
				assertThat(theirs.obtain("shared").tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
			}
			finally {
				ourLock.unlock();
			}
			atTheTop.close();
		}
		finally {
			theirs.destroy();
		}
	}

	private List<String> lockZnodes(String lockKey) throws Exception {
		try {
			return this.observer.getChildren().forPath(Application.lockPath(lockKey));
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

	private static boolean lockAndUnlock(Lock lock) throws InterruptedException {
		lock.lockInterruptibly();
		lock.unlock();
		return true;
	}

	/** The ways to take a lock that Spring Integration's users call. */
	enum Acquisition {

		LOCK {
			@Override
			void acquire(Lock lock) {
				lock.lock();
			}
		},

		LOCK_INTERRUPTIBLY {
			@Override
			void acquire(Lock lock) throws InterruptedException {
				lock.lockInterruptibly();
			}
		},

		TRY_LOCK {
			@Override
			void acquire(Lock lock) {
				assertThat(lock.tryLock()).isTrue();
			}
		},

		TRY_LOCK_WITH_TIMEOUT {
			@Override
			void acquire(Lock lock) throws InterruptedException {
				assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
			}
		};

		abstract void acquire(Lock lock) throws InterruptedException;

	}

}
