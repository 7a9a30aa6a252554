package io.github.zklock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for the {@code java.util.concurrent} views of {@link LockTemplate} ({@link LockTemplate#lock(String)},
 * {@link LockTemplate#readWriteLock(String)}) on a real ZooKeeper server: exclusion of another
 * application, reentrancy, {@code unlock()} by a thread that holds nothing or by another thread,
 * equal views sharing a thread's grants, {@code tryLock} with and without a wait, interrupts
 * ({@code lockInterruptibly} and {@code tryLock(time, unit)} give up, {@code lock()} does not), a
 * condition on the EXCLUSIVE and WRITE locks only (its contract: {@link LockConditionTests}), the READ and WRITE sides, and a stopped server (an exception, never {@code false}).
 * "Two applications" are two clients of one server, each with its own registry and template.
 */
class LockViewTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration LONG = Duration.ofSeconds(10);

	private CuratorFramework observer;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate other;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.observer = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.template = new LockTemplate(this.registry, LONG);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.other = new LockTemplate(this.otherRegistry, LONG);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		// An assertion that failed after interrupting the test thread must not leak into the next test.
		Thread.interrupted();
		// The extension closes the clients after this.
		this.registry.close();
		this.otherRegistry.close();
	}

	@Test
	void lockExcludesAnotherApplicationUntilUnlocked() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);

		lock.lock();
		assertThat(admin(this.registry).heldLocks()).singleElement()
			.satisfies((handle) -> assertThat(handle.path()).isEqualTo(ROOT + this.key))
			.satisfies((handle) -> assertThat(handle.mode()).isEqualTo(LockMode.EXCLUSIVE));
		assertThat(theirs.tryLock()).isFalse();

		lock.unlock();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		assertThat(theirs.tryLock()).isTrue();
		assertThat(lock.tryLock()).isFalse();
		theirs.unlock();
	}

	@Test
	void lockIsReentrantAndFreeOnlyAfterAsManyUnlocks() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);

		lock.lock();
		lock.lock();
		assertThat(lock.tryLock()).isTrue();
		assertThat(admin(this.registry).heldLockCount()).isEqualTo(3);
		// Nested grants re-enter one znode.
		assertThat(lockZnodes()).hasSize(1);

		lock.unlock();
		lock.unlock();
		assertThat(admin(this.registry).heldLockCount()).isOne();
		assertThat(theirs.tryLock()).isFalse();
		lock.unlock();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(theirs.tryLock()).isTrue();
		theirs.unlock();
	}

	@Test
	void unlockWithoutHoldingIsAnIllegalMonitorState() {
		Lock lock = this.template.lock(this.key);
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
			.withMessageContaining("does not hold")
			.withMessageContaining(this.key);

		lock.lock();
		lock.unlock();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		// Holding the key in another mode is not holding this lock.
		Lock write = this.template.readWriteLock(this.key).writeLock();
		write.lock();
		assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(() -> this.template.readWriteLock(this.key).readLock().unlock());
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		write.unlock();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void unlockFromAnotherThreadIsAnIllegalMonitorStateAndReleasesNothing() throws Exception {
		Lock lock = this.template.lock(this.key);
		lock.lock();

		CompletableFuture<Void> elsewhere = inNewThread(() -> {
			lock.unlock();
			return null;
		});
		assertThatThrownBy(() -> elsewhere.get(10, TimeUnit.SECONDS)).cause()
			.isInstanceOf(IllegalMonitorStateException.class);
		assertThat(admin(this.registry).heldLockCount()).isOne();
		assertThat(this.other.lock(this.key).tryLock()).isFalse();

		lock.unlock();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void viewsOfTheSameKeyAreInterchangeable() throws Exception {
		Lock one = this.template.lock(this.key);
		Lock two = this.template.lock(this.key);
		assertThat(one).isNotSameAs(two).isEqualTo(two).hasSameHashCodeAs(two);
		assertThat(one).isNotEqualTo(this.template.lock(this.key + "/other"))
			.isNotEqualTo(this.template.readWriteLock(this.key).writeLock())
			.isNotEqualTo(this.other.lock(this.key));
		assertThat(this.template.readWriteLock(this.key).readLock())
			.isEqualTo(this.template.readWriteLock(this.key).readLock());

		one.lock();
		two.lock();
		one.unlock();
		assertThat(admin(this.registry).heldLockCount()).isOne();
		two.unlock();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(one::unlock);
	}

	@Test
	void tryLockMakesOneAttemptAndLeavesNoZnodeWhenBusy() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);

		assertThat(lock.tryLock()).isTrue();
		List<String> held = lockZnodes();
		assertThat(held).hasSize(1);
		long started = System.nanoTime();
		assertThat(theirs.tryLock()).isFalse();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(lockZnodes()).isEqualTo(held);
		assertThat(admin(this.otherRegistry).heldLockCount()).isZero();
		// A failed attempt grants nothing to unlock.
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(theirs::unlock);
		lock.unlock();
	}

	@Test
	void timedTryLockIsGrantedWhenTheHolderUnlocksInTime() throws Exception {
		CountDownLatch held = new CountDownLatch(1);
		CompletableFuture<Void> holder = inNewThread(() -> {
			Lock theirs = this.other.lock(this.key);
			theirs.lock();
			held.countDown();
			try {
				// Until the waiter has queued behind this grant.
				await().atMost(LONG).until(() -> lockZnodes().size() > 1);
			}
			finally {
				theirs.unlock();
			}
			return null;
		});
		assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();

		Lock lock = this.template.lock(this.key);
		assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
		holder.get(10, TimeUnit.SECONDS);
		assertThat(admin(this.registry).heldLockCount()).isOne();
		lock.unlock();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void timedTryLockIsFalseAfterTheTimeAndLeavesNoZnode() throws Exception {
		Lock theirs = this.other.lock(this.key);
		theirs.lock();
		List<String> held = lockZnodes();

		Lock lock = this.template.lock(this.key);
		long started = System.nanoTime();
		assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(190))
			.isLessThan(LONG);
		assertThat(lockZnodes()).isEqualTo(held);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		theirs.unlock();
	}

	@Test
	void interruptedThreadCannotLockInterruptiblyOrTryLockWithATime() throws Exception {
		Lock lock = this.template.lock(this.key);

		Thread.currentThread().interrupt();
		assertThatExceptionOfType(InterruptedException.class).isThrownBy(lock::lockInterruptibly);
		assertThat(Thread.interrupted()).as("interrupt flag").isFalse();

		Thread.currentThread().interrupt();
		assertThatExceptionOfType(InterruptedException.class).isThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS));
		assertThat(Thread.interrupted()).as("interrupt flag").isFalse();

		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		// Free for another application.
		assertThat(this.other.lock(this.key).tryLock()).isTrue();
		this.other.lock(this.key).unlock();
	}

	@Test
	void lockInterruptiblyInterruptedWhileWaitingGivesUpAndLeavesNoZnode() throws Exception {
		assertInterruptedWhileWaiting(Lock::lockInterruptibly);
	}

	@Test
	void timedTryLockInterruptedWhileWaitingGivesUpAndLeavesNoZnode() throws Exception {
		assertInterruptedWhileWaiting((lock) -> lock.tryLock(30, TimeUnit.SECONDS));
	}

	private void assertInterruptedWhileWaiting(InterruptibleLocking locking) throws Exception {
		Lock theirs = this.other.lock(this.key);
		theirs.lock();
		List<String> held = lockZnodes();
		Lock lock = this.template.lock(this.key);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicBoolean interruptedAfter = new AtomicBoolean();
		CountDownLatch done = new CountDownLatch(1);
		Thread waiter = new Thread(() -> {
			try {
				locking.lock(lock);
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
			interruptedAfter.set(Thread.currentThread().isInterrupted());
			done.countDown();
		});
		waiter.setDaemon(true);
		waiter.start();
		await().atMost(LONG).until(() -> lockZnodes().size() > 1);

		waiter.interrupt();
		assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(failure.get()).isInstanceOf(InterruptedException.class);
		assertThat(interruptedAfter).as("interrupt flag after InterruptedException").isFalse();
		await().atMost(LONG).until(() -> lockZnodes().equals(held));
		assertThat(admin(this.registry).heldLockCount()).isZero();
		theirs.unlock();
		// The key is free: nothing of the waiter is left in its way.
		assertThat(this.other.lock(this.key).tryLock()).isTrue();
		this.other.lock(this.key).unlock();
	}

	@Test
	void lockOnAnInterruptedThreadAcquiresAndKeepsTheInterrupt() throws Exception {
		Lock lock = this.template.lock(this.key);
		Thread.currentThread().interrupt();
		lock.lock();
		assertThat(Thread.interrupted()).as("interrupt flag").isTrue();
		assertThat(admin(this.registry).heldLockCount()).isOne();
		assertThat(this.other.lock(this.key).tryLock()).isFalse();
		lock.unlock();
		// The interrupted first attempt's create may have reached the server: Curator deletes
		// such a znode in the background.
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void lockInterruptedWhileWaitingKeepsWaitingAndRestoresTheInterrupt() throws Exception {
		Lock theirs = this.other.lock(this.key);
		theirs.lock();
		Lock lock = this.template.lock(this.key);
		AtomicReference<Thread> waiterThread = new AtomicReference<>();
		AtomicBoolean interruptedAfter = new AtomicBoolean();
		CompletableFuture<Integer> waiter = inNewThread(() -> {
			waiterThread.set(Thread.currentThread());
			lock.lock();
			interruptedAfter.set(Thread.interrupted());
			int count = admin(this.registry).heldLockCount();
			lock.unlock();
			return count;
		});
		await().atMost(LONG).until(() -> lockZnodes().size() > 1);

		waiterThread.get().interrupt();
		// Still waiting, queued again, well after the interrupt.
		await().during(Duration.ofMillis(500)).atMost(LONG).until(() -> !waiter.isDone());
		await().atMost(LONG).until(() -> lockZnodes().size() > 1);

		theirs.unlock();
		assertThat(waiter.get(10, TimeUnit.SECONDS)).as("grants held by the waiter").isOne();
		assertThat(interruptedAfter).as("interrupt flag after lock()").isTrue();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void theExclusiveAndWriteLocksHaveAConditionAndTheReadLockNone() {
		assertThat(this.template.lock(this.key).newCondition()).isNotNull();
		ReadWriteLock readWrite = this.template.readWriteLock(this.key);
		assertThat(readWrite.writeLock().newCondition()).isNotNull();
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> readWrite.readLock().newCondition())
			.withMessageContaining("shared");
	}

	@Test
	void readLocksOfTwoApplicationsHoldTogetherAndTheWriteLockExcludesThem() throws Exception {
		ReadWriteLock mine = this.template.readWriteLock(this.key);
		ReadWriteLock theirs = this.other.readWriteLock(this.key);
		assertThat(mine.readLock()).isSameAs(mine.readLock());

		mine.readLock().lock();
		assertThat(theirs.readLock().tryLock()).isTrue();
		assertThat(lockZnodes()).hasSize(2);
		theirs.readLock().unlock();
		assertThat(theirs.writeLock().tryLock()).isFalse();
		mine.readLock().unlock();

		mine.writeLock().lock();
		assertThat(admin(this.registry).heldLocks()).singleElement()
			.satisfies((handle) -> assertThat(handle.mode()).isEqualTo(LockMode.WRITE));
		assertThat(theirs.readLock().tryLock()).isFalse();
		assertThat(theirs.writeLock().tryLock()).isFalse();
		mine.writeLock().unlock();
		assertThat(theirs.writeLock().tryLock()).isTrue();
		theirs.writeLock().unlock();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void writeLockHolderMayTakeTheReadLock() throws Exception {
		ReadWriteLock mine = this.template.readWriteLock(this.key);
		mine.writeLock().lock();
		assertThat(mine.readLock().tryLock()).isTrue();
		mine.readLock().lock();
		assertThat(admin(this.registry).heldLockCount()).isEqualTo(3);

		mine.readLock().unlock();
		mine.readLock().unlock();
		assertThat(this.other.readWriteLock(this.key).readLock().tryLock()).isFalse();
		mine.writeLock().unlock();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void readLockHolderAskingForTheWriteLockGetsALockUpgradeException() throws Exception {
		ReadWriteLock mine = this.template.readWriteLock(this.key);
		Lock write = mine.writeLock();
		// In a thread of its own, so that a wait for itself (the failure it must not have) is bounded.
		CompletableFuture<Void> reader = inNewThread(() -> {
			mine.readLock().lock();
			try {
				assertThatExceptionOfType(LockUpgradeException.class).isThrownBy(write::lock)
					.withMessageContaining(ROOT + this.key);
				assertThatExceptionOfType(LockUpgradeException.class).isThrownBy(write::tryLock);
				assertThatExceptionOfType(LockUpgradeException.class)
					.isThrownBy(() -> write.tryLock(5, TimeUnit.SECONDS));
				assertThatExceptionOfType(LockUpgradeException.class).isThrownBy(write::lockInterruptibly);
				assertThat(admin(this.registry).heldLocks()).singleElement()
					.satisfies((handle) -> assertThat(handle.mode()).isEqualTo(LockMode.READ));
				assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(write::unlock);
			}
			finally {
				mine.readLock().unlock();
			}
			return null;
		});
		reader.get(20, TimeUnit.SECONDS);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		// Without the read lock, the write lock is granted.
		assertThat(write.tryLock()).isTrue();
		write.unlock();
	}

	@Test
	void zooKeeperDownIsALockExceptionNeverFalse() throws Exception {
		CuratorFramework client = zooKeeper.newClient((builder) -> builder.connectionTimeoutMs(1000)
			.sessionTimeoutMs(4000)
			.retryPolicy(new RetryOneTime(100)));
		try (CuratorLockRegistry downRegistry = new CuratorLockRegistry(client, ROOT, 100)) {
			LockTemplate locks = new LockTemplate(downRegistry, LONG);
			Lock lock = locks.lock(this.key);
			Lock read = locks.readWriteLock(this.key).readLock();
			TestingServer server = zooKeeper.getServer();
			server.stop();
			try {
				assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
					for (Lock view : List.of(lock, read)) {
						assertThatExceptionOfType(LockException.class).as("%s", view)
							.isThrownBy(view::tryLock)
							.isNotInstanceOf(LockAcquisitionException.class)
							.withMessageContaining("ZooKeeper is unreachable");
					}
					assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> lock.tryLock(100, TimeUnit.MILLISECONDS))
						.isNotInstanceOf(LockAcquisitionException.class);
					assertThatExceptionOfType(LockException.class).isThrownBy(lock::lock)
						.isNotInstanceOf(LockAcquisitionException.class);
				});
				assertThat(admin(downRegistry).heldLockCount()).isZero();
				assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
			}
			finally {
				// The other tests of the class use the server.
				server.restart();
			}
			await().atMost(LONG).until(() -> client.getZookeeperClient().isConnected());
			assertThat(lock.tryLock()).isTrue();
			lock.unlock();
		}
	}

	/** The ephemeral znodes below the test's key, at any depth: every grant and waiter. */
	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + this.key);
	}

	/** Run a blocking task in a new daemon thread, as another caller would. */
	private static <T> CompletableFuture<T> inNewThread(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, (runnable) -> {
			Thread thread = new Thread(runnable);
			thread.setDaemon(true);
			thread.start();
		});
	}

	@FunctionalInterface
	private interface InterruptibleLocking {

		void lock(Lock lock) throws InterruptedException;

	}

}
