package io.github.zklock.chaos;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.ClosedTogether;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LockThread;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connection is lost, or the session ends, at the moment a cold key's creates are on the
 * wire: the key was never used, so the lock znode's first create is refused for its missing
 * parents, which are then created as containers and the lock znode's protected create sent after
 * them. Application A's client, connected through a {@link TcpProxy}, has a ZooKeeper handle
 * ({@link TrappingZooKeeper}) that acts exactly when it sends those creates: it freezes the link
 * (the requests never reach the server) or only the server's answers (they are served, the client
 * never hears), then the test drops the link or expires the session on the server. Meanwhile raw
 * Curator, connected directly, queues for the same lock.
 *
 * <p>Whatever the cut hits, A's method runs at most once and only under its lock, or A's call fails
 * with a {@link LockException}; A never has more than one znode in the queue (Curator's
 * protected-create recovery finds a create whose answer was lost, rather than making a second
 * one); once A is done no znode of A's sessions is left; raw Curator is granted within a bound
 * shorter than A's session timeout (a znode of A's left behind would hold it up until A's session
 * ended); and another application takes the lock afterwards. For EXCLUSIVE ({@code InterProcessMutex})
 * and a one-permit semaphore ({@code InterProcessSemaphoreV2}), cut at its lease's create or at its
 * internal lock's; synchronous and asynchronous. A semaphore's containers are cut once, not once per
 * queue: both queues' cuts there hit the same request (see {@link #cases()}).
 */
@Tag("chaos")
class ColdCreateCutTests {

	private static final String ROOT = "/cold-cut";

	/**
	 * Longer than any cut here and than {@link #NOT_STARVED}, so that only a delete frees the queue.
	 * Not much longer: the cut that expires the session after the lock znode's create holds the
	 * server's answers for half of it and 500 ms, which must still end before A's client gives up
	 * hearing nothing (two thirds of it): 7 s leaves 0.67 s.
	 */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(7);

	/**
	 * Longest raw Curator may wait for the lock, from the cut on (A reconnects, finds its create
	 * again or makes it, runs and releases: 1.3 to 2.5 s measured; 5 s for a loaded machine).
	 */
	private static final Duration NOT_STARVED = Duration.ofSeconds(5);

	private static final Duration BOUND = Duration.ofSeconds(30);

	private static final AtomicInteger cases = new AtomicInteger();

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private final Trap trap = new Trap();

	private final List<AutoCloseable> closeables = new ArrayList<>();

	/** The clients this case made, A's among them, closed together once what uses them is closed. */
	private final List<CuratorFramework> clients = new ArrayList<>();

	private final ExecutorService actions = Executors.newCachedThreadPool();

	private TcpProxy proxy;

	private CuratorFramework clientA;

	private CuratorLockRegistry registryA;

	private LockTemplate templateA;

	private CuratorFramework observer;

	@BeforeEach
	void start() throws Exception {
		this.proxy = TcpProxy.start(zooKeeper.getPort());
		this.clientA = zooKeeper.newClient((builder) -> builder.connectString(this.proxy.connectString())
			.zookeeperFactory((connectString, sessionTimeout, watcher, canBeReadOnly) -> new TrappingZooKeeper(
					connectString, sessionTimeout, watcher, canBeReadOnly, this.trap))
			.sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
			.connectionTimeoutMs(5_000)
			.retryPolicy(new ExponentialBackoffRetry(100, 10, 1_000)));
		this.clients.add(this.clientA);
		this.registryA = new CuratorLockRegistry(this.clientA, ROOT, 16);
		this.templateA = new LockTemplate(this.registryA, BOUND);
		this.observer = newClient();
	}

	@AfterEach
	void stop() {
		this.trap.disarm();
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			Chaos.closeQuietly(this.closeables.get(i));
		}
		Chaos.closeQuietly(this.registryA);
		// The clients at once (each close waits 100 ms in the NIO socket's cleanup), and A's before
		// its proxy (the extension would close it after): through a closed proxy its session's close
		// cannot reach the server, and the client retries until it gives up (about 1.5 s a case).
		ClosedTogether.close(this.clients);
		Chaos.closeQuietly(this.proxy);
		this.actions.shutdownNow();
	}

	/**
	 * Every cut of every kind, with both APIs, but a semaphore's containers cut once: a permit
	 * request creates the semaphore's path in its number-of-permits check ({@code SemaphorePermits}
	 * on the thread {@code zk-lock-permits}), before its internal lock or its lease is asked for; the
	 * first container create there, {@code /cold-cut/case-N} (the level below the root, which the
	 * registry knows to exist), is at or above both of its queues, {@code key/leases} and
	 * {@code key/locks}, so {@link Cut#CONTAINERS_LOST} traps that same request for
	 * {@link Kind#PERMIT} and {@link Kind#PERMIT_INTERNAL_LOCK}: the same request, the same
	 * requests before and after it, the same raw Curator recipe. {@link QueueWatch} reads both
	 * queues of a semaphore whichever the kind, so the case kept asserts what the other did.
	 * (At the lock znode's create the two kinds trap different requests, the lease's and the
	 * internal lock's, each of its own acquisition: both are kept.)
	 */
	static List<Arguments> cases() {
		List<Arguments> arguments = new ArrayList<>();
		for (Cut cut : Cut.values()) {
			for (Kind kind : Kind.values()) {
				if (cut.moment == Moment.CONTAINERS && kind == Kind.PERMIT_INTERNAL_LOCK) {
					continue;
				}
				for (Api api : Api.values()) {
					arguments.add(Arguments.of(cut, kind, api));
				}
			}
		}
		return arguments;
	}

	@ParameterizedTest(name = "{0} {1} {2}")
	@MethodSource("cases")
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void coldCreateCutGrantsOnceLeavesOneZnodeAndStarvesNoOne(Cut cut, Kind kind, Api api) throws Exception {
		String key = "/case-" + cases.incrementAndGet() + "/key";
		String lockPath = ROOT + key;
		String queuePath = kind.queuePath(lockPath);
		assertThat(this.observer.checkExists().forPath(ZKPaths.getPathAndNode(lockPath).getPath())).isNull();
		Set<Long> sessionsOfA = new ConcurrentSkipListSet<>();
		sessionsOfA.add(sessionOf(this.clientA));
		// Every session A has, as soon as it has it (an expiry starts a new one).
		this.clientA.getConnectionStateListenable().addListener((client, state) -> {
			if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
				try {
					sessionsOfA.add(sessionOf(client));
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}
		});
		Occupancy occupancy = new Occupancy();
		QueueWatch queueWatch = new QueueWatch(this.observer, kind.queuePaths(lockPath), sessionsOfA);
		this.closeables.add(queueWatch);
		this.trap.arm(cut.moment, queuePath, cut.answersOnly ? this.proxy::freezeReplies : this.proxy::freeze);

		AtomicInteger runs = new AtomicInteger();
		AtomicInteger ownZnodesInside = new AtomicInteger(-1);
		CompletableFuture<LockResult<Void>> callA = call(api, kind.request(key), (handle) -> {
			runs.incrementAndGet();
			occupancy.hold(() -> {
				sessionsOfA.add(sessionOf(this.clientA));
				ownZnodesInside.set(ownedBy(lockPath, sessionsOfA).size());
				assertThat(handle.isHeld()).as("A's grant while its method runs").isTrue();
			});
		});
		assertThat(this.trap.fired.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("the trapped create").isEqualTo(queuePath);
		ZooKeeper handleAtCut = this.clientA.getZookeeperClient().getZooKeeper();
		long sessionAtCut = handleAtCut.getSessionId();
		byte[] passwordAtCut = handleAtCut.getSessionPasswd();
		if (cut.answersOnly) {
			// Served: A's znode is on the server, its answer held by the proxy.
			await().atMost(BOUND).until(() -> !ownedBy(queuePath, sessionsOfA).isEmpty());
		}

		// Raw Curator queues for the lock, connected directly, while A cannot hear the server.
		long cutAt = System.nanoTime();
		// A server expires a session only once it heard nothing from the client for the session
		// timeout, so answers of an expired session reach the client at least that long after their
		// requests were sent; the expiry injected here is instant, so the answers are held for half
		// the timeout first, from which on the client grants nothing on an answer (a later one
		// might come from a session expired meanwhile, whatever the cut).
		Duration held = (cut.expires && cut.answersOnly)
				? Duration.ofMillis(this.clientA.getZookeeperClient().getLastNegotiatedSessionTimeoutMs() / 2 + 500)
				: Duration.ZERO;
		Duration rawBound = NOT_STARVED.plus(held);
		LockThread rawThread = new LockThread("raw-curator");
		this.closeables.add(rawThread);
		CuratorFramework rawClient = newClient();
		InterProcessLock raw = kind.raw(rawClient, lockPath);
		CompletableFuture<Boolean> rawDone = rawThread.submit(() -> {
			if (!raw.acquire(rawBound.toMillis(), TimeUnit.MILLISECONDS)) {
				return false;
			}
			try {
				occupancy.hold(() -> {
				});
			}
			finally {
				raw.release();
			}
			return true;
		});
		long rawSession = sessionOf(rawClient);
		await().atMost(BOUND).until(() -> !ownedBy(lockPath, Set.of(rawSession)).isEmpty() || rawDone.isDone());

		if (cut.expires) {
			Thread.sleep(Math.max(0, held.toMillis() - Chaos.millisSince(cutAt)));
			Chaos.expireSession(zooKeeper.getConnectString(), sessionAtCut, passwordAtCut,
					(int) SESSION_TIMEOUT.toMillis(), BOUND);
		}
		else {
			this.proxy.drop(Duration.ofMillis(200));
		}
		this.proxy.heal();

		Throwable failureOfA = null;
		try {
			LockResult<Void> result = callA.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			assertThat(result.wasExecuted()).isTrue();
		}
		catch (ExecutionException ex) {
			failureOfA = (ex.getCause() instanceof CompletionException wrapped
					&& wrapped.getCause() != null) ? wrapped.getCause() : ex.getCause();
		}
		boolean rawGranted = rawDone.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		long rawWaitedMs = Chaos.millisSince(cutAt);
		await().atMost(BOUND).until(() -> this.clientA.getZookeeperClient().isConnected());
		sessionsOfA.add(sessionOf(this.clientA));
		List<String> leftOfA = new ArrayList<>();
		boolean cleared = clearedWithin(Duration.ofSeconds(10), () -> {
			leftOfA.clear();
			leftOfA.addAll(ownedBy(lockPath, sessionsOfA));
			return leftOfA.isEmpty();
		});
		queueWatch.close();
		boolean takenAfter = takenByAnotherApplication(kind.request(key));
		Chaos.fault("cold-create-cut cut=%s kind=%s api=%s granted=%s failure=%s max_own_znodes_in_queue=%d "
				+ "own_znodes_inside=%d raw_granted=%s raw_done_after_ms=%d sessions_of_a=%d znodes_left=%d taken_after=%s",
				cut, kind, api, failureOfA == null, (failureOfA != null) ? failureOfA.getClass().getSimpleName() : "-",
				queueWatch.maxOwn.get(), ownZnodesInside.get(), rawGranted, rawWaitedMs, sessionsOfA.size(),
				leftOfA.size(), takenAfter);

		if (failureOfA == null) {
			assertThat(runs.get()).as("A's method runs").isOne();
			assertThat(ownZnodesInside.get()).as("znodes of A below the lock path while its method runs").isOne();
		}
		else {
			assertThat(failureOfA).as("A's call failed").isInstanceOf(LockException.class);
			assertThat(runs.get()).as("A's method runs").isZero();
		}
		assertThat(occupancy.violations).as("A and raw Curator holding at once").isEmpty();
		assertThat(queueWatch.errors).as("reading the queue").isEmpty();
		assertThat(queueWatch.maxOwn.get()).as("A's znodes in a queue at once").isLessThanOrEqualTo(1);
		assertThat(rawGranted).as("raw Curator granted within %s of the cut", rawBound).isTrue();
		assertThat(cleared).as("znodes of A left: %s", leftOfA).isTrue();
		assertThat(takenAfter).as("another application takes the lock afterwards").isTrue();
		assertThat(admin(this.registryA).heldLockCount()).as("grants A still tracks").isZero();
		if (!cut.expires) {
			assertThat(sessionsOfA).as("A's sessions (a cut, not an expiry)").hasSize(1);
		}
	}

	private CompletableFuture<LockResult<Void>> call(Api api, LockRequest request, Action action) {
		if (api == Api.SYNC) {
			LockThread thread = new LockThread("a-sync");
			this.closeables.add(thread);
			return thread.submit(() -> this.templateA.execute(request, (handle) -> {
				action.run(handle);
				return null;
			}));
		}
		return this.templateA.async().execute(request, (handle) -> CompletableFuture.<Void>supplyAsync(() -> {
			try {
				action.run(handle);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
			return null;
		}, this.actions));
	}

	private boolean takenByAnotherApplication(LockRequest request) throws Exception {
		CuratorLockRegistry other = new CuratorLockRegistry(newClient(), ROOT, 16);
		this.closeables.add(other);
		LockResult<Boolean> result = new LockTemplate(other, BOUND).execute(request.withWaitTime(Duration.ofSeconds(10)),
				LockHandle::isHeld);
		return result.wasExecuted() && Boolean.TRUE.equals(result.result());
	}

	private CuratorFramework newClient() throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient();
		this.clients.add(client);
		return client;
	}

	private static boolean clearedWithin(Duration bound, Callable<Boolean> condition) {
		try {
			await().atMost(bound).until(condition);
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

	private static long sessionOf(CuratorFramework client) throws Exception {
		return client.getZookeeperClient().getZooKeeper().getSessionId();
	}

	/** The ephemeral znodes below a path, at any depth, that belong to one of the given sessions. */
	private List<String> ownedBy(String path, Set<Long> sessions) throws Exception {
		List<String> owned = new ArrayList<>();
		for (String znode : ZooKeeperExtension.ephemeralZnodes(this.observer, path)) {
			Stat stat = this.observer.checkExists().forPath(znode);
			if (stat != null && sessions.contains(stat.getEphemeralOwner())) {
				owned.add(znode);
			}
		}
		return owned;
	}

	/** Where the trap acts. */
	enum Moment {

		/** The first container created for the queue's path, itself or above it. */
		CONTAINERS,

		/** The lock znode's create into the queue, sent after the queue's own container. */
		LOCK_CREATE

	}

	/** What the trap and then the test do. */
	enum Cut {

		/** The link freezes as the parents' creates go out, then drops: none of them, nor the lock znode's, arrives. */
		CONTAINERS_LOST(Moment.CONTAINERS, false, false),

		/** The link freezes as the lock znode's create goes out, then drops: it never arrives. */
		CREATE_LOST(Moment.LOCK_CREATE, false, false),

		/** Only the answers freeze: the lock znode is created, then the link drops before its answer. */
		CREATE_ANSWER_LOST(Moment.LOCK_CREATE, true, false),

		/** The link freezes as the lock znode's create goes out; the server expires the session meanwhile. */
		EXPIRED_CREATE_LOST(Moment.LOCK_CREATE, false, true),

		/**
		 * Only the answers freeze: the lock znode is created; the server expires the session before
		 * the answer, which reaches the client only afterwards (held for half the session timeout).
		 */
		EXPIRED_AFTER_CREATE(Moment.LOCK_CREATE, true, true);

		final Moment moment;

		final boolean answersOnly;

		final boolean expires;

		Cut(Moment moment, boolean answersOnly, boolean expires) {
			this.moment = moment;
			this.answersOnly = answersOnly;
			this.expires = expires;
		}

	}

	/** The lock, and which of its queues the cut hits. */
	enum Kind {

		/** {@code InterProcessMutex}: the lock znode directly below the lock path. */
		EXCLUSIVE {
			@Override
			LockRequest request(String key) {
				return LockRequest.of(key);
			}

			@Override
			String queuePath(String lockPath) {
				return lockPath;
			}

			@Override
			InterProcessLock raw(CuratorFramework client, String lockPath) {
				return new InterProcessMutex(client, lockPath);
			}
		},

		/** A one-permit semaphore, cut at its lease's create (below {@code leases}). */
		PERMIT {
			@Override
			LockRequest request(String key) {
				return LockRequest.permit(key, 1);
			}

			@Override
			String queuePath(String lockPath) {
				return lockPath + "/leases";
			}

			@Override
			List<String> queuePaths(String lockPath) {
				return semaphoreQueues(lockPath);
			}

			@Override
			InterProcessLock raw(CuratorFramework client, String lockPath) {
				return new InterProcessSemaphoreMutex(client, lockPath);
			}
		},

		/** A one-permit semaphore, cut at its internal lock's create (below {@code locks}). */
		PERMIT_INTERNAL_LOCK {
			@Override
			LockRequest request(String key) {
				return LockRequest.permit(key, 1);
			}

			@Override
			String queuePath(String lockPath) {
				return lockPath + "/locks";
			}

			@Override
			List<String> queuePaths(String lockPath) {
				return semaphoreQueues(lockPath);
			}

			@Override
			InterProcessLock raw(CuratorFramework client, String lockPath) {
				return new InterProcessSemaphoreMutex(client, lockPath);
			}
		};

		abstract LockRequest request(String key);

		/** The queue the cut hits. */
		abstract String queuePath(String lockPath);

		/** Every queue the lock's znodes go in, read by {@link QueueWatch}. */
		List<String> queuePaths(String lockPath) {
			return List.of(queuePath(lockPath));
		}

		abstract InterProcessLock raw(CuratorFramework client, String lockPath);

		private static List<String> semaphoreQueues(String lockPath) {
			return List.of(lockPath + "/leases", lockPath + "/locks");
		}

	}

	enum Api {

		SYNC, ASYNC

	}

	@FunctionalInterface
	private interface Action {

		void run(LockHandle handle) throws Exception;

	}

	/** A and raw Curator holding the lock: never both. */
	private static final class Occupancy {

		private final AtomicInteger holders = new AtomicInteger();

		final List<String> violations = new CopyOnWriteArrayList<>();

		void hold(Check whileHeld) throws Exception {
			int now = this.holders.incrementAndGet();
			try {
				if (now > 1) {
					this.violations.add(now + " holders");
				}
				whileHeld.run();
				if (this.holders.get() > 1) {
					this.violations.add(this.holders.get() + " holders");
				}
			}
			finally {
				this.holders.decrementAndGet();
			}
		}

		@FunctionalInterface
		interface Check {

			void run() throws Exception;

		}

	}

	/**
	 * Reads the queues every 20 ms from another client, for the most znodes of A's sessions seen in
	 * one of them at once.
	 */
	private static final class QueueWatch implements AutoCloseable {

		final AtomicInteger maxOwn = new AtomicInteger();

		final List<String> errors = new CopyOnWriteArrayList<>();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final Thread thread;

		QueueWatch(CuratorFramework observer, List<String> queuePaths, Set<Long> sessions) {
			this.thread = new Thread(() -> {
				while (this.running.get()) {
					for (String queuePath : queuePaths) {
						try {
							int own = 0;
							for (String child : observer.getChildren().forPath(queuePath)) {
								Stat stat = observer.checkExists().forPath(ZKPaths.makePath(queuePath, child));
								if (stat != null && sessions.contains(stat.getEphemeralOwner())) {
									own++;
								}
							}
							this.maxOwn.accumulateAndGet(own, Math::max);
						}
						catch (KeeperException.NoNodeException ex) {
							// Not created yet.
						}
						catch (Exception ex) {
							if (this.running.get()) {
								this.errors.add(ex.toString());
							}
						}
					}
					try {
						Thread.sleep(20);
					}
					catch (InterruptedException ex) {
						return;
					}
				}
			}, "queue-watch");
			this.thread.setDaemon(true);
			this.thread.start();
		}

		@Override
		public void close() throws InterruptedException {
			this.running.set(false);
			this.thread.interrupt();
			this.thread.join(TimeUnit.SECONDS.toMillis(10));
		}

	}

	/**
	 * When to act and what: armed with a moment, a queue path and an action, it runs the action once,
	 * on the thread that sends the trapped create and before it is sent, then tells the test.
	 */
	static final class Trap {

		private volatile Moment moment;

		private volatile String queuePath;

		private volatile Runnable action;

		/** Whether the queue's own container create was sent since the trap was armed. */
		private volatile boolean queueContainerSent;

		private final AtomicBoolean done = new AtomicBoolean(true);

		/** Completes with the queue path once the trapped create was handed to the client. */
		volatile CompletableFuture<String> fired = new CompletableFuture<>();

		void arm(Moment moment, String queuePath, Runnable action) {
			this.moment = moment;
			this.queuePath = queuePath;
			this.action = action;
			this.queueContainerSent = false;
			this.fired = new CompletableFuture<>();
			this.done.set(false);
		}

		void disarm() {
			this.done.set(true);
		}

		/** @return whether the create about to be sent is the trapped one (the action has run) */
		boolean beforeCreate(String path, CreateMode mode) {
			if (this.done.get()) {
				return false;
			}
			String queue = this.queuePath;
			boolean trapped;
			if (mode == CreateMode.CONTAINER) {
				if (path.equals(queue)) {
					this.queueContainerSent = true;
				}
				trapped = this.moment == Moment.CONTAINERS && (queue.equals(path) || queue.startsWith(path + "/"));
			}
			else {
				trapped = this.moment == Moment.LOCK_CREATE && mode == CreateMode.EPHEMERAL_SEQUENTIAL
						&& this.queueContainerSent && ZKPaths.getPathAndNode(path).getPath().equals(queue);
			}
			if (trapped && this.done.compareAndSet(false, true)) {
				this.action.run();
				return true;
			}
			return false;
		}

	}

	/** A ZooKeeper handle whose background creates pass the {@link Trap} first (Curator sends its background creates through this method). */
	static final class TrappingZooKeeper extends ZooKeeper {

		private final Trap trap;

		TrappingZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly, Trap trap)
				throws IOException {
			super(connectString, sessionTimeout, watcher, canBeReadOnly);
			this.trap = trap;
		}

		@Override
		public void create(String path, byte[] data, List<ACL> acl, CreateMode createMode,
				AsyncCallback.Create2Callback cb, Object ctx, long ttl) {
			boolean trapped = this.trap.beforeCreate(path, createMode);
			super.create(path, data, acl, createMode, cb, ctx, ttl);
			if (trapped) {
				this.trap.fired.complete(this.trap.queuePath);
			}
		}

	}

}
