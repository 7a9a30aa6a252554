package io.github.zklock;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.chainLength;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Asynchronous EXCLUSIVE, READ and WRITE grants made without a thread (the registry's asynchronous
 * chains and reads) on a real ZooKeeper server: they follow {@code InterProcessMutex}'s and
 * {@code InterProcessReadWriteLock}'s protocols, so raw Curator code on the same path excludes them
 * and is excluded, in FIFO order; 2,000 of them queued add no thread
 * and share one znode; their waits run out, are cancelled and fail with the session as they
 * should, leaving no znode.
 */
class AsyncGrantWithoutThreadTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(30);

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
	void asyncHolderExcludesARawMutexAndTheRawHolderExcludesAsyncRequests() throws Exception {
		AsyncLockHandle held = this.template.async().acquire(LockRequest.of(this.key)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		ExecutorService rawThread = Executors.newSingleThreadExecutor();
		try {
			assertThat(rawThread.submit(() -> raw.acquire(200, TimeUnit.MILLISECONDS)).get()).isFalse();
			CompletableFuture<Boolean> rawWaits = CompletableFuture.supplyAsync(() -> {
				try {
					return raw.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, rawThread);
			await().atMost(BOUND).until(() -> childCount() == 2);
			held.releaseAsync();
			assertThat(rawWaits.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();

			// Now the raw mutex holds: an asynchronous request is busy, and waits behind it.
			Optional<AsyncLockHandle> busy = this.template.async()
				.tryAcquire(LockRequest.of(this.key).withWaitTime(Duration.ofMillis(200)))
				.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(busy).isEmpty();
			CompletableFuture<AsyncLockHandle> waiting = this.template.async().acquire(LockRequest.of(this.key));
			await().atMost(BOUND).until(() -> childCount() == 2);
			assertThat(waiting).isNotDone();
			rawThread.submit(() -> {
				raw.release();
				return null;
			}).get();
			waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS).release();
		}
		finally {
			rawThread.shutdownNow();
		}
		assertNothingLeft();
	}

	@Test
	void rawMutexesAndAsyncRequestsOfThreeApplicationsAreGrantedInQueueOrder() throws Exception {
		List<CuratorLockRegistry> others = List.of(new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100),
				new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100));
		ExecutorService rawThreads = Executors.newCachedThreadPool();
		try {
			List<LockTemplate> applications = List.of(this.template, new LockTemplate(others.get(0), BOUND),
					new LockTemplate(others.get(1), BOUND));
			InterProcessMutex holder = new InterProcessMutex(this.otherClient, this.lockPath);
			holder.acquire();
			List<String> order = new CopyOnWriteArrayList<>();
			List<CompletableFuture<?>> done = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				String name = "participant-" + i;
				if (i % 2 == 0) {
					done.add(applications.get(i / 2).async().execute(LockRequest.of(this.key), (handle) -> {
						order.add(name);
						return CompletableFuture.completedFuture(name);
					}));
				}
				else {
					done.add(CompletableFuture.runAsync(() -> {
						try {
							InterProcessMutex mutex = new InterProcessMutex(this.otherClient, this.lockPath);
							mutex.acquire();
							order.add(name);
							mutex.release();
						}
						catch (Exception ex) {
							throw new IllegalStateException(ex);
						}
					}, rawThreads));
				}
				int queued = i + 2;
				await().atMost(BOUND).until(() -> childCount() == queued);
			}
			holder.release();
			CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(order).containsExactly("participant-0", "participant-1", "participant-2", "participant-3",
					"participant-4", "participant-5");
		}
		finally {
			rawThreads.shutdownNow();
			others.forEach(CuratorLockRegistry::close);
		}
		assertNothingLeft();
	}

	@Test
	void asyncReadsAndWritesFollowInterProcessReadWriteLockBothWays() throws Exception {
		InterProcessReadWriteLock raw = new InterProcessReadWriteLock(this.otherClient, this.lockPath);
		AsyncLockTemplate async = this.template.async();
		LockRequest read = LockRequest.of(this.key).withMode(LockMode.READ);
		LockRequest write = LockRequest.of(this.key).withMode(LockMode.WRITE);
		ExecutorService rawThread = Executors.newSingleThreadExecutor();
		try {
			// A raw reader: asynchronous readers share, an asynchronous writer waits.
			rawThread.submit(() -> {
				raw.readLock().acquire();
				return null;
			}).get();
			AsyncLockHandle firstRead = async.acquire(read).get(BOUND.toSeconds(), TimeUnit.SECONDS);
			AsyncLockHandle secondRead = async.acquire(read).get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(firstRead.fencingToken()).isNotEqualTo(secondRead.fencingToken());
			CompletableFuture<AsyncLockHandle> writing = async.acquire(write);
			await().atMost(BOUND).until(() -> childCount() == 4);
			assertThat(writing).isNotDone();
			rawThread.submit(() -> {
				raw.readLock().release();
				return null;
			}).get();
			firstRead.release();
			assertThat(writing).isNotDone();
			secondRead.releaseAsync();
			AsyncLockHandle writeGrant = writing.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(writeGrant.mode()).isEqualTo(LockMode.WRITE);

			// An asynchronous writer: a raw reader and a raw writer wait.
			assertThat(rawThread.submit(() -> raw.readLock().acquire(200, TimeUnit.MILLISECONDS)).get()).isFalse();
			assertThat(rawThread.submit(() -> raw.writeLock().acquire(200, TimeUnit.MILLISECONDS)).get()).isFalse();
			writeGrant.release();
			assertThat(rawThread.submit(() -> raw.writeLock().acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS)).get())
				.isTrue();

			// A raw writer: asynchronous readers and writers wait, then get in order.
			List<String> order = new CopyOnWriteArrayList<>();
			CompletableFuture<?> laterRead = async.execute(read, (handle) -> {
				order.add("read");
				return CompletableFuture.completedFuture(null);
			});
			await().atMost(BOUND).until(() -> childCount() == 2);
			CompletableFuture<?> laterWrite = async.execute(write, (handle) -> {
				order.add("write");
				return CompletableFuture.completedFuture(null);
			});
			await().atMost(BOUND).until(() -> childCount() == 3);
			assertThat(order).isEmpty();
			rawThread.submit(() -> {
				raw.writeLock().release();
				return null;
			}).get();
			CompletableFuture.allOf(laterRead, laterWrite).get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(order).containsExactly("read", "write");
		}
		finally {
			rawThread.shutdownNow();
		}
		assertNothingLeft();
	}

	@Test
	void twoThousandQueuedAsyncRequestsAddNoThreadAndShareOneZnode() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		AsyncLockTemplate async = this.template.async();
		// Warm the grant threads that deliver grants, so that the count below is the waits' alone.
		async.acquire(LockRequest.of(this.key + "-warm-up")).get(BOUND.toSeconds(), TimeUnit.SECONDS).release();
		int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger mostInside = new AtomicInteger();
		List<CompletableFuture<LockResult<Integer>>> calls = new ArrayList<>();
		for (int i = 0; i < 2_000; i++) {
			int call = i;
			calls.add(async.execute(LockRequest.of(this.key), (handle) -> {
				mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
				inside.decrementAndGet();
				return CompletableFuture.completedFuture(call);
			}));
		}
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 2_000);
		int threadsQueued = ManagementFactory.getThreadMXBean().getThreadCount();
		assertThat(threadsQueued - threadsBefore).isLessThanOrEqualTo(16);
		// The raw holder's and one for this application's asynchronous requests.
		assertThat(childCount()).isEqualTo(2);

		raw.release();
		CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(calls).allMatch((call) -> call.join().wasExecuted());
		assertThat(mostInside).hasValue(1);
		assertNothingLeft();
	}

	@Test
	void waitsThatRunOutOrAreCancelledLeaveNoZnode() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		AsyncLockTemplate async = this.template.async();
		assertThat(async.tryAcquire(LockRequest.of(this.key).withWaitTime(Duration.ZERO)).get(BOUND.toSeconds(),
				TimeUnit.SECONDS)).isEmpty();
		assertThat(async.tryAcquire(LockRequest.of(this.key).withWaitTime(Duration.ofMillis(300)))
			.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEmpty();
		CompletableFuture<AsyncLockHandle> cancelled = async.acquire(LockRequest.of(this.key));
		await().atMost(BOUND).until(() -> childCount() == 2);
		cancelled.cancel(false);
		await().atMost(BOUND).until(() -> childCount() == 1);
		assertThat(admin().describeWaitingLocks()).isEmpty();
		raw.release();
		assertNothingLeft();
	}

	@Test
	void waitsShorterThanARoundTripOnAFreeKeyAreGrantedOrNotNeverAFailure() throws Exception {
		// The wait's timer may run before the request is queued; with nothing answered yet and the
		// client connected, such a wait is "not granted", as one that ran out in the queue.
		// A failure completes the future exceptionally: get throws it.
		AsyncLockTemplate async = this.template.async();
		for (int i = 0; i < 300; i++) {
			Duration waitTime = Duration.ofNanos(1 + (i % 50) * 20_000L);
			async.tryAcquire(LockRequest.of(this.key).withWaitTime(waitTime))
				.get(BOUND.toSeconds(), TimeUnit.SECONDS)
				.ifPresent(AsyncLockHandle::release);
		}
		assertNothingLeft();
	}

	@Test
	void expiredSessionQueuesTheWaitingRequestAgainInTheNewSession() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		CompletableFuture<AsyncLockHandle> waiting = this.template.async().acquire(LockRequest.of(this.key));
		await().atMost(BOUND).until(() -> childCount() == 2);
		long expired = this.client.getZookeeperClient().getZooKeeper().getSessionId();

		zooKeeper.expireSession(this.client);
		// Its znode went with the session; its wait goes on, with a znode of the new session.
		await().atMost(BOUND).until(() -> this.client.getZookeeperClient().isConnected()
				&& this.client.getZookeeperClient().getZooKeeper().getSessionId() != expired && childCount() == 2);
		assertThat(waiting).isNotDone();
		raw.release();
		AsyncLockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(granted.isHeld()).isTrue();
		long session = this.client.getZookeeperClient().getZooKeeper().getSessionId();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, this.lockPath)).singleElement()
			.satisfies((node) -> assertThat(this.client.checkExists().forPath(node).getEphemeralOwner())
				.isEqualTo(session));
		granted.release();
		assertNothingLeft();
	}

	@Test
	void releasedGrantIsHandedToTheNextRequestOfTheApplicationWithTheSameToken() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		AsyncLockTemplate async = this.template.async();
		CompletableFuture<AsyncLockHandle> first = async.acquire(LockRequest.of(this.key));
		CompletableFuture<AsyncLockHandle> second = async.acquire(LockRequest.of(this.key));
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().size() == 2);
		raw.release();
		AsyncLockHandle firstGrant = first.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		long token = firstGrant.fencingToken();
		assertThat(chainLength(this.registry, firstGrant)).isOne();
		firstGrant.releaseAsync();
		AsyncLockHandle secondGrant = second.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(chainLength(this.registry, secondGrant)).as("handed over").isEqualTo(2);
		assertThat(secondGrant.fencingToken()).isEqualTo(token);
		secondGrant.release();
		assertNothingLeft();

		// Without local hand-off, each grant has a znode (and a token) of its own.
		this.registry.setLocalHandoff(LocalHandoff.DISABLED);
		AsyncLockHandle third = async.acquire(LockRequest.of(this.key)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(chainLength(this.registry, third)).isOne();
		assertThat(third.fencingToken()).isGreaterThan(token);
		third.release();
		assertNothingLeft();
	}

	@Test
	void syncAndAsyncRequestsOfOneKeyTakeTurnsAndNeverOverlap() throws Exception {
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger mostInside = new AtomicInteger();
		AtomicInteger syncGrants = new AtomicInteger();
		AtomicInteger asyncGrants = new AtomicInteger();
		long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
		ExecutorService syncThreads = Executors.newFixedThreadPool(4);
		try {
			List<CompletableFuture<Void>> loops = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				loops.add(CompletableFuture.runAsync(() -> {
					while (System.nanoTime() - end < 0) {
						this.template.execute(this.key, (handle) -> {
							mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
							syncGrants.incrementAndGet();
							inside.decrementAndGet();
							return null;
						});
					}
				}, syncThreads));
				loops.add(asyncLoop(end, inside, mostInside, asyncGrants));
			}
			CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}
		finally {
			syncThreads.shutdownNow();
		}
		assertThat(mostInside).hasValue(1);
		// Each group queues a znode of its own: the two take turns through ZooKeeper's queue, each
		// turn bounded by the hand-off settings, so neither is starved. A turn hands on only to the
		// requests waiting then: the synchronous threads ask again at once, an asynchronous caller
		// only once its completion has run, so the asynchronous turns are shorter (about 7 % of the
		// grants here, against 93 %).
		int all = syncGrants.get() + asyncGrants.get();
		assertThat(syncGrants.get()).as("synchronous grants of %d", all).isGreaterThan(Math.max(100, all / 100));
		assertThat(asyncGrants.get()).as("asynchronous grants of %d", all).isGreaterThan(Math.max(100, all / 100));
		assertNothingLeft();
	}

	@Test
	void cancellationsRacingWithGrantsLeaveNoGrantWaiterOrZnode() throws Exception {
		AsyncLockTemplate async = this.template.async();
		List<CompletableFuture<AsyncLockHandle>> requests = new ArrayList<>();
		AtomicInteger granted = new AtomicInteger();
		for (int i = 0; i < 400; i++) {
			CompletableFuture<AsyncLockHandle> request = async.acquire(LockRequest.of(this.key));
			requests.add(request);
			request.thenAccept((handle) -> {
				granted.incrementAndGet();
				handle.releaseAsync();
			});
			if (i % 3 != 0) {
				// Cancelled while queued, while being granted, or after: whichever comes first.
				Thread.onSpinWait();
				request.cancel(false);
			}
		}
		for (CompletableFuture<AsyncLockHandle> request : requests) {
			try {
				request.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			}
			catch (java.util.concurrent.CancellationException ex) {
				// Given up.
			}
		}
		assertThat(granted.get()).isGreaterThanOrEqualTo((int) requests.stream().filter((r) -> !r.isCancelled()).count());
		assertNothingLeft();
	}

	/** One asynchronous caller with one request in flight, until {@code end}. */
	private CompletableFuture<Void> asyncLoop(long end, AtomicInteger inside, AtomicInteger mostInside,
			AtomicInteger grants) {
		if (System.nanoTime() - end >= 0) {
			return CompletableFuture.completedFuture(null);
		}
		return this.template.async().execute(LockRequest.of(this.key), (handle) -> {
			mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
			grants.incrementAndGet();
			inside.decrementAndGet();
			return CompletableFuture.completedFuture(null);
		}).thenComposeAsync((result) -> asyncLoop(end, inside, mostInside, grants));
	}

	private CuratorLockAdmin admin() {
		return new CuratorLockAdmin(this.registry);
	}

	private int childCount() throws Exception {
		Stat stat = this.otherClient.checkExists().forPath(this.lockPath);
		return (stat != null) ? stat.getNumChildren() : 0;
	}

	private void assertNothingLeft() throws Exception {
		await().atMost(BOUND).until(() -> childCount() == 0);
		assertThat(admin().heldLockCount()).isZero();
		assertThat(admin().describeWaitingLocks()).isEmpty();
	}

}
