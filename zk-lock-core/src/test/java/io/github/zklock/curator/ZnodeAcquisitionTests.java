package io.github.zklock.curator;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link ZnodeAcquisition} through {@link CuratorZnodes} on a real ZooKeeper server: its
 * znodes follow {@code InterProcessMutex}'s protocol, so raw Curator mutexes and these acquisitions
 * exclude each other both ways and queue in one FIFO order; a wait that is ended leaves no znode,
 * also when its create answers only afterwards; a refused look has sent its delete before it
 * answers; thousands of queued acquisitions add no thread; an expired session fails the wait; a
 * queue of the application's own acquisitions drains in its order without a listing per waiter,
 * and a raw mutex queued among them, or one of them that gives up, keeps its place in that order.
 */
class ZnodeAcquisitionTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final long BOUND_MS = 20_000;

	private CuratorFramework client;

	private CuratorFramework otherClient;

	private ScheduledExecutorService timer;

	private Znodes znodes;

	private String lockPath;

	/** The acquisitions of the test's application, as its registry keeps them. */
	private final OwnZnodes own = new OwnZnodes();

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.otherClient = zooKeeper.newClient();
		this.timer = Executors.newSingleThreadScheduledExecutor();
		this.znodes = new CuratorZnodes(this.client, "/locks", 100);
		this.lockPath = "/locks/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.timer.shutdownNow();
	}

	@Test
	void freeLockIsGrantedWithInterProcessMutexNamesAndTheCreatesCzxid() throws Exception {
		ZnodeAcquisition znode = grant(acquire(false));
		assertThat(znode.node()).startsWith(this.lockPath + "/_c_").contains("-lock-");
		Stat stat = this.client.checkExists().forPath(znode.node());
		assertThat(stat).isNotNull();
		assertThat(znode.czxid()).isEqualTo(stat.getCzxid());
		assertThat(stat.getEphemeralOwner()).isEqualTo(this.client.getZookeeperClient().getZooKeeper().getSessionId());
		assertThat(new String(this.client.getData().forPath(znode.node()))).isEqualTo(LockNodeData.IDENTITY);

		znode.end();
		await().atMost(Duration.ofMillis(BOUND_MS))
			.until(() -> ZooKeeperExtension.ephemeralZnodes(this.client, this.lockPath).isEmpty());
	}

	@Test
	void coldKeyExcludesARawInterProcessMutexThatCameSecond() throws Exception {
		String coldPath = this.lockPath + "/cold/k";
		ZnodeAcquisition znode = grant(acquire(coldPath, false));
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, coldPath);
		assertThat(raw.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
		znode.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		assertThat(raw.acquire(BOUND_MS, TimeUnit.MILLISECONDS)).isTrue();
		Acquired waiting = acquire(coldPath, true);
		assertThat(waiting.get(BOUND_MS, TimeUnit.MILLISECONDS)).isNull();
		raw.release();
	}

	@Test
	void grantExcludesARawInterProcessMutexUntilReleased() throws Exception {
		ZnodeAcquisition znode = grant(acquire(false));
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		assertThat(raw.acquire(200, TimeUnit.MILLISECONDS)).isFalse();

		ExecutorService rawThread = Executors.newSingleThreadExecutor();
		try {
			Future<Boolean> waiting = rawThread.submit(() -> raw.acquire(BOUND_MS, TimeUnit.MILLISECONDS));
			znode.end();
			assertThat(waiting.get(BOUND_MS, TimeUnit.MILLISECONDS)).isTrue();
			rawThread.submit(() -> {
				raw.release();
				return null;
			}).get(BOUND_MS, TimeUnit.MILLISECONDS);
		}
		finally {
			rawThread.shutdownNow();
		}
		assertThat(childCount()).isZero();
	}

	@Test
	void rawInterProcessMutexHolderExcludesTheAcquisitionUntilItReleases() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		Acquired waiting = acquire(false);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 2);
		assertThat(waiting).isNotDone();

		raw.release();
		ZnodeAcquisition znode = grant(waiting);
		assertThat(this.client.checkExists().forPath(znode.node())).isNotNull();
		znode.end();
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 0);
	}

	@Test
	void rawMutexesAndAcquisitionsAreGrantedInTheOrderTheyQueued() throws Exception {
		InterProcessMutex holder = new InterProcessMutex(this.otherClient, this.lockPath);
		holder.acquire();
		List<String> order = new CopyOnWriteArrayList<>();
		List<CompletableFuture<Void>> done = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			String name = "participant-" + i;
			if (i % 2 == 0) {
				done.add(acquire(false).thenAccept((znode) -> {
					order.add(name);
					znode.end();
				}));
			}
			else {
				// A raw mutex on a thread of its own, in the other session.
				CompletableFuture<Void> raw = new CompletableFuture<>();
				Thread thread = new Thread(() -> {
					try {
						InterProcessMutex mutex = new InterProcessMutex(this.otherClient, this.lockPath);
						mutex.acquire();
						order.add(name);
						mutex.release();
						raw.complete(null);
					}
					catch (Exception ex) {
						raw.completeExceptionally(ex);
					}
				});
				thread.start();
				done.add(raw);
			}
			int queued = i + 2;
			await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == queued);
		}
		holder.release();
		CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(BOUND_MS, TimeUnit.MILLISECONDS);
		assertThat(order).containsExactly("participant-0", "participant-1", "participant-2", "participant-3",
				"participant-4", "participant-5");
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 0);
	}

	@Test
	void waitThatRunsOutCompletesEmptyAndLeavesNoZnode() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		assertThat(acquire(true).get(BOUND_MS, TimeUnit.MILLISECONDS)).isNull();
		Acquired timed = acquire(false);
		this.timer.schedule(() -> timed.cancel(false), 300, TimeUnit.MILLISECONDS);
		assertThat(timed).failsWithin(Duration.ofMillis(BOUND_MS));
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 1);
		raw.release();
	}

	@Test
	void oneLookThatIsRefusedHasSentItsDeleteBeforeItAnswers() throws Exception {
		// A request the session sends once the answer is known (ZooKeeper serves a session's
		// requests in order) no longer finds the znode: an application's next attempt is never
		// refused because of its own previous one. The listing is sent from the first callback to
		// run when the answer completes, before any other work of the completing thread.
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		try {
			for (int i = 0; i < 5; i++) {
				CompletableFuture<List<String>> listedAfterAnswer = new CompletableFuture<>();
				Acquired attempt = acquire(true);
				attempt.whenComplete((znode, ex) -> {
					try {
						this.client.getChildren()
							.inBackground((client, event) -> listedAfterAnswer.complete(event.getChildren()))
							.forPath(this.lockPath);
					}
					catch (Exception failure) {
						listedAfterAnswer.completeExceptionally(failure);
					}
				});
				assertThat(attempt.get(BOUND_MS, TimeUnit.MILLISECONDS)).isNull();
				assertThat(listedAfterAnswer.get(BOUND_MS, TimeUnit.MILLISECONDS)).hasSize(1);
			}
		}
		finally {
			raw.release();
		}
	}

	@Test
	void cancellingWhileWaitingLeavesNoZnodeAndTheNextWaiterIsGranted() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		Acquired first = acquire(false);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 2);
		Acquired second = acquire(false);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 3);

		first.cancel(false);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 2);
		raw.release();
		ZnodeAcquisition znode = grant(second);
		znode.end();
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 0);
	}

	@Test
	void cancellingAtOnceDeletesTheZnodeWhenTheCreateAnswersLater() throws Exception {
		for (int i = 0; i < 50; i++) {
			acquire(false).cancel(false);
		}
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> this.client.checkExists().forPath(this.lockPath) != null
				&& childCount() == 0);
	}

	@Test
	void twoThousandQueuedAcquisitionsAddNoThread() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
		List<Acquired> waiting = new ArrayList<>();
		for (int i = 0; i < 2_000; i++) {
			waiting.add(acquire(false));
		}
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 2_001);
		int threadsQueued = ManagementFactory.getThreadMXBean().getThreadCount();
		assertThat(threadsQueued - threadsBefore).isLessThanOrEqualTo(2);
		assertThat(waiting).noneMatch(CompletableFuture::isDone);

		// Given up rather than drained (a drain: ownQueueDrainsInItsOrderWithoutAListingPerWaiter).
		waiting.forEach((acquisition) -> acquisition.cancel(false));
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 1);
		raw.release();
		assertThat(childCount()).isZero();
	}

	@Test
	void expiredSessionFailsTheWait() throws Exception {
		InterProcessMutex raw = new InterProcessMutex(this.otherClient, this.lockPath);
		raw.acquire();
		Acquired waiting = acquire(false);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 2);

		zooKeeper.expireSession(this.client);
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> waiting.get(BOUND_MS, TimeUnit.MILLISECONDS))
			.withCauseInstanceOf(KeeperException.SessionExpiredException.class);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 1);
		raw.release();
	}

	@Test
	void ownQueueDrainsInItsOrderWithoutAListingPerWaiter() throws Exception {
		ListingCount listings = new ListingCount(this.znodes);
		ZnodeAcquisition holder = grant(acquire(listings, this.lockPath, false));
		int waiters = 300;
		List<Acquired> queued = new ArrayList<>();
		List<String> granted = new CopyOnWriteArrayList<>();
		List<CompletableFuture<Void>> drained = new ArrayList<>();
		for (int i = 0; i < waiters; i++) {
			Acquired waiter = acquire(listings, this.lockPath, false);
			queued.add(waiter);
			// Granted one after the other: each lets go as it is granted.
			drained.add(waiter.thenAccept((znode) -> {
				granted.add(znode.node());
				znode.end();
			}));
		}
		await().atMost(Duration.ofMillis(BOUND_MS))
			.until(() -> queued.stream().allMatch((waiter) -> waiter.acquisition.state() == ZnodeAcquisition.State.WAITING));
		List<String> queueOrder = queued.stream().map((waiter) -> waiter.acquisition.node()).toList();
		listings.reset();

		holder.end();
		CompletableFuture.allOf(drained.toArray(CompletableFuture[]::new)).get(BOUND_MS, TimeUnit.MILLISECONDS);

		assertThat(granted).containsExactlyElementsOf(queueOrder);
		// Each waiter knew itself first from its own granted predecessor's delete, and confirmed
		// with an exists of its znode: no listing of the queue per waiter (each of up to 300 names).
		assertThat(listings.count(this.lockPath)).as("listings of the queue while %d waiters drained", waiters)
			.isLessThanOrEqualTo(3);
		assertThat(listings.names(this.lockPath)).isLessThanOrEqualTo(3L * waiters);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 0);
		assertThat(this.own.size()).isZero();
	}

	@Test
	void rawMutexQueuedAmongOwnWaitersIsGrantedInItsTurn() throws Exception {
		ZnodeAcquisition holder = grant(acquire(false));
		List<String> order = new CopyOnWriteArrayList<>();
		List<CompletableFuture<Void>> done = new ArrayList<>();
		List<Acquired> own = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			if (i == 3) {
				// Another participant queues between this application's waiters: once the creates of
				// own-0 to own-2 are answered (sent on another connection, they could otherwise reach
				// the server after the raw mutex's create and be sequenced after it).
				await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 4);
				CompletableFuture<Void> raw = new CompletableFuture<>();
				Thread thread = new Thread(() -> {
					try {
						InterProcessMutex mutex = new InterProcessMutex(this.otherClient, this.lockPath);
						mutex.acquire();
						order.add("raw");
						mutex.release();
						raw.complete(null);
					}
					catch (Exception ex) {
						raw.completeExceptionally(ex);
					}
				});
				thread.start();
				done.add(raw);
				await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 5);
			}
			String name = "own-" + i;
			Acquired waiter = acquire(false);
			own.add(waiter);
			done.add(waiter.handle((znode, ex) -> {
				if (znode != null) {
					order.add(name);
					znode.end();
				}
				return null;
			}));
		}
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 8
				&& own.stream().allMatch((waiter) -> waiter.acquisition.state() == ZnodeAcquisition.State.WAITING));
		// A waiter that gives up leaves its successor watching the one before it.
		own.get(1).cancel(false);
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 7);

		holder.end();
		CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(BOUND_MS, TimeUnit.MILLISECONDS);
		assertThat(order).containsExactly("own-0", "own-2", "raw", "own-3", "own-4", "own-5");
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> childCount() == 0);
	}

	/** An acquisition as a future: its grant, {@code null} when not granted; cancelling it ends it. */
	private Acquired acquire(boolean oneLook) {
		return acquire(this.lockPath, oneLook);
	}

	private Acquired acquire(String lockPath, boolean oneLook) {
		return acquire(this.znodes, lockPath, oneLook);
	}

	private Acquired acquire(Znodes through, String lockPath, boolean oneLook) {
		Acquired acquired = new Acquired();
		acquired.acquisition = new ZnodeAcquisition(through, lockPath, Protocol.MUTEX, 1, oneLook,
				(decided) -> {
					if (decided.failure() != null) {
						acquired.completeExceptionally(decided.failure());
					}
					else {
						acquired.complete(decided.granted() ? decided : null);
					}
				}, System::nanoTime, this.own);
		acquired.acquisition.start();
		return acquired;
	}

	private static ZnodeAcquisition grant(Acquired acquisition) throws Exception {
		ZnodeAcquisition znode = acquisition.get(BOUND_MS, TimeUnit.MILLISECONDS);
		assertThat(znode).isNotNull();
		return znode;
	}

	private static final class Acquired extends CompletableFuture<ZnodeAcquisition> {

		ZnodeAcquisition acquisition;

		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			this.acquisition.end();
			return super.cancel(mayInterruptIfRunning);
		}

	}

	private int childCount() throws Exception {
		Stat stat = this.otherClient.checkExists().forPath(this.lockPath);
		return (stat != null) ? stat.getNumChildren() : 0;
	}


	/** Passes requests on, counting the listings of each path and the names they answered. */
	private static final class ListingCount implements Znodes {

		private final Znodes delegate;

		private final Map<String, AtomicLong> listings = new ConcurrentHashMap<>();

		private final Map<String, AtomicLong> names = new ConcurrentHashMap<>();

		ListingCount(Znodes delegate) {
			this.delegate = delegate;
		}

		long count(String path) {
			AtomicLong count = this.listings.get(path);
			return (count != null) ? count.get() : 0;
		}

		long names(String path) {
			AtomicLong count = this.names.get(path);
			return (count != null) ? count.get() : 0;
		}

		void reset() {
			this.listings.clear();
			this.names.clear();
		}

		@Override
		public void create(String path, boolean parentMissing, Runnable resent, Answer<Created> answer) {
			this.delegate.create(path, parentMissing, resent, answer);
		}

		@Override
		public void children(String path, @Nullable Watcher watcher, Answer<List<String>> answer) {
			this.listings.computeIfAbsent(path, (key) -> new AtomicLong()).incrementAndGet();
			this.delegate.children(path, watcher, (code, children) -> {
				if (children != null) {
					this.names.computeIfAbsent(path, (key) -> new AtomicLong()).addAndGet(children.size());
				}
				answer.answer(code, children);
			});
		}

		@Override
		public void watch(String path, Watcher watcher, Answer<Boolean> answer) {
			this.delegate.watch(path, watcher, answer);
		}

		@Override
		public void watchKept(String path, Watcher watcher, Answer<Boolean> answer) {
			this.delegate.watchKept(path, watcher, answer);
		}

		@Override
		public void exists(String path, Answer<Boolean> answer) {
			this.delegate.exists(path, answer);
		}

		@Override
		public void delete(String path, Answer<Void> answer) {
			this.delegate.delete(path, answer);
		}

		@Override
		public void deleteOnce(String path, Answer<Void> answer) {
			this.delegate.deleteOnce(path, answer);
		}

		@Override
		public long sessionInstance() {
			return this.delegate.sessionInstance();
		}

		@Override
		public boolean connected() {
			return this.delegate.connected();
		}

		@Override
		public int sessionTimeoutMs() {
			return this.delegate.sessionTimeoutMs();
		}

		@Override
		public int connectionTimeoutMs() {
			return this.delegate.connectionTimeoutMs();
		}

	}

}
