package io.github.zklock.integration;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.util.CheckedRunnable;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;
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
 *
 * <p>The distributed condition, a zk-lock addition (Spring Integration's registries have none):
 * {@code obtain(key).newCondition()} waits and is signalled across applications, and is the
 * condition of {@code LockTemplate.lock(key)} for the same zk-lock key in every application; a
 * wait releases every reentrant hold and takes them all again; {@code await} and {@code signal}
 * without the lock throw {@link IllegalMonitorStateException}; a timed wait nobody signals
 * returns {@code false} with the lock held again; a grant with a time to live is taken again with
 * it, and renewed by the registry's scheduler as before the wait.
 */
class ZkLockRegistryTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	/** How early a timed event may be seen: the ceiling is scheduled by the wall clock's nanos. */
	private static final Duration CLOCK_GRANULARITY = Duration.ofMillis(50);

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
	void aConditionAwaitsAndIsSignalledFromAnotherApplicationsRegistry() throws Exception {
		Lock lock = this.first.locks().obtain("condition");
		Future<Integer> heldOnReturn = this.otherThread.submit(() -> {
			lock.lock();
			try {
				lock.newCondition().await();
				return new CuratorLockAdmin(this.first.registry()).heldLockCount();
			}
			finally {
				lock.unlock();
			}
		});
		awaitConditionWaiters("condition", 1);
		Lock theirs = this.second.locks().obtain("condition");
		// Released while it waits: the other application takes the lock, and signals.
		assertThat(theirs.tryLock(10, TimeUnit.SECONDS)).isTrue();
		try {
			theirs.newCondition().signal();
			assertThat(conditionWaiters("condition")).as("woken").isEmpty();
			Thread.sleep(200);
			assertThat(heldOnReturn).as("woken, and waiting to take the lock again").isNotDone();
		}
		finally {
			theirs.unlock();
		}
		assertThat(heldOnReturn.get(10, TimeUnit.SECONDS)).as("held again on return").isOne();
		assertThat(lockZnodes("condition")).isEmpty();
	}

	@Test
	void theConditionOfAKeyIsTheConditionOfTheLockTemplatesLockOfTheKeyInEveryApplication() throws Exception {
		String key = this.first.locks().keyFor("shared-condition");
		assertThat(key).isEqualTo("/spring-integration/shared-condition");
		// A registry lock's waiter, signalled through a LockTemplate lock of another application.
		Future<Void> registryWaiter = awaitingInThread(this.first.locks().obtain("shared-condition"));
		awaitConditionWaiters("shared-condition", 1);
		signal(this.second.template().lock(key), false);
		registryWaiter.get(10, TimeUnit.SECONDS);
		// A LockTemplate lock's waiter, signalled through a registry lock of another application.
		Future<Void> templateWaiter = awaitingInThread(this.second.template().lock(key));
		awaitConditionWaiters("shared-condition", 1);
		signal(this.first.locks().obtain("shared-condition"), false);
		templateWaiter.get(10, TimeUnit.SECONDS);
		// Another key's condition is another one: its signal wakes nobody here.
		Future<Void> waiter = awaitingInThread(this.first.locks().obtain("shared-condition"));
		awaitConditionWaiters("shared-condition", 1);
		signal(this.second.locks().obtain("other-condition"), false);
		assertThat(conditionWaiters("shared-condition")).hasSize(1);
		assertThat(waiter).isNotDone();
		signal(this.second.locks().obtain("shared-condition"), false);
		waiter.get(10, TimeUnit.SECONDS);
		assertThat(lockZnodes("shared-condition")).isEmpty();
	}

	@Test
	void signalAllWakesTheWaitersOfEveryApplicationAndView() throws Exception {
		String key = this.first.locks().keyFor("all-conditions");
		ExecutorService waiters = Executors.newFixedThreadPool(3);
		try {
			List<Future<Void>> waiting = new ArrayList<>();
			for (Lock lock : List.of(this.first.locks().obtain("all-conditions"),
					this.second.locks().obtain("all-conditions"), this.second.template().lock(key))) {
				waiting.add(waiters.submit(() -> awaitOnce(lock)));
				awaitConditionWaiters("all-conditions", waiting.size());
			}
			signal(this.first.template().lock(key), true);
			for (Future<Void> each : waiting) {
				each.get(10, TimeUnit.SECONDS);
			}
		}
		finally {
			waiters.shutdownNow();
		}
		assertThat(lockZnodes("all-conditions")).isEmpty();
	}

	@Test
	void anAwaitReleasesEveryReentrantHoldAndTakesThemAllAgain() throws Exception {
		Lock lock = this.first.locks().obtain("reentrant-condition");
		Lock theirs = this.second.locks().obtain("reentrant-condition");
		CountDownLatch returned = new CountDownLatch(1);
		CountDownLatch unlockOnce = new CountDownLatch(1);
		CountDownLatch unlockedOnce = new CountDownLatch(1);
		CountDownLatch unlockAgain = new CountDownLatch(1);
		Future<Void> waiter = this.otherThread.submit(() -> {
			lock.lock();
			lock.lock();
			lock.newCondition().await();
			returned.countDown();
			unlockOnce.await(10, TimeUnit.SECONDS);
			lock.unlock();
			unlockedOnce.countDown();
			unlockAgain.await(10, TimeUnit.SECONDS);
			lock.unlock();
			return null;
		});
		awaitConditionWaiters("reentrant-condition", 1);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount())
				.as("both holds released while it waits")
				.isZero());
		assertThat(theirs.tryLock(10, TimeUnit.SECONDS)).isTrue();
		theirs.newCondition().signal();
		theirs.unlock();
		assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).as("both taken again").isEqualTo(2);
		assertThat(lockZnodes("reentrant-condition")).as("on one znode").hasSize(1);
		unlockOnce.countDown();
		assertThat(unlockedOnce.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isOne();
		assertThat(theirs.tryLock()).as("still held by the outer hold").isFalse();
		unlockAgain.countDown();
		waiter.get(10, TimeUnit.SECONDS);
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
		assertThat(theirs.tryLock(10, TimeUnit.SECONDS)).isTrue();
		theirs.unlock();
		assertThat(lockZnodes("reentrant-condition")).isEmpty();
	}

	@Test
	void awaitAndSignalWithoutTheLockThrowIllegalMonitorStateAndQueueNoWaiter() throws Exception {
		Lock lock = this.first.locks().obtain("unheld-condition");
		Condition condition = lock.newCondition();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(condition::await)
			.withMessageContaining("does not hold");
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(condition::awaitUninterruptibly);
		assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(() -> condition.await(1, TimeUnit.SECONDS));
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(() -> condition.awaitNanos(1));
		assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(() -> condition.awaitUntil(new Date(System.currentTimeMillis() + 1000)));
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(condition::signal);
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(condition::signalAll);
		// Held by another thread of the application: not by the caller.
		lock.lock();
		try {
			Future<?> otherThreadsAwait = this.otherThread.submit(() -> condition.await(1, TimeUnit.SECONDS));
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> otherThreadsAwait.get(10, TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOf(IllegalMonitorStateException.class);
			Future<?> otherThreadsSignal = this.otherThread.submit(condition::signal);
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> otherThreadsSignal.get(10, TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOf(IllegalMonitorStateException.class);
		}
		finally {
			lock.unlock();
		}
		// Held by another application: not by the caller either.
		Lock theirs = this.second.locks().obtain("unheld-condition");
		theirs.lock();
		try {
			assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(condition::signal);
			assertThatExceptionOfType(IllegalMonitorStateException.class)
				.isThrownBy(() -> condition.await(1, TimeUnit.SECONDS));
		}
		finally {
			theirs.unlock();
		}
		assertThat(conditionWaiters("unheld-condition")).isEmpty();
	}

	@Test
	void aTimedAwaitNobodySignalsReturnsFalseWithTheLockHeldAgain() throws Exception {
		Lock lock = this.first.locks().obtain("timed-condition");
		Lock theirs = this.second.locks().obtain("timed-condition");
		Condition condition = lock.newCondition();
		lock.lock();
		try {
			long started = System.nanoTime();
			assertThat(condition.await(200, TimeUnit.MILLISECONDS)).isFalse();
			assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
			assertThat(condition.awaitNanos(TimeUnit.MILLISECONDS.toNanos(100))).isLessThanOrEqualTo(0);
			assertThat(condition.awaitUntil(new Date(System.currentTimeMillis() + 100))).isFalse();
			assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isOne();
			assertThat(theirs.tryLock()).as("held again").isFalse();
			assertThat(conditionWaiters("timed-condition")).as("left the queue").isEmpty();
		}
		finally {
			lock.unlock();
		}
		assertThat(lockZnodes("timed-condition")).isEmpty();
		assertThat(theirs.tryLock(10, TimeUnit.SECONDS)).isTrue();
		theirs.unlock();
	}

	/**
	 * A lock with a time to live, renewed by the registry's scheduler: the wait releases the grant
	 * (and stops its renewal), the grant taken again has the same time to live and is renewed as
	 * the first was, so the lock stays held past it until unlocked, quietly.
	 */
	@Test
	void aLockWithATtlIsTakenAgainWithItsTtlAndRenewedAfterAnAwait() throws Exception {
		Duration ttl = Duration.ofSeconds(1);
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		scheduler.initialize();
		try {
			this.first.locks().setRenewalTaskScheduler(scheduler);
			DistributedLock lock = this.first.locks().obtain("ttl-condition");
			Lock theirs = this.second.locks().obtain("ttl-condition");
			lock.lock(ttl);
			Instant beforeWait = Instant.now();
			// Longer than the ttl: the grant is released meanwhile, so nothing ends it.
			assertThat(lock.newCondition().await(ttl.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)).isFalse();
			assertThat(heldBy(this.first)).singleElement().satisfies((handle) -> {
				assertThat(handle.isHeld()).isTrue();
				assertThat(handle.deadline()).as("taken again with its ttl")
					.hasValueSatisfying((deadline) -> assertThat(deadline)
						.isAfter(beforeWait.plus(ttl.multipliedBy(3)).minus(CLOCK_GRANULARITY))
						.isBefore(Instant.now().plus(ttl).plus(CLOCK_GRANULARITY)));
			});
			// Twice the ttl, never renewed by the holder itself: the scheduler renews the grant.
			await().pollDelay(ttl.multipliedBy(2)).atMost(Duration.ofSeconds(10)).until(() -> true);
			assertThat(heldBy(this.first)).singleElement().satisfies((handle) -> assertThat(handle.isHeld()).isTrue());
			assertThat(theirs.tryLock()).isFalse();
			assertThatNoException().isThrownBy(lock::unlock);
			assertThat(theirs.tryLock(10, TimeUnit.SECONDS)).isTrue();
			theirs.unlock();
		}
		finally {
			scheduler.shutdown();
		}
	}

	/**
	 * Without renewal, the grant an await takes again ends at its time to live, as a
	 * {@code lock(ttl)} grant does: the other application then gets the lock, and the holder's
	 * {@code unlock()} says so.
	 */
	@Test
	void withoutRenewalAGrantTakenAgainAfterAnAwaitEndsAtItsTtl() throws Exception {
		Duration ttl = Duration.ofSeconds(1);
		DistributedLock lock = this.first.locks().obtain("ttl-ends-condition");
		Lock theirs = this.second.locks().obtain("ttl-ends-condition");
		lock.lock(ttl);
		Future<Void> signaller = this.otherThread.submit(() -> {
			awaitConditionWaiters("ttl-ends-condition", 1);
			signal(theirs, false);
			return null;
		});
		assertThat(lock.newCondition().await(10, TimeUnit.SECONDS)).as("signalled").isTrue();
		long takenAgainAt = System.nanoTime();
		signaller.get(10, TimeUnit.SECONDS);
		assertThat(heldBy(this.first)).singleElement()
			.satisfies((handle) -> assertThat(handle.deadline()).as("taken again with its ttl").isPresent());
		assertThat(theirs.tryLock(ttl.plusSeconds(2).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - takenAgainAt)).isGreaterThanOrEqualTo(ttl.minus(CLOCK_GRANULARITY));
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock)
			.withMessageContaining("Lock was released in the store due to expiration");
		theirs.unlock();
		assertThat(lockZnodes("ttl-ends-condition")).isEmpty();
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

	/** The lock znodes below a key's lock path (the container of its condition's waiters is none). */
	private List<String> lockZnodes(String lockKey) throws Exception {
		try {
			return this.observer.getChildren()
				.forPath(Application.lockPath(lockKey))
				.stream()
				.filter((child) -> !child.equals("condition"))
				.toList();
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

	/** Lock, await once (signalled), unlock, in the other thread. */
	private Future<Void> awaitingInThread(Lock lock) {
		return this.otherThread.submit(() -> awaitOnce(lock));
	}

	private static Void awaitOnce(Lock lock) throws InterruptedException {
		lock.lock();
		try {
			assertThat(lock.newCondition().await(10, TimeUnit.SECONDS)).as("signalled").isTrue();
		}
		finally {
			lock.unlock();
		}
		return null;
	}

	/** Lock, signal (or signal all), unlock: a signaller of an application. */
	private static void signal(Lock lock, boolean all) throws InterruptedException {
		assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
		try {
			if (all) {
				lock.newCondition().signalAll();
			}
			else {
				lock.newCondition().signal();
			}
		}
		finally {
			lock.unlock();
		}
	}

	/** The waiters' znodes of a key's condition: in the container {@code condition} below its lock path. */
	private List<String> conditionWaiters(String lockKey) throws Exception {
		try {
			return this.observer.getChildren().forPath(Application.lockPath(lockKey) + "/condition");
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

	private void awaitConditionWaiters(String lockKey, int count) {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(conditionWaiters(lockKey)).hasSize(count));
	}

	private static List<LockHandle> heldBy(Application application) {
		return new CuratorLockAdmin(application.registry()).heldLocks();
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
