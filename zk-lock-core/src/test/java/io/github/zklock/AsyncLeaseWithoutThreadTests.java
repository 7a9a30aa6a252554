package io.github.zklock;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.RevocationAction;
import io.github.zklock.curator.RevocationMode;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Asynchronous permits, non-reentrant EXCLUSIVE grants and multi-locks made without a thread, on a
 * real ZooKeeper server: leases follow {@code InterProcessSemaphoreV2}'s protocol (its internal
 * mutex below {@code locks}, lease znodes below {@code leases}), so raw Curator semaphores on the
 * same path count against them and the reverse; a multi-lock takes its keys one after the other
 * with no thread waiting, all or nothing. Thousands queued add no thread; waits that run out,
 * are cancelled or fail with the session leave no znode.
 */
class AsyncLeaseWithoutThreadTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(30);

	/**
	 * How long 2,000 queued leases may take to drain: a bound against a hang, not a throughput
	 * goal (the benchmarks measure that).
	 */
	private static final Duration DRAIN_BOUND = Duration.ofMinutes(3);

	private CuratorFramework client;

	private CuratorFramework otherClient;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private String key;

	private String lockPath;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.otherClient = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
		this.template = new LockTemplate(this.registry, BOUND);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
		this.lockPath = "/locks" + this.key;
	}

	@AfterEach
	void close() {
		this.registry.close();
	}

	@Test
	void asyncPermitsAndRawSemaphoreLeasesCountAgainstOneLimitBothWays() throws Exception {
		AsyncLockTemplate async = this.template.async();
		AsyncLockHandle first = async.acquire(LockRequest.permit(this.key, 2)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(this.otherClient, this.lockPath, 2);
		Lease rawLease = raw.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(rawLease).isNotNull();
		// Both permits taken, one by each side: neither side gets a third.
		assertThat(raw.acquire(200, TimeUnit.MILLISECONDS)).isNull();
		assertThat(async.tryAcquire(LockRequest.permit(this.key, 2).withWaitTime(Duration.ofMillis(200)))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEmpty();

		// An asynchronous request waits for the raw lease, a raw one for the asynchronous grant.
		CompletableFuture<AsyncLockHandle> waiting = async.acquire(LockRequest.permit(this.key, 2));
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 1);
		assertThat(waiting).isNotDone();
		rawLease.close();
		AsyncLockHandle second = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		ExecutorService rawThread = Executors.newSingleThreadExecutor();
		try {
			CompletableFuture<Lease> rawWaits = CompletableFuture.supplyAsync(() -> {
				try {
					return raw.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, rawThread);
			await().during(Duration.ofMillis(300)).atMost(BOUND).until(() -> !rawWaits.isDone());
			first.releaseAsync();
			Lease rawSecond = rawWaits.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(rawSecond).isNotNull();
			rawSecond.close();
		}
		finally {
			rawThread.shutdownNow();
		}
		second.release();
		assertNothingLeft();
	}

	@Test
	void asyncNonReentrantLockAndRawSemaphoreMutexExcludeEachOther() throws Exception {
		AsyncLockTemplate async = this.template.async();
		LockRequest nonReentrant = LockRequest.of(this.key).withReentrant(false);
		AsyncLockHandle held = async.acquire(nonReentrant).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		InterProcessSemaphoreMutex raw = new InterProcessSemaphoreMutex(this.otherClient, this.lockPath);
		assertThat(raw.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
		held.releaseAsync();
		assertThat(raw.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		assertThat(async.tryAcquire(nonReentrant.withWaitTime(Duration.ZERO)).get(BOUND.toSeconds(), TimeUnit.SECONDS))
			.isEmpty();
		CompletableFuture<AsyncLockHandle> waiting = async.acquire(nonReentrant);
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 1);
		raw.release();
		waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS).release();
		assertNothingLeft();
	}

	@Test
	void twoThousandQueuedAsyncPermitRequestsAddNoThreadAndNeverExceedThePermits() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(this.otherClient, this.lockPath, 2);
		AsyncLockTemplate async = this.template.async();
		// The number of permits is checked once per key; warm that and the delivering grant threads.
		async.acquire(LockRequest.permit(this.key, 2)).get(BOUND.toSeconds(), TimeUnit.SECONDS).release();
		List<Lease> rawLeases = new ArrayList<>(raw.acquire(2, BOUND.toMillis(), TimeUnit.MILLISECONDS));
		int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger mostInside = new AtomicInteger();
		List<CompletableFuture<LockResult<Integer>>> calls = new ArrayList<>();
		// Waiting without limit: the test is about threads and permits, not how fast 2,000 leases
		// drain (some 14 s alone on two idle cores, 37 s with stress-ng --cpu 4 beside it).
		for (int i = 0; i < 2_000; i++) {
			int call = i;
			calls.add(async.execute(LockRequest.permit(this.key, 2).withWaitTime(LockRequest.WAIT_FOREVER), (handle) -> {
				mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
				inside.decrementAndGet();
				return CompletableFuture.completedFuture(call);
			}));
		}
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 2_000);
		assertThat(ManagementFactory.getThreadMXBean().getThreadCount() - threadsBefore).isLessThanOrEqualTo(16);
		// The waiters queue on the semaphore's internal mutex: no lease znode of theirs yet but one.
		assertThat(childCount(this.lockPath + "/leases")).isLessThanOrEqualTo(3);

		for (Lease lease : rawLeases) {
			lease.close();
		}
		CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(DRAIN_BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(calls).allMatch((call) -> call.join().wasExecuted());
		assertThat(mostInside.get()).isBetween(1, 2);
		assertNothingLeft();
	}

	@Test
	void leaseWaitsThatRunOutOrAreCancelledLeaveNoZnode() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(this.otherClient, this.lockPath, 1);
		Lease rawLease = raw.acquire();
		AsyncLockTemplate async = this.template.async();
		assertThat(async.tryAcquire(LockRequest.permit(this.key, 1).withWaitTime(Duration.ZERO))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEmpty();
		assertThat(async.tryAcquire(LockRequest.permit(this.key, 1).withWaitTime(Duration.ofMillis(300)))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEmpty();
		CompletableFuture<AsyncLockHandle> cancelled = async.acquire(LockRequest.permit(this.key, 1));
		// Waiting: its lease znode is created, and it keeps the internal mutex while it watches.
		await().atMost(BOUND).until(() -> childCount(this.lockPath + "/leases") == 2);
		assertThat(childCount(this.lockPath + "/locks")).isEqualTo(1);
		cancelled.cancel(false);
		await().atMost(BOUND).until(() -> childCount(this.lockPath + "/leases") == 1
				&& childCount(this.lockPath + "/locks") == 0);
		assertThat(admin().describeWaitingLocks()).isEmpty();
		rawLease.close();
		assertNothingLeft();
	}

	@Test
	void otherNumberOfPermitsFailsTheAsyncRequestWithoutAZnode() throws Exception {
		AsyncLockHandle held = this.template.async()
			.acquire(LockRequest.permit(this.key, 2))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> this.template.async()
				.acquire(LockRequest.permit(this.key, 3))
				.get(BOUND.toSeconds(), TimeUnit.SECONDS))
			.withCauseInstanceOf(PermitsMismatchException.class);
		assertThat(childCount(this.lockPath + "/leases")).isEqualTo(1);
		held.release();
		assertNothingLeft();
	}

	@Test
	void expiredSessionLosesTheHeldLeaseAndQueuesTheWaitingOneAgain() throws Exception {
		this.registry.setInterruptOnLost(true);
		AsyncLockHandle held = this.template.async()
			.acquire(LockRequest.permit(this.key, 1))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		CuratorLockRegistry other = new CuratorLockRegistry(this.otherClient, "/locks", 100);
		try {
			CompletableFuture<AsyncLockHandle> otherWaits = new LockTemplate(other, BOUND).async()
				.acquire(LockRequest.permit(this.key, 1));
			CompletableFuture<AsyncLockHandle> waiting = this.template.async().acquire(LockRequest.permit(this.key, 1));
			await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 1);
			long expired = this.client.getZookeeperClient().getZooKeeper().getSessionId();

			zooKeeper.expireSession(this.client);
			held.whenLost().toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(held.state()).isEqualTo(LockState.LOST);
			// The lease went with the session: the other application, queued first, is granted.
			AsyncLockHandle otherGrant = otherWaits.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			// The waiting request is queued again with a znode of the new session, behind it.
			await().atMost(BOUND).until(() -> this.client.getZookeeperClient().isConnected()
					&& this.client.getZookeeperClient().getZooKeeper().getSessionId() != expired
					&& admin().describeWaitingLocks().size() == 1);
			assertThat(waiting).isNotDone();
			otherGrant.release();
			AsyncLockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(granted.isHeld()).isTrue();
			granted.release();
			held.release();
		}
		finally {
			other.close();
		}
		assertNothingLeft();
	}

	@Test
	void lockAtLeastForKeepsAnAsyncLeaseAfterItsRelease() throws Exception {
		AsyncLockTemplate async = this.template.async();
		LockRequest kept = LockRequest.of(this.key).withReentrant(false).withLockAtLeastFor(Duration.ofMillis(800));
		long start = System.nanoTime();
		async.execute(kept, (handle) -> CompletableFuture.completedFuture(null)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		InterProcessSemaphoreMutex raw = new InterProcessSemaphoreMutex(this.otherClient, this.lockPath);
		assertThat(raw.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(800));
		raw.release();
		assertNothingLeft();
	}

	@Test
	void asyncMultiLockWaitsWithoutAThreadAndTakesAllKeysOrNone() throws Exception {
		String a = this.key + "-a";
		String b = this.key + "-b";
		InterProcessMutex rawB = new InterProcessMutex(this.otherClient, "/locks" + b);
		rawB.acquire();
		AsyncLockTemplate async = this.template.async();
		// Busy on b: a, taken first, is released.
		assertThat(async.tryAcquire(LockRequest.of(List.of(b, a)).withWaitTime(Duration.ofMillis(300)))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEmpty();
		// Released without waiting for ZooKeeper: its znode is deleted in the background.
		await().atMost(BOUND).until(() -> childCount("/locks" + a) == 0);

		int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
		List<CompletableFuture<AsyncLockHandle>> waiting = new ArrayList<>();
		for (int i = 0; i < 500; i++) {
			waiting.add(async.acquire(LockRequest.of(List.of(b, a))));
		}
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 500);
		assertThat(ManagementFactory.getThreadMXBean().getThreadCount() - threadsBefore).isLessThanOrEqualTo(16);
		CompletableFuture<AsyncLockHandle> cancelled = async.acquire(LockRequest.of(List.of(a, b)));
		rawB.release();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger mostInside = new AtomicInteger();
		List<CompletableFuture<List<String>>> grantedPaths = new ArrayList<>();
		for (CompletableFuture<AsyncLockHandle> request : waiting) {
			grantedPaths.add(request.thenApply((handle) -> {
				mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
				List<String> paths = handle.parts().stream().map(LockHandle::path).toList();
				inside.decrementAndGet();
				handle.releaseAsync();
				return paths;
			}));
		}
		cancelled.cancel(false);
		CompletableFuture.allOf(grantedPaths.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(grantedPaths).allSatisfy((paths) -> assertThat(paths.join()).containsExactly("/locks" + a, "/locks" + b));
		assertThat(mostInside).hasValue(1);
		await().atMost(BOUND).until(() -> childCount("/locks" + a) == 0 && childCount("/locks" + b) == 0);
		assertThat(admin().heldLockCount()).isZero();
		assertThat(admin().describeWaitingLocks()).isEmpty();
	}

	@Test
	void asyncMultiLockOfReadsIsSharedAndItsLossIsTold() throws Exception {
		this.registry.setInterruptOnLost(true);
		String a = this.key + "-a";
		String b = this.key + "-b";
		LockRequest reads = LockRequest.of(List.of(a, b)).withMode(LockMode.READ);
		AsyncLockHandle first = this.template.async().acquire(reads).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		AsyncLockHandle second = this.template.async().acquire(reads).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(first.parts()).hasSize(2);
		assertThat(second.isHeld()).isTrue();
		assertThat(admin().revoke(b, RevocationMode.REQUEST, Duration.ZERO).action()).isNotEqualTo(RevocationAction.NOT_HELD);
		first.whenLost().toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
		second.whenLost().toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(first.state()).isEqualTo(LockState.LOST);
		first.release();
		second.release();
		await().atMost(BOUND).until(() -> childCount("/locks" + a) == 0 && childCount("/locks" + b) == 0);
		assertThat(admin().heldLockCount()).isZero();
	}

	private CuratorLockAdmin admin() {
		return new CuratorLockAdmin(this.registry);
	}

	private int childCount(String path) throws Exception {
		Stat stat = this.otherClient.checkExists().forPath(path);
		return (stat != null) ? stat.getNumChildren() : 0;
	}

	private void assertNothingLeft() throws Exception {
		await().atMost(BOUND).until(() -> childCount(this.lockPath + "/leases") == 0
				&& childCount(this.lockPath + "/locks") == 0);
		assertThat(admin().heldLockCount()).isZero();
		assertThat(admin().describeWaitingLocks()).isEmpty();
	}

}
