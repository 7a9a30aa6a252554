package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockCallback;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * zk-lock and raw Curator recipes on cold lock keys: keys never used before, whose lock path and
 * parents do not exist yet (a root of its own per test), so the first participant, whichever it
 * is, creates them. For each kind of lock (EXCLUSIVE as {@code InterProcessMutex}, READ and WRITE
 * as the two sides of {@code InterProcessReadWriteLock}, non-reentrant EXCLUSIVE as
 * {@code InterProcessSemaphoreMutex}, permits as {@code InterProcessSemaphoreV2}), synchronous and
 * asynchronous: zk-lock first and raw Curator waiting for it; raw Curator first and zk-lock
 * waiting for it; zk-lock in two applications and raw Curator racing for a fresh key in every
 * round, never more holders at once than the kind allows; the same znodes, by name and type, as
 * the recipe makes on a cold path; and a multi-lock's keys. Afterwards no lock znode is left,
 * only empty containers.
 */
class ColdPathInteropTests {

	/**
	 * The server reaps empty containers every 100 ms (instead of every minute): a lock path and its
	 * parents, once empty, must go, as Curator's containers do; a persistent znode would stay. It
	 * also races the cold creates now and then (a parent reaped between two participants).
	 */
	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension()
		.withContainerCheckInterval(Duration.ofMillis(100));

	private static final Duration BOUND = Duration.ofSeconds(30);

	/**
	 * How long a participant tries while the other side holds. Long enough for the round trips of
	 * a cold key (its parents created first, and for a semaphore its internal lock and its permits
	 * too) to show the lock held on a loaded machine: zk-lock reports a wait that ended before any
	 * answer showed that as "ZooKeeper unreachable", not as busy.
	 */
	private static final Duration SHORT = Duration.ofSeconds(1);

	private static final AtomicInteger roots = new AtomicInteger();

	private final List<AutoCloseable> closeables = new ArrayList<>();

	/** The clients this test made, closed together once what uses them is closed. */
	private final List<CuratorFramework> clients = new ArrayList<>();

	private CuratorFramework observer;

	private String root;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	@BeforeEach
	void connect() throws Exception {
		this.observer = newClient();
		this.root = "/cold-interop-" + roots.incrementAndGet();
		this.registry = new CuratorLockRegistry(newClient(), this.root, 100);
		this.closeables.add(this.registry);
		this.template = new LockTemplate(this.registry, BOUND);
		assertThat(this.observer.checkExists().forPath(this.root)).as("the root before the test").isNull();
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		ClosedTogether.close(this.clients);
	}

	private CuratorFramework newClient() throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient();
		this.clients.add(client);
		return client;
	}

	static List<Arguments> kindsAndApis() {
		List<Arguments> arguments = new ArrayList<>();
		for (Kind kind : Kind.values()) {
			for (Api api : Api.values()) {
				arguments.add(Arguments.of(kind, api));
			}
		}
		return arguments;
	}

	@ParameterizedTest
	@MethodSource("kindsAndApis")
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void zkLockTakesAColdKeyFirstAndRawCuratorWaitsForIt(Kind kind, Api api) throws Exception {
		String key = "/a/b/c";
		String lockPath = this.root + key;
		ZkLock zkLock = zkLock(this.template, api);
		LockHandle held = zkLock.acquire(kind.request(key));
		assertThat(held.isHeld()).isTrue();
		assertThat(held.path()).isEqualTo(lockPath);
		List<RawLock> fillers = new ArrayList<>();
		for (int i = 1; i < kind.capacity; i++) {
			RawLock filler = raw(kind.conflicting(this.observer, lockPath), "raw-filler-" + i);
			assertThat(filler.acquire(BOUND)).as("the kind's other permits are free").isTrue();
			fillers.add(filler);
		}
		RawLock contender = raw(kind.conflicting(newClient(), lockPath), "raw-contender");
		assertThat(contender.acquire(SHORT)).as("raw Curator while zk-lock holds").isFalse();
		int before = ephemeralZnodes().size();
		CompletableFuture<Boolean> waiting = contender.acquireLater(BOUND);
		await().atMost(BOUND).until(() -> ephemeralZnodes().size() > before);
		assertThat(waiting).isNotDone();

		zkLock.release(held);
		assertThat(waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("raw Curator once zk-lock released").isTrue();
		assertThat(held.state()).isEqualTo(LockState.RELEASED);
		contender.release();
		for (RawLock filler : fillers) {
			filler.release();
		}
		assertOnlyEmptyContainersWereLeft();
	}

	@ParameterizedTest
	@MethodSource("kindsAndApis")
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void rawCuratorTakesAColdKeyFirstAndZkLockQueuesBehindIt(Kind kind, Api api) throws Exception {
		String key = "/a/b/c";
		String lockPath = this.root + key;
		List<RawLock> holders = new ArrayList<>();
		for (int i = 0; i < kind.capacity; i++) {
			RawLock holder = raw(kind.conflicting(newClient(), lockPath), "raw-holder-" + i);
			assertThat(holder.acquire(BOUND)).isTrue();
			holders.add(holder);
		}
		ZkLock zkLock = zkLock(this.template, api);
		assertThat(zkLock.tryAcquire(kind.request(key).withWaitTime(SHORT))).as("zk-lock while raw Curator holds")
			.isEmpty();
		int before = ephemeralZnodes().size();
		CompletableFuture<LockHandle> waiting = zkLock.acquireLater(kind.request(key));
		await().atMost(BOUND).until(() -> ephemeralZnodes().size() > before);
		assertThat(waiting).isNotDone();

		holders.get(0).release();
		LockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(granted.isHeld()).isTrue();
		for (RawLock holder : holders.subList(1, holders.size())) {
			assertThat(granted.isHeld()).isTrue();
			holder.release();
		}
		zkLock.release(granted);
		assertOnlyEmptyContainersWereLeft();
	}

	/**
	 * Two applications (zk-lock on two clients) and raw Curator (on a third, with a shared side
	 * for READ and WRITE) race for a never-seen key, one per round, all released at once: each
	 * participant is granted once per round, and no more hold at once than the kind allows.
	 */
	@ParameterizedTest
	@MethodSource("kindsAndApis")
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void zkLockAndRawCuratorRacingForNeverSeenKeysExcludeEachOther(Kind kind, Api api) throws Exception {
		int rounds = 15;
		CuratorLockRegistry otherRegistry = new CuratorLockRegistry(newClient(), this.root, 100);
		this.closeables.add(otherRegistry);
		CuratorFramework rawClient = newClient();
		Occupancy occupancy = new Occupancy(kind.capacity);
		List<Racer> racers = new ArrayList<>();
		racers.add(zkRacer(zkLock(this.template, api), kind, occupancy));
		racers.add(zkRacer(zkLock(new LockTemplate(otherRegistry, BOUND), api), kind, occupancy));
		for (RawRacer spec : kind.rawRacers()) {
			LockThread thread = thread("raw-racer");
			racers.add((key, start) -> thread.submit(() -> {
				InterProcessLock lock = spec.lock(rawClient, this.root + key);
				awaitStart(start);
				if (!lock.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new AssertionError("raw Curator not granted " + key);
				}
				try {
					occupancy.hold(spec.shared);
				}
				finally {
					lock.release();
				}
				return null;
			}));
		}
		for (int round = 0; round < rounds; round++) {
			String key = "/race/round-" + round + "/key";
			assertThat(this.observer.checkExists().forPath(this.root + "/race/round-" + round)).isNull();
			CountDownLatch start = new CountDownLatch(1);
			List<CompletableFuture<?>> done = new ArrayList<>();
			for (Racer racer : racers) {
				done.add(racer.race(key, start));
			}
			start.countDown();
			CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}
		assertThat(occupancy.violations).as("holders beyond what %s allows", kind).isEmpty();
		assertThat(occupancy.grants.get()).isEqualTo(rounds * racers.size());
		assertOnlyEmptyContainersWereLeft();
	}

	private Racer zkRacer(ZkLock zkLock, Kind kind, Occupancy occupancy) {
		return (key, start) -> CompletableFuture.runAsync(() -> awaitStart(start), AsyncZkLock.actions)
			.thenCompose((ignored) -> zkLock.execute(kind.request(key), (handle) -> occupancy.hold(kind.zkShared)));
	}

	private static void awaitStart(CountDownLatch start) {
		try {
			assertThat(start.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("the round started").isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * zk-lock's grant on a cold path and the kind's own Curator recipe on another cold path make
	 * the same znodes: the same names (the protected prefix {@code _c_<guid>-}, then
	 * {@code lock-}, {@code __READ__}, {@code __WRIT__} or {@code lease-}, then the sequence
	 * number) in the same places ({@code leases} and {@code locks} below a semaphore's path), the
	 * same types (containers for the parents, ephemeral lock znodes).
	 */
	@ParameterizedTest
	@EnumSource(Kind.class)
	@Timeout(value = 1, unit = TimeUnit.MINUTES)
	void coldPathGetsTheZnodesOfCuratorsRecipe(Kind kind) throws Exception {
		LockHandle held = this.template.acquire(kind.request("/zk/x/y"));
		LockThread rawThread = thread("raw");
		InterProcessLock raw = kind.recipe(newClient(), this.root + "/raw/x/y");
		assertThat(rawThread.call(() -> raw.acquire(BOUND.toMillis(), TimeUnit.MILLISECONDS))).isTrue();

		Map<String, String> zkLockTree = tree(this.root + "/zk");
		Map<String, String> curatorTree = tree(this.root + "/raw");
		assertThat(zkLockTree).as("zk-lock's znodes of %s", kind).isEqualTo(curatorTree);
		assertThat(zkLockTree).containsValue("ephemeral").containsKey(kind.expectedZnode);

		held.release();
		rawThread.call(() -> {
			raw.release();
			return null;
		});
		assertOnlyEmptyContainersWereLeft();
	}

	@ParameterizedTest
	@EnumSource(Api.class)
	@Timeout(value = 1, unit = TimeUnit.MINUTES)
	void multiLockOnColdKeysExcludesRawMutexesOnEachKeyBothWays(Api api) throws Exception {
		List<String> keys = List.of("/m/x/one", "/m/y/two", "/n/three");
		ZkLock zkLock = zkLock(this.template, api);
		LockHandle held = zkLock.acquire(LockRequest.of(keys));
		assertThat(held.isHeld()).isTrue();
		List<RawLock> raws = new ArrayList<>();
		List<CompletableFuture<Boolean>> attempts = new ArrayList<>();
		for (String key : keys) {
			RawLock raw = raw(new InterProcessMutex(newClient(), this.root + key), "raw" + key);
			// The keys' attempts at once, each on its own client and thread: one SHORT for the three.
			attempts.add(raw.acquireLater(SHORT));
			raws.add(raw);
		}
		for (int i = 0; i < keys.size(); i++) {
			assertThat(attempts.get(i).get(BOUND.toSeconds(), TimeUnit.SECONDS))
				.as("raw Curator on %s while the multi-lock holds", keys.get(i))
				.isFalse();
		}
		zkLock.release(held);
		for (RawLock raw : raws) {
			assertThat(raw.acquire(BOUND)).isTrue();
		}
		for (RawLock raw : raws.subList(0, 2)) {
			raw.release();
		}
		// The last key still held by raw Curator: the multi-lock gets none of its keys.
		assertThat(zkLock.tryAcquire(LockRequest.of(keys).withWaitTime(SHORT))).isEmpty();
		CompletableFuture<LockHandle> waiting = zkLock.acquireLater(LockRequest.of(keys));
		await().atMost(BOUND).until(() -> ephemeralZnodes().size() > 1);
		assertThat(waiting).isNotDone();
		raws.get(2).release();
		LockHandle granted = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		assertThat(granted.isHeld()).isTrue();
		assertThat(ephemeralZnodes()).hasSize(keys.size());
		zkLock.release(granted);
		assertOnlyEmptyContainersWereLeft();
	}

	/** The znodes below a path by their path relative to it, the GUIDs and sequence numbers masked, and their types. */
	private Map<String, String> tree(String path) throws Exception {
		Map<String, String> tree = new TreeMap<>();
		collect(path, "", tree);
		return tree;
	}

	private void collect(String path, String relative, Map<String, String> tree) throws Exception {
		List<String> children;
		try {
			children = this.observer.getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			// Reaped meanwhile, or never made.
			return;
		}
		for (String child : children) {
			String childPath = ZKPaths.makePath(path, child);
			Stat stat = this.observer.checkExists().forPath(childPath);
			if (stat == null || stat.getEphemeralOwner() == 0 && stat.getNumChildren() == 0) {
				// Gone, or an empty container that the reaper (every 100 ms here) may remove at any
				// moment: a semaphore's locks once its internal lock znode was deleted after the grant.
				continue;
			}
			String masked = relative + "/"
					+ child.replaceAll("^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-", "_c_<guid>-")
						.replaceAll("[0-9]{10}$", "<seq>");
			tree.put(masked, type(stat));
			collect(childPath, masked, tree);
		}
	}

	/** A client's {@link Stat} tells an ephemeral znode from the others, not a container from a persistent one. */
	private static String type(Stat stat) {
		return (stat.getEphemeralOwner() != 0) ? "ephemeral" : "parent";
	}

	private List<String> ephemeralZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, this.root);
	}

	/**
	 * No lock znode is left below the root, and every znode left is an empty container: the server
	 * reaps them all, the root too.
	 */
	private void assertOnlyEmptyContainersWereLeft() throws Exception {
		await().atMost(BOUND).until(() -> ephemeralZnodes().isEmpty());
		Map<String, String> left = new TreeMap<>();
		try {
			await().atMost(BOUND).until(() -> {
				left.clear();
				left.putAll(tree(this.root));
				return this.observer.checkExists().forPath(this.root) == null;
			});
		}
		catch (ConditionTimeoutException ex) {
			throw new AssertionError("Not reaped as empty containers below " + this.root + ": " + left, ex);
		}
	}

	private LockThread thread(String name) {
		LockThread thread = new LockThread(name);
		this.closeables.add(thread);
		return thread;
	}

	private RawLock raw(InterProcessLock lock, String name) {
		return new RawLock(lock, thread(name));
	}

	private ZkLock zkLock(LockTemplate template, Api api) {
		return (api == Api.SYNC) ? new SyncZkLock(template, thread("zk-lock")) : new AsyncZkLock(template);
	}

	/** How zk-lock is asked. */
	enum Api {

		/** {@link LockTemplate}: a grant bound to its thread. */
		SYNC,

		/** {@link LockTemplate#async()}: a grant released from any thread. */
		ASYNC

	}

	/** The lock kinds, with the Curator recipe that takes the same lock and one that conflicts with it. */
	enum Kind {

		EXCLUSIVE(1, false, "/x/y/_c_<guid>-lock-<seq>") {
			@Override
			LockRequest request(String key) {
				return LockRequest.of(key);
			}

			@Override
			InterProcessLock recipe(CuratorFramework client, String path) {
				return new InterProcessMutex(client, path);
			}
		},

		READ(1, true, "/x/y/_c_<guid>-__READ__<seq>") {
			@Override
			LockRequest request(String key) {
				return LockRequest.of(key).withMode(LockMode.READ);
			}

			@Override
			InterProcessLock recipe(CuratorFramework client, String path) {
				return new InterProcessReadWriteLock(client, path).readLock();
			}

			@Override
			InterProcessLock conflicting(CuratorFramework client, String path) {
				return new InterProcessReadWriteLock(client, path).writeLock();
			}

			@Override
			List<RawRacer> rawRacers() {
				return List.of(new RawRacer(false, (client, path) -> new InterProcessReadWriteLock(client, path).writeLock()),
						new RawRacer(true, (client, path) -> new InterProcessReadWriteLock(client, path).readLock()));
			}
		},

		WRITE(1, false, "/x/y/_c_<guid>-__WRIT__<seq>") {
			@Override
			LockRequest request(String key) {
				return LockRequest.of(key).withMode(LockMode.WRITE);
			}

			@Override
			InterProcessLock recipe(CuratorFramework client, String path) {
				return new InterProcessReadWriteLock(client, path).writeLock();
			}

			@Override
			InterProcessLock conflicting(CuratorFramework client, String path) {
				return new InterProcessReadWriteLock(client, path).readLock();
			}

			@Override
			List<RawRacer> rawRacers() {
				return List.of(new RawRacer(true, (client, path) -> new InterProcessReadWriteLock(client, path).readLock()),
						new RawRacer(false, (client, path) -> new InterProcessReadWriteLock(client, path).writeLock()));
			}
		},

		NON_REENTRANT(1, false, "/x/y/leases/_c_<guid>-lease-<seq>") {
			@Override
			LockRequest request(String key) {
				return LockRequest.of(key).withReentrant(false);
			}

			@Override
			InterProcessLock recipe(CuratorFramework client, String path) {
				return new InterProcessSemaphoreMutex(client, path);
			}
		},

		/** Two permits: zk-lock's count against raw Curator's leases of the same semaphore. */
		PERMIT(2, false, "/x/y/leases/_c_<guid>-lease-<seq>") {
			@Override
			LockRequest request(String key) {
				return LockRequest.permit(key, 2);
			}

			@Override
			InterProcessLock recipe(CuratorFramework client, String path) {
				return new LeaseLock(new InterProcessSemaphoreV2(client, path, 2));
			}

			@Override
			List<RawRacer> rawRacers() {
				return List.of(new RawRacer(false, this::recipe), new RawRacer(false, this::recipe));
			}
		};

		/** How many may hold at once (those of a shared kind aside). */
		final int capacity;

		/** Whether zk-lock's grants of this kind share the lock with each other. */
		final boolean zkShared;

		/** A znode the kind's grant makes, relative to the test's {@code /zk} or {@code /raw} level, masked. */
		final String expectedZnode;

		Kind(int capacity, boolean zkShared, String expectedZnode) {
			this.capacity = capacity;
			this.zkShared = zkShared;
			this.expectedZnode = expectedZnode;
		}

		/** zk-lock's request of this kind. */
		abstract LockRequest request(String key);

		/** The Curator recipe that takes the same lock as {@link #request}. */
		abstract InterProcessLock recipe(CuratorFramework client, String path);

		/** A Curator recipe that a grant of {@link #request} excludes, and that excludes it. */
		InterProcessLock conflicting(CuratorFramework client, String path) {
			return recipe(client, path);
		}

		/** Raw Curator's participants in a race. */
		List<RawRacer> rawRacers() {
			return List.of(new RawRacer(false, this::conflicting));
		}

	}

	/** A raw Curator participant of a race: its recipe, and whether it shares the lock with the other shared ones. */
	record RawRacer(boolean shared, RecipeFactory factory) {

		InterProcessLock lock(CuratorFramework client, String path) {
			return this.factory.lock(client, path);
		}

	}

	@FunctionalInterface
	interface RecipeFactory {

		InterProcessLock lock(CuratorFramework client, String path);

	}

	@FunctionalInterface
	private interface Racer {

		/** Wait for the start, take the key, {@link Occupancy#hold hold} it, release it. */
		CompletableFuture<?> race(String key, CountDownLatch start);

	}

	/**
	 * Who holds the raced lock now: exclusive holders up to the kind's capacity (permits), or
	 * shared holders, never both. Each holder counts itself in, then looks at the others, so of two
	 * overlapping holders at least one sees the other.
	 */
	private static final class Occupancy {

		private final int capacity;

		private final AtomicInteger exclusive = new AtomicInteger();

		private final AtomicInteger shared = new AtomicInteger();

		final AtomicInteger grants = new AtomicInteger();

		final List<String> violations = new CopyOnWriteArrayList<>();

		Occupancy(int capacity) {
			this.capacity = capacity;
		}

		Void hold(boolean sharedHolder) throws InterruptedException {
			this.grants.incrementAndGet();
			AtomicInteger mine = sharedHolder ? this.shared : this.exclusive;
			mine.incrementAndGet();
			try {
				for (int look = 0; look < 3; look++) {
					int exclusiveNow = this.exclusive.get();
					int sharedNow = this.shared.get();
					if (exclusiveNow > this.capacity || (exclusiveNow > 0 && sharedNow > 0)) {
						this.violations.add("exclusive=" + exclusiveNow + " shared=" + sharedNow);
					}
					// Hold the lock a moment, so that an overlapping holder is seen.
					Thread.sleep(1);
				}
			}
			finally {
				mine.decrementAndGet();
			}
			return null;
		}

	}

	/** A raw Curator lock, driven from a thread of its own (Curator's locks are bound to their thread). */
	private static final class RawLock {

		private final InterProcessLock lock;

		private final LockThread thread;

		RawLock(InterProcessLock lock, LockThread thread) {
			this.lock = lock;
			this.thread = thread;
		}

		boolean acquire(Duration wait) throws Exception {
			return this.thread.call(() -> this.lock.acquire(wait.toMillis(), TimeUnit.MILLISECONDS));
		}

		CompletableFuture<Boolean> acquireLater(Duration wait) {
			return this.thread.submit(() -> this.lock.acquire(wait.toMillis(), TimeUnit.MILLISECONDS));
		}

		void release() throws Exception {
			this.thread.call(() -> {
				this.lock.release();
				return null;
			});
		}

	}

	/** A lease of a Curator semaphore as an {@link InterProcessLock}, one lease at a time. */
	private static final class LeaseLock implements InterProcessLock {

		private final InterProcessSemaphoreV2 semaphore;

		private final AtomicReference<Lease> lease = new AtomicReference<>();

		LeaseLock(InterProcessSemaphoreV2 semaphore) {
			this.semaphore = semaphore;
		}

		@Override
		public void acquire() throws Exception {
			this.lease.set(this.semaphore.acquire());
		}

		@Override
		public boolean acquire(long time, TimeUnit unit) throws Exception {
			Lease acquired = this.semaphore.acquire(time, unit);
			this.lease.set(acquired);
			return acquired != null;
		}

		@Override
		public void release() throws Exception {
			this.lease.getAndSet(null).close();
		}

		@Override
		public boolean isAcquiredInThisProcess() {
			return this.lease.get() != null;
		}

	}

	/** zk-lock through one of its APIs. */
	private interface ZkLock {

		LockHandle acquire(LockRequest request) throws Exception;

		CompletableFuture<LockHandle> acquireLater(LockRequest request);

		Optional<? extends LockHandle> tryAcquire(LockRequest request) throws Exception;

		void release(LockHandle handle) throws Exception;

		/** Run an action under the lock, the API's own way ({@code execute}). */
		CompletableFuture<?> execute(LockRequest request, LockCallback<?> action);

	}

	private record SyncZkLock(LockTemplate template, LockThread thread) implements ZkLock {

		@Override
		public LockHandle acquire(LockRequest request) throws Exception {
			return this.thread.call(() -> this.template.acquire(request));
		}

		@Override
		public CompletableFuture<LockHandle> acquireLater(LockRequest request) {
			return this.thread.submit(() -> this.template.acquire(request));
		}

		@Override
		public Optional<? extends LockHandle> tryAcquire(LockRequest request) throws Exception {
			return this.thread.call(() -> this.template.tryAcquire(request));
		}

		@Override
		public void release(LockHandle handle) throws Exception {
			this.thread.release(handle);
		}

		@Override
		public CompletableFuture<?> execute(LockRequest request, LockCallback<?> action) {
			return this.thread.submit(() -> {
				LockResult<?> result = this.template.execute(request, action);
				assertThat(result.wasExecuted()).isTrue();
				return null;
			});
		}

	}

	private record AsyncZkLock(LockTemplate template) implements ZkLock {

		private static final ExecutorService actions = Executors.newCachedThreadPool();

		@Override
		public LockHandle acquire(LockRequest request) throws Exception {
			return acquireLater(request).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}

		@Override
		public CompletableFuture<LockHandle> acquireLater(LockRequest request) {
			return this.template.async().acquire(request).thenApply((handle) -> handle);
		}

		@Override
		public Optional<? extends LockHandle> tryAcquire(LockRequest request) throws Exception {
			return this.template.async().tryAcquire(request).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}

		@Override
		public void release(LockHandle handle) {
			// An asynchronous grant, released from this thread rather than the one it was granted on.
			assertThat(handle).isInstanceOf(AsyncLockHandle.class);
			handle.release();
		}

		@Override
		public CompletableFuture<?> execute(LockRequest request, LockCallback<?> action) {
			return this.template.async().execute(request, (handle) -> CompletableFuture.supplyAsync(() -> {
				try {
					return action.doInLock(handle);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, actions)).thenAccept((result) -> assertThat(result.wasExecuted()).isTrue());
		}

	}

}
