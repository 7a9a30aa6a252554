package io.github.zklock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.WaitingLock;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for the asynchronous verbs ({@link LockTemplate#executeAsync}, {@link LockTemplate#async()}'s
 * {@code execute}, {@code acquire} and {@code tryAcquire}) on a real ZooKeeper server: the calling thread is
 * not blocked, the lock is held until the action's stage completes and the returned future
 * completes after the release, values and failures propagate, a busy (failed, skipped or empty) or
 * invalid request, cancelling before and after the grant, the observations of an asynchronous
 * grant and the async executor.
 * A second client with its own registry and template stands for another application.
 */
class AsyncLockTemplateTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate otherApplication;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.counts)));
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
		this.template = new LockTemplate(this.registry, WAIT);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.otherApplication = new LockTemplate(this.otherRegistry, Duration.ZERO);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.registry.close();
		this.otherRegistry.close();
	}

	@Test
	void callerIsNotBlockedWhileAnotherApplicationHoldsTheKey() throws Exception {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		AtomicReference<String> actionThread = new AtomicReference<>();
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			actionThread.set(Thread.currentThread().getName());
			return CompletableFuture.completedFuture("done");
		});

		// Returned while the other application still holds the key; the request waits without a thread.
		assertThat(result).isNotDone();
		List<WaitingLock> waiting = await().atMost(WAIT)
			.until(() -> admin(this.registry).describeWaitingLocks(), (waiters) -> !waiters.isEmpty());
		assertThat(waiting).extracting(WaitingLock::waiter).containsExactly("async");
		assertThat(result).isNotDone();

		held.release();
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		// Without an async executor, the work is invoked on a grant thread, never on ZooKeeper's.
		assertThat(actionThread.get()).startsWith("zk-lock-grant-");
	}

	@Test
	void lockIsHeldUntilTheStageCompletes() throws Exception {
		CompletableFuture<String> work = new CompletableFuture<>();
		CountDownLatch granted = new CountDownLatch(1);
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			granted.countDown();
			return work;
		});
		assertThat(granted.await(10, TimeUnit.SECONDS)).isTrue();

		assertThat(this.otherApplication.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		assertThat(result).isNotDone();

		work.complete("value");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("value");
		Optional<LockHandle> next = this.otherApplication.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(next).isPresent();
		next.get().release();
	}

	@Test
	void returnedFutureCompletesAfterTheRelease() throws Exception {
		CompletableFuture<String> work = new CompletableFuture<>();
		CountDownLatch granted = new CountDownLatch(1);
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			granted.countDown();
			return work;
		});
		assertThat(granted.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(admin(this.registry).heldLockCount()).isOne();
		assertThat(lockZnodes()).hasSize(1);
		AtomicInteger heldAtCompletion = new AtomicInteger(-1);
		AtomicReference<List<String>> znodesAtCompletion = new AtomicReference<>();
		// Runs on the thread that completes the future, as it completes.
		CompletableFuture<String> observed = result.whenComplete((value, ex) -> {
			heldAtCompletion.set(admin(this.registry).heldLockCount());
			try {
				znodesAtCompletion.set(lockZnodes());
			}
			catch (Exception failure) {
				throw new CompletionException(failure);
			}
		});

		work.complete("value");
		assertThat(observed.get(10, TimeUnit.SECONDS)).isEqualTo("value");
		assertThat(heldAtCompletion).hasValue(0);
		assertThat(znodesAtCompletion.get()).isEmpty();
	}

	@Test
	void valueAndFailuresOfTheActionPropagateAndTheLockIsReleased() {
		assertThat(this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT,
				(handle) -> CompletableFuture.completedFuture(42)))
			.succeedsWithin(WAIT)
			.isEqualTo(42);

		IllegalStateException boom = new IllegalStateException("boom");
		assertFailsWith(this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT,
				(handle) -> CompletableFuture.failedFuture(boom)), boom);

		// A stage failed with a CompletionException (as supplyAsync does): its cause is given.
		IllegalArgumentException wrapped = new IllegalArgumentException("wrapped");
		assertFailsWith(this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT,
				(handle) -> CompletableFuture.supplyAsync(() -> {
					throw wrapped;
				})), wrapped);

		UnsupportedOperationException thrown = new UnsupportedOperationException("thrown by the action");
		assertFailsWith(this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			throw thrown;
		}), thrown);

		CompletableFuture<Object> nullStage = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT,
				(handle) -> null);
		assertThat(nullStage).failsWithin(WAIT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("returned null")
			.withMessageContaining(this.key);

		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertOtherApplicationCanAcquire();
	}

	@Test
	void busyKeyFailsWithLockAcquisitionExceptionWithoutRunningTheAction() {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		AtomicBoolean ran = new AtomicBoolean();
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE,
				Duration.ofMillis(200), (handle) -> {
					ran.set(true);
					return CompletableFuture.completedFuture("ran");
				});

		assertThat(result).failsWithin(WAIT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOfSatisfying(LockAcquisitionException.class,
					(ex) -> assertThat(ex.getPath()).isEqualTo(ROOT + this.key));
		assertThat(ran).isFalse();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		held.release();
	}

	@Test
	void busyKeyIsSkippedOrReportedEmptyWhenAskedTo() throws Exception {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		LockRequest request = LockRequest.of(this.key).withWaitTime(Duration.ofMillis(100));
		AtomicBoolean ran = new AtomicBoolean();
		CompletableFuture<LockResult<String>> skipped = this.template.async()
			.execute(request.withOnBusy(OnBusy.SKIP), (handle) -> {
				ran.set(true);
				return CompletableFuture.completedFuture("ran");
			});
		assertThat(skipped.get(10, TimeUnit.SECONDS)).isEqualTo(LockResult.skipped());
		assertThat(this.template.async().tryAcquire(request).get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(ran).isFalse();
		held.release();

		assertThat(this.template.async()
			.execute(request.withOnBusy(OnBusy.SKIP), (handle) -> CompletableFuture.completedFuture("ran")))
			.succeedsWithin(WAIT)
			.isEqualTo(LockResult.executed("ran"));
		Optional<AsyncLockHandle> granted = this.template.async().tryAcquire(request).get(10, TimeUnit.SECONDS);
		assertThat(granted).isPresent();
		granted.get().release();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void invalidKeyThrowsAtCallTimeWithNothingRequested() {
		this.counts.reset();
		AtomicBoolean ran = new AtomicBoolean();
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> this.template.executeAsync("no-leading-slash", LockMode.EXCLUSIVE, WAIT, (handle) -> {
				ran.set(true);
				return CompletableFuture.completedFuture(null);
			}));
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> this.template.async().acquire(LockRequest.of("/bad//key")));
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> this.template.async()
				.execute(LockRequest.of(List.of(this.key + "/a", "/bad//key")),
						(handle) -> CompletableFuture.completedFuture(null)));
		assertThat(ran).isFalse();
		assertThat(this.counts.total()).as("requests sent: %s", this.counts).isZero();
		assertThat(admin(this.registry).describeWaitingLocks()).isEmpty();
	}

	@Test
	void cancellingWhileWaitingLeavesNoGrantBehind() throws Exception {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		AtomicBoolean ran = new AtomicBoolean();
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			ran.set(true);
			return CompletableFuture.completedFuture("ran");
		});
		await().atMost(WAIT).until(() -> !admin(this.registry).describeWaitingLocks().isEmpty());

		assertThat(result.cancel(true)).isTrue();
		await().atMost(WAIT).until(() -> admin(this.registry).describeWaitingLocks().isEmpty());
		held.release();

		await().atMost(WAIT).until(() -> ownZnodes().isEmpty() && admin(this.registry).heldLockCount() == 0);
		assertThat(ran).isFalse();
		assertOtherApplicationCanAcquire();
	}

	@Test
	void cancellingAfterTheGrantCancelsTheStageAndReleases() throws Exception {
		CompletableFuture<String> work = new CompletableFuture<>();
		CountDownLatch granted = new CountDownLatch(1);
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			granted.countDown();
			return work;
		});
		assertThat(granted.await(10, TimeUnit.SECONDS)).isTrue();

		assertThat(result.cancel(true)).isTrue();
		// The action may still be returning its stage when the cancel comes: cancelled once it has.
		await().atMost(WAIT).until(work::isCancelled);
		await().atMost(WAIT).until(() -> admin(this.registry).heldLockCount() == 0 && lockZnodes().isEmpty());
		assertOtherApplicationCanAcquire();
	}

	@Test
	void cancellingAnAsyncAcquisitionWhileWaitingLeavesNoGrantBehind() throws Exception {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.WRITE, Duration.ZERO);
		CompletableFuture<AsyncLockHandle> acquisition = this.template
			.async().acquire(LockRequest.of(this.key).withMode(LockMode.READ));
		await().atMost(WAIT).until(() -> !admin(this.registry).describeWaitingLocks().isEmpty());

		assertThat(acquisition.cancel(true)).isTrue();
		await().atMost(WAIT).until(() -> admin(this.registry).describeWaitingLocks().isEmpty());
		held.release();

		await().atMost(WAIT).until(() -> ownZnodes().isEmpty() && admin(this.registry).heldLockCount() == 0);
		Optional<LockHandle> write = this.otherApplication.tryAcquire(this.key, LockMode.WRITE, Duration.ZERO);
		assertThat(write).isPresent();
		write.get().release();
	}

	@Test
	void observesTheAcquisitionAndHoldOfAnAsyncGrantUnderTheCallersObservation() throws Exception {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).observationRegistry(observations).build();
		Observation caller = Observation.start("caller", observations);
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicReference<String> currentInAction = new AtomicReference<>();
		CompletableFuture<String> result;
		try (Observation.Scope scope = caller.openScope()) {
			result = this.template.executeAsync(this.key, LockMode.WRITE, WAIT, (handle) -> {
				Observation current = observations.getCurrentObservation();
				currentInAction.set((current != null) ? current.getContext().getName() : null);
				return work;
			});
		}
		await().atMost(WAIT).until(() -> currentInAction.get() != null);
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held").that().hasBeenStarted().isNotStopped();

		work.complete("done");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		caller.stop();
		assertThat(currentInAction).hasValue("zk.lock.held");
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.acquire")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("outcome", "acquired")
			.hasLowCardinalityKeyValue("mode", "WRITE")
			.hasParentObservationEqualTo(caller);
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held")
			.that()
			.hasBeenStopped()
			.hasParentObservationEqualTo(caller);
	}

	@Test
	void busyLocksAreObservedAsSkippedOnlyForRequestsThatSkip() throws Exception {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).observationRegistry(observations).build();
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			LockRequest request = LockRequest.of(this.key).withWaitTime(Duration.ZERO);
			assertThat(this.template.async().tryAcquire(request.withOnBusy(OnBusy.SKIP)).get(10, TimeUnit.SECONDS))
				.isEmpty();
			LockRequest twice = LockRequest.of(List.of(this.key, this.key)).withWaitTime(Duration.ZERO);
			assertThat(this.template.async().tryAcquire(twice.withOnBusy(OnBusy.SKIP)).get(10, TimeUnit.SECONDS))
				.isEmpty();
			assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2)
				.forAllObservationsWithNameEqualTo("zk.lock.acquire",
						(observation) -> observation.hasLowCardinalityKeyValue("outcome", "skipped"));
			observations.clear();
			assertThat(this.template.async().tryAcquire(request).get(10, TimeUnit.SECONDS)).isEmpty();
			assertThat(this.template.async().tryAcquire(twice).get(10, TimeUnit.SECONDS)).isEmpty();
			assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2)
				.forAllObservationsWithNameEqualTo("zk.lock.acquire",
						(observation) -> observation.hasLowCardinalityKeyValue("outcome", "timeout"));
		}
		finally {
			held.release();
		}
	}

	@Test
	void grantsAreOwnedByVirtualThreadsOnlyWhenAskedForAndAvailable() throws Exception {
		assertThat(ownerIsVirtual(this.template)).isFalse();
		boolean available = Runtime.version().feature() >= 21;
		LockTemplate virtual = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).virtualGrantThreads(true).build();
		assertThat(ownerIsVirtual(virtual)).isEqualTo(available);
		LockTemplate platform = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).virtualGrantThreads(false).build();
		assertThat(ownerIsVirtual(platform)).isFalse();
	}

	/** Whether the thread that runs an action (the grant's own, without an async executor) is virtual. */
	private boolean ownerIsVirtual(LockTemplate template) throws Exception {
		return template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			try {
				return CompletableFuture.completedFuture((Boolean) Thread.class.getMethod("isVirtual")
					.invoke(Thread.currentThread()));
			}
			catch (NoSuchMethodException ex) {
				return CompletableFuture.completedFuture(false);
			}
			catch (ReflectiveOperationException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}).get(10, TimeUnit.SECONDS);
	}

	@Test
	void actionRunsOnTheAsyncExecutor() throws Exception {
		ExecutorService executor = Executors.newSingleThreadExecutor((task) -> new Thread(task, "async-action"));
		try {
			this.template = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).asyncExecutor(executor).build();
			CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT,
					(handle) -> CompletableFuture.completedFuture(Thread.currentThread().getName()));
			assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("async-action");
			assertThat(admin(this.registry).heldLockCount()).isZero();
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void rejectingAsyncExecutorFailsTheFutureAndReleasesTheGrant() throws Exception {
		RejectedExecutionException rejected = new RejectedExecutionException("full");
		this.template = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).asyncExecutor((task) -> {
			throw rejected;
		}).build();
		AtomicBoolean ran = new AtomicBoolean();
		CompletableFuture<String> result = this.template.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
			ran.set(true);
			return CompletableFuture.completedFuture("ran");
		});
		assertFailsWith(result, rejected);
		assertThat(ran).isFalse();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(lockZnodes()).isEmpty();
		assertOtherApplicationCanAcquire();
	}

	private static void assertFailsWith(CompletableFuture<?> result, Throwable expected) {
		assertThat(result).failsWithin(WAIT).withThrowableOfType(ExecutionException.class).havingCause().isSameAs(expected);
	}

	private void assertOtherApplicationCanAcquire() {
		Optional<LockHandle> next = this.otherApplication.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(next).isPresent();
		next.get().release();
	}

	/** The lock znodes of the key, of any client. */
	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.client, ROOT + this.key);
	}

	/** The lock znodes of the key that this application's session owns. */
	private List<String> ownZnodes() throws Exception {
		long session = this.client.getZookeeperClient().getZooKeeper().getSessionId();
		return lockZnodes().stream().filter((path) -> {
			try {
				Stat stat = this.client.checkExists().forPath(path);
				return stat != null && stat.getEphemeralOwner() == session;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}).toList();
	}

}
