package io.github.zklock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockCondition;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The distributed {@link Condition} of the lock views ({@code LockTemplate.lock(key).newCondition()}
 * and the write lock's), {@link java.util.concurrent.locks.Condition}'s contract across two
 * applications on a real ZooKeeper server: the lock released while waiting and held again on
 * return, one condition per key whichever view or application made it, no signal lost between a
 * waiter's registration and its release, the longest waiter woken first, {@code signalAll},
 * {@link IllegalMonitorStateException} without the lock, timeouts and interrupts as the JDK's
 * conditions, every reentrant hold released and taken again, a waiter whose session expires failing
 * with {@link LockLostException}, and the waiters' znodes no participants of the lock (raw Curator
 * on the same path is granted past them). "Two applications" are two clients of one server, each
 * with its own registry and template. Every wait is bounded.
 */
class LockConditionTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration LONG = Duration.ofSeconds(10);

	private static final long BOUND_SECONDS = 10;

	private CuratorFramework observer;

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate other;

	private String key;

	private final List<Thread> threads = new ArrayList<>();

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.observer = zooKeeper.newClient();
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
		this.template = new LockTemplate(this.registry, LONG);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.other = new LockTemplate(this.otherRegistry, LONG);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() throws InterruptedException {
		Thread.interrupted();
		for (Thread thread : this.threads) {
			thread.interrupt();
			thread.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
		}
		this.registry.close();
		this.otherRegistry.close();
	}

	@Test
	void awaitLetsAnotherApplicationInAndReturnsWithTheLockHeld() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);
		CompletableFuture<Boolean> heldOnReturn = inThread(() -> {
			lock.lock();
			try {
				lock.newCondition().await();
				return admin(this.registry).heldLockCount() == 1;
			}
			finally {
				lock.unlock();
			}
		});
		awaitWaiters(1);
		// Released while waiting: the other application takes the lock.
		assertThat(theirs.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		theirs.newCondition().signal();
		assertThat(heldOnReturn).isNotDone();
		theirs.unlock();
		assertThat(heldOnReturn.get(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		assertThat(waiterZnodesOrNone()).isEmpty();
		assertThat(lockZnodes()).isEmpty();
	}

	@Test
	void theWaiterHoldsTheLockAgainBeforeAwaitReturns() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);
		CountDownLatch returned = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<Void> waiter = inThread(() -> {
			lock.lock();
			try {
				lock.newCondition().await();
				returned.countDown();
				release.await(BOUND_SECONDS, TimeUnit.SECONDS);
			}
			finally {
				lock.unlock();
			}
			return null;
		});
		awaitWaiters(1);
		theirs.lock();
		theirs.newCondition().signal();
		theirs.unlock();
		assertThat(returned.await(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		assertThat(theirs.tryLock()).isFalse();
		release.countDown();
		waiter.get(BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(theirs.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		theirs.unlock();
	}

	@Test
	void everyConditionOfAKeyIsOneConditionWhicheverViewOrApplicationMadeIt() throws Exception {
		CompletableFuture<Void> first = awaitingInThread(this.template.lock(this.key));
		awaitWaiters(1);
		CompletableFuture<Void> second = awaitingInThread(this.other.lock(this.key));
		awaitWaiters(2);
		// Two new views and two new conditions, one per application: each signal wakes one waiter.
		signal(this.template.lock(this.key), false);
		signal(this.other.lock(this.key), false);
		CompletableFuture.allOf(first, second).get(BOUND_SECONDS, TimeUnit.SECONDS);
		// Another key has a condition of its own: its signal wakes nobody here.
		CompletableFuture<Void> third = awaitingInThread(this.template.lock(this.key));
		awaitWaiters(1);
		signal(this.other.lock(this.key + "-other"), false);
		assertThat(waiterZnodesOrNone()).hasSize(1);
		assertThat(third).isNotDone();
		signal(this.other.lock(this.key), false);
		third.get(BOUND_SECONDS, TimeUnit.SECONDS);
	}

	@Test
	void awaitAndSignalWithoutTheLockThrowIllegalMonitorStateAndSendNothing() throws Exception {
		Lock lock = this.template.lock(this.key);
		Condition condition = lock.newCondition();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(condition::await);
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
			CompletableFuture<Void> otherThread = inThread(() -> {
				condition.signal();
				return null;
			});
			assertThat(otherThread).failsWithin(BOUND_SECONDS, TimeUnit.SECONDS)
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(IllegalMonitorStateException.class);
		}
		finally {
			lock.unlock();
		}
		assertThat(waiterZnodesOrNone()).isEmpty();
	}

	@Test
	void awaitUnderACallbackOfTheSameKeyThrowsIllegalMonitorState() throws Exception {
		Lock lock = this.template.lock(this.key);
		this.template.execute(this.key, (handle) -> {
			lock.lock();
			try {
				assertThatExceptionOfType(IllegalMonitorStateException.class)
					.isThrownBy(() -> lock.newCondition().await(1, TimeUnit.SECONDS))
					.withMessageContaining("callback");
			}
			finally {
				lock.unlock();
			}
			return null;
		});
		assertThat(waiterZnodesOrNone()).isEmpty();
	}

	@Test
	void signalWakesTheLongestWaiterOfAnyApplication() throws Exception {
		List<CompletableFuture<Void>> waiters = new ArrayList<>();
		LockTemplate[] applications = { this.template, this.other, this.template };
		for (LockTemplate application : applications) {
			waiters.add(awaitingInThread(application.lock(this.key)));
			awaitWaiters(waiters.size());
		}
		for (int woken = 0; woken < waiters.size(); woken++) {
			signal(this.other.lock(this.key), false);
			waiters.get(woken).get(BOUND_SECONDS, TimeUnit.SECONDS);
			for (int later = woken + 1; later < waiters.size(); later++) {
				assertThat(waiters.get(later)).isNotDone();
			}
		}
		assertThat(waiterZnodesOrNone()).isEmpty();
	}

	@Test
	void signalAllWakesEveryWaiterThereIsAndSignalWithoutWaitersDoesNothing() throws Exception {
		List<CompletableFuture<Void>> waiters = new ArrayList<>();
		for (LockTemplate application : new LockTemplate[] { this.template, this.other, this.other }) {
			waiters.add(awaitingInThread(application.lock(this.key)));
			awaitWaiters(waiters.size());
		}
		signal(this.template.lock(this.key), true);
		CompletableFuture.allOf(waiters.toArray(new CompletableFuture[0])).get(BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(waiterZnodesOrNone()).isEmpty();
		signal(this.template.lock(this.key), false);
		signal(this.template.lock(this.key), true);
		assertThat(waiterZnodesOrNone()).isEmpty();
	}

	/**
	 * The signaller waits for the lock while the waiter holds it, and signals the moment it is
	 * granted: the waiter's znode must be there already, or the waiter would wait for ever.
	 */
	@Test
	void aSignalSentTheMomentTheWaiterReleasesIsNotLost() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);
		for (int round = 0; round < 20; round++) {
			CountDownLatch holding = new CountDownLatch(1);
			CompletableFuture<Void> waiter = inThread(() -> {
				lock.lock();
				try {
					holding.countDown();
					lock.newCondition().await();
				}
				finally {
					lock.unlock();
				}
				return null;
			});
			assertThat(holding.await(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
			theirs.lock();
			try {
				theirs.newCondition().signal();
			}
			finally {
				theirs.unlock();
			}
			waiter.get(BOUND_SECONDS, TimeUnit.SECONDS);
		}
		assertThat(waiterZnodesOrNone()).isEmpty();
	}

	@Test
	void timedWaitsRunOutWithTheLockHeldAgainAndLeaveNoWaiter() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);
		Condition condition = lock.newCondition();
		lock.lock();
		try {
			long started = System.nanoTime();
			assertThat(condition.await(200, TimeUnit.MILLISECONDS)).isFalse();
			assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
			assertThat(condition.awaitNanos(TimeUnit.MILLISECONDS.toNanos(100))).isLessThanOrEqualTo(0);
			assertThat(condition.awaitUntil(new Date(System.currentTimeMillis() + 100))).isFalse();
			assertThat(condition.awaitUntil(new Date(System.currentTimeMillis() - 1000))).isFalse();
			assertThat(condition.await(0, TimeUnit.SECONDS)).isFalse();
			assertThat(condition.awaitNanos(-1)).isEqualTo(-1);
			assertThat(admin(this.registry).heldLockCount()).isOne();
			assertThat(theirs.tryLock()).isFalse();
			assertThat(waiterZnodesOrNone()).isEmpty();
		}
		finally {
			lock.unlock();
		}
		assertThat(theirs.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		theirs.unlock();
	}

	@Test
	void timedWaitSignalledInTimeReturnsTrueWithTimeLeft() throws Exception {
		Lock lock = this.template.lock(this.key);
		CompletableFuture<Long> left = inThread(() -> {
			lock.lock();
			try {
				return lock.newCondition().awaitNanos(TimeUnit.SECONDS.toNanos(BOUND_SECONDS));
			}
			finally {
				lock.unlock();
			}
		});
		awaitWaiters(1);
		signal(this.other.lock(this.key), false);
		assertThat(left.get(BOUND_SECONDS, TimeUnit.SECONDS)).isPositive();
		CompletableFuture<Boolean> signalled = inThread(() -> {
			lock.lock();
			try {
				return lock.newCondition().await(BOUND_SECONDS, TimeUnit.SECONDS);
			}
			finally {
				lock.unlock();
			}
		});
		awaitWaiters(1);
		signal(this.other.lock(this.key), false);
		assertThat(signalled.get(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void aSignalPassesOverAWaiterWhoseTimeRanOut() throws Exception {
		Lock lock = this.template.lock(this.key);
		CompletableFuture<Boolean> shortWait = inThread(() -> {
			lock.lock();
			try {
				// Long enough for the second waiter to queue behind it on a busy machine.
				return lock.newCondition().await(3, TimeUnit.SECONDS);
			}
			finally {
				lock.unlock();
			}
		});
		awaitWaiters(1);
		CompletableFuture<Void> longWait = awaitingInThread(this.other.lock(this.key));
		awaitWaiters(2);
		assertThat(shortWait.get(BOUND_SECONDS, TimeUnit.SECONDS)).isFalse();
		awaitWaiters(1);
		signal(this.template.lock(this.key), false);
		longWait.get(BOUND_SECONDS, TimeUnit.SECONDS);
	}

	@Test
	void anInterruptBeforeTheSignalThrowsWithTheLockHeldAgain() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);
		AtomicBoolean heldWhenThrown = new AtomicBoolean();
		CompletableFuture<Thread> started = new CompletableFuture<>();
		CompletableFuture<Void> waiter = inThread(() -> {
			lock.lock();
			try {
				started.complete(Thread.currentThread());
				lock.newCondition().await();
			}
			catch (InterruptedException ex) {
				heldWhenThrown.set(admin(this.registry).heldLockCount() == 1 && !theirsFree(theirs));
				throw ex;
			}
			finally {
				lock.unlock();
			}
			return null;
		});
		Thread thread = started.get(BOUND_SECONDS, TimeUnit.SECONDS);
		awaitWaiters(1);
		thread.interrupt();
		assertThat(waiter).failsWithin(BOUND_SECONDS, TimeUnit.SECONDS)
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(InterruptedException.class);
		assertThat(heldWhenThrown).isTrue();
		assertThat(waiterZnodesOrNone()).isEmpty();
		// Interrupted before the wait: thrown at once, the lock kept, nothing sent.
		lock.lock();
		try {
			Thread.currentThread().interrupt();
			assertThatExceptionOfType(InterruptedException.class).isThrownBy(() -> lock.newCondition().await());
			assertThat(Thread.currentThread().isInterrupted()).isFalse();
			assertThat(theirs.tryLock()).isFalse();
			assertThat(waiterZnodesOrNone()).isEmpty();
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void awaitUninterruptiblyWaitsThroughAnInterruptAndKeepsTheFlag() throws Exception {
		Lock lock = this.template.lock(this.key);
		CompletableFuture<Thread> started = new CompletableFuture<>();
		CompletableFuture<Boolean> flagOnReturn = inThread(() -> {
			lock.lock();
			try {
				started.complete(Thread.currentThread());
				lock.newCondition().awaitUninterruptibly();
				return Thread.currentThread().isInterrupted();
			}
			finally {
				lock.unlock();
			}
		});
		Thread thread = started.get(BOUND_SECONDS, TimeUnit.SECONDS);
		awaitWaiters(1);
		thread.interrupt();
		Thread.sleep(200);
		assertThat(flagOnReturn).isNotDone();
		assertThat(waiterZnodesOrNone()).hasSize(1);
		signal(this.other.lock(this.key), false);
		assertThat(flagOnReturn.get(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void awaitReleasesEveryReentrantHoldAndTakesThemAllAgain() throws Exception {
		Lock lock = this.template.lock(this.key);
		Lock theirs = this.other.lock(this.key);
		CountDownLatch returned = new CountDownLatch(1);
		CountDownLatch unlockOnce = new CountDownLatch(1);
		CompletableFuture<Void> waiter = inThread(() -> {
			lock.lock();
			lock.lock();
			lock.newCondition().await();
			returned.countDown();
			unlockOnce.await(BOUND_SECONDS, TimeUnit.SECONDS);
			lock.unlock();
			returned.countDown();
			Thread.sleep(200);
			lock.unlock();
			return null;
		});
		awaitWaiters(1);
		assertThat(theirs.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		theirs.newCondition().signal();
		theirs.unlock();
		assertThat(returned.await(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		assertThat(admin(this.registry).heldLockCount()).isEqualTo(2);
		unlockOnce.countDown();
		waiter.get(BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(theirs.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		theirs.unlock();
	}

	@Test
	void aWaiterWhoseSessionExpiresFailsWithLockLostAndItsUnlockDoesNothing() throws Exception {
		Lock lock = this.template.lock(this.key);
		CompletableFuture<String> afterLoss = inThread(() -> {
			lock.lock();
			try {
				lock.newCondition().await();
				return "returned";
			}
			catch (LockLostException ex) {
				return "lost, held=" + admin(this.registry).heldLockCount();
			}
			finally {
				lock.unlock();
			}
		});
		awaitWaiters(1);
		zooKeeper.expireSession(this.client);
		assertThat(afterLoss.get(BOUND_SECONDS, TimeUnit.SECONDS)).isEqualTo("lost, held=0");
		await().atMost(LONG).untilAsserted(() -> assertThat(waiterZnodesOrNone()).isEmpty());
		// The application goes on in its new session.
		assertThat(lock.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		lock.unlock();
	}

	/**
	 * The lock is lost while {@code await} queues its waiter: the session expires right after
	 * {@code await}'s check (the holder's, here the test's), and the registry is told, so that the
	 * waiter's create goes into the next session. The wait fails with {@link LockLostException}, its
	 * holds given up and no waiter left, rather than wait in the new session for a signal sent
	 * before it queued. (The holder is the test's, on a grant of the template: the view's own holds
	 * leave no point between the check and the create to expire the session at.)
	 */
	@Test
	void aLockLostAsAwaitQueuesItsWaiterFailsTheWait() throws Exception {
		AtomicInteger checks = new AtomicInteger();
		AtomicBoolean abandoned = new AtomicBoolean();
		CompletableFuture<Void> awaited = inThread(() -> {
			LockHandle handle = this.template.acquire(LockRequest.of(this.key));
			new LockCondition(this.registry.conditions(), this.key, LockMode.EXCLUSIVE,
					lostAfterTheFirstCheck(handle, checks, abandoned))
				.await();
			return null;
		});
		assertThat(awaited).failsWithin(BOUND_SECONDS, TimeUnit.SECONDS)
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(LockLostException.class);
		assertThat(checks).hasValue(2);
		assertThat(abandoned).isTrue();
		await().atMost(LONG).untilAsserted(() -> assertThat(waiterZnodesOrNone()).isEmpty());
	}

	/**
	 * The holds of one grant, whose session is expired at their first check (once the grant is
	 * told LOST); never taken again.
	 */
	private LockCondition.Holder lostAfterTheFirstCheck(LockHandle handle, AtomicInteger checks,
			AtomicBoolean abandoned) {
		return new LockCondition.Holder() {

			@Override
			public void checkHeld() {
				int check = checks.incrementAndGet();
				handle.checkHeld();
				if (check == 1) {
					try {
						zooKeeper.expireSession(LockConditionTests.this.client);
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
					await().atMost(LONG).until(() -> handle.state() == LockState.LOST);
				}
			}

			@Override
			public LockCondition.Released releaseAll() {
				handle.release();
				return new LockCondition.Released() {

					@Override
					public void reacquire() {
						throw new AssertionError("taken again after its lock was lost");
					}

					@Override
					public void abandon() {
						abandoned.set(true);
					}

				};
			}

		};
	}

	/**
	 * A signal may have gone to a lost waiter's znode while its session ended: the lost waiter
	 * passes one on, so the next waiter wakes (spuriously at worst) rather than wait for a signal
	 * that was spent on a dead waiter.
	 */
	@Test
	void aLostWaiterPassesASignalOnToTheNextWaiter() throws Exception {
		Lock lock = this.template.lock(this.key);
		CompletableFuture<Void> lost = inThread(() -> {
			lock.lock();
			try {
				lock.newCondition().await();
			}
			finally {
				lock.unlock();
			}
			return null;
		});
		awaitWaiters(1);
		CompletableFuture<Void> next = awaitingInThread(this.other.lock(this.key));
		awaitWaiters(2);
		zooKeeper.expireSession(this.client);
		assertThat(lost).failsWithin(BOUND_SECONDS, TimeUnit.SECONDS)
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(LockLostException.class);
		next.get(BOUND_SECONDS, TimeUnit.SECONDS);
		assertThat(waiterZnodesOrNone()).isEmpty();
	}

	@Test
	void theWriteLockHasAConditionSharedAcrossApplications() throws Exception {
		CompletableFuture<Void> waiter = awaitingInThread(this.template.readWriteLock(this.key).writeLock());
		awaitWaiters(1);
		signal(this.other.readWriteLock(this.key).writeLock(), false);
		waiter.get(BOUND_SECONDS, TimeUnit.SECONDS);
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> this.template.readWriteLock(this.key).readLock().newCondition());
	}

	@Test
	void waitersAreNoParticipantsOfTheLock() throws Exception {
		CompletableFuture<Void> waiter = awaitingInThread(this.template.lock(this.key));
		awaitWaiters(1);
		// The lock path's one child is the waiters' container: their comings and goings are below it.
		assertThat(this.observer.getChildren().forPath(ROOT + this.key)).containsExactly("condition");
		assertThat(admin(this.otherRegistry).describeParticipants(this.key)).isEmpty();
		// Raw Curator on the same path is granted past the waiter's znode, and excludes as before.
		InterProcessMutex raw = new InterProcessMutex(this.observer, ROOT + this.key);
		assertThat(raw.acquire(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
		try {
			assertThat(admin(this.otherRegistry).describeParticipants(this.key)).singleElement()
				.satisfies((participant) -> assertThat(participant.holder()).isTrue());
			assertThat(this.other.lock(this.key).tryLock()).isFalse();
		}
		finally {
			raw.release();
		}
		signal(this.other.lock(this.key), false);
		waiter.get(BOUND_SECONDS, TimeUnit.SECONDS);
	}

	/** Lock, signal (or signal all), unlock: a signaller of an application. */
	private static void signal(Lock lock, boolean all) throws InterruptedException {
		assertThat(lock.tryLock(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
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

	private static boolean theirsFree(Lock theirs) {
		boolean free = theirs.tryLock();
		if (free) {
			theirs.unlock();
		}
		return free;
	}

	/** Lock, await once, unlock, in a new thread. */
	private CompletableFuture<Void> awaitingInThread(Lock lock) {
		return inThread(() -> {
			lock.lock();
			try {
				lock.newCondition().await();
			}
			finally {
				lock.unlock();
			}
			return null;
		});
	}

	private void awaitWaiters(int count) {
		await().atMost(LONG).untilAsserted(() -> assertThat(waiterZnodesOrNone()).hasSize(count));
	}

	/** The waiters' znodes: in the container {@code condition} below the lock path (none without it). */
	private List<String> waiterZnodesOrNone() throws Exception {
		try {
			return this.observer.getChildren().forPath(ROOT + this.key + "/condition");
		}
		catch (KeeperException.NoNodeException ex) {
			return List.of();
		}
	}

	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + this.key);
	}

	/** Run a blocking task in a new daemon thread, interrupted and joined after the test. */
	private <T> CompletableFuture<T> inThread(Callable<T> task) {
		CompletableFuture<T> result = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				result.complete(task.call());
			}
			catch (Throwable ex) {
				result.completeExceptionally(ex);
			}
		});
		thread.setDaemon(true);
		this.threads.add(thread);
		thread.start();
		return result;
	}

}
