package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import io.micrometer.observation.ObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.LockUpgradeException;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.HeldLock;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock} methods called by several threads of one application on one key, with
 * local hand-off on (the registry's default): a chain of grants riding one lock znode keeps what
 * a grant through ZooKeeper gives. Each grant is its own handle in {@link LockContext}, held while
 * the method runs; the ridden ones (a {@link HeldLock#chainLength() chain length} above 1 in the
 * operators' view) have the fencing token of the grant before it; nested annotated calls re-enter
 * the ridden grant and a WRITE holder reads under it, locally, on the same znode, never observed as
 * a hand-over; a session expiry mid-chain loses the grants of the running link, the commit guard
 * rolls its transaction back and the next thread is granted through ZooKeeper, not handed the dead
 * znode, without waiting for the lost link to return; {@code zk.lock.acquire} carries
 * {@code handoff=local} or {@code handoff=none} on every outcome. Switched off, every grant is made
 * through ZooKeeper. A plain Spring context per test ({@code @EnableDistributedLocks},
 * {@code @EnableTransactionManagement}, H2), on a real ZooKeeper.
 */
class LocalHandoffSpringTests {

	private static final Duration BOUND = Duration.ofSeconds(60);

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private AnnotationConfigApplicationContext context;

	private CuratorLockRegistry registry;

	@BeforeEach
	void start() {
		this.context = new AnnotationConfigApplicationContext(HotKeyApplication.class);
		this.context.getBean(JdbcTemplate.class).execute("create table entries (id varchar(64) primary key)");
		this.registry = this.context.getBean(CuratorLockRegistry.class);
	}

	@AfterEach
	void stop() {
		this.context.close();
	}

	@Test
	void handOffIsOnByDefault() {
		assertThat(this.registry.getLocalHandoff()).isEqualTo(LocalHandoff.DEFAULT);
	}

	@Test
	void everyGrantOfAChainRunsUnderItsOwnHeldHandle() throws Exception {
		HotKeys hotKeys = this.context.getBean(HotKeys.class);
		runThreads(4, 10, (call) -> hotKeys.exclusive("sku-1", call));

		List<Seen> seen = hotKeys.seen();
		assertThat(seen).hasSize(40);
		assertThat(hotKeys.mostInsideAtOnce()).as("callers inside the method at once").isOne();
		assertThat(seen).extracting(Seen::handle).doesNotHaveDuplicates();
		assertThat(seen).allSatisfy((call) -> {
			assertThat(call.state()).as("state of %s while it ran", call.call()).isEqualTo(LockState.HELD);
			assertThat(call.held()).as("LockContext.held() of %s", call.call()).containsExactly(call.handle());
			assertThat(call.handle().path()).isEqualTo("/locks/hot/sku-1");
			assertThat(call.handle().state()).as("state of %s after the call", call.call())
				.isEqualTo(LockState.RELEASED);
		});
		assertThat(seen).as("grants handed over locally").anyMatch(Seen::localHandoff);
		assertChained(seen);
		assertThat(new CuratorLockAdmin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void nestedCallsReenterARiddenExclusiveGrant() throws Exception {
		HotKeys hotKeys = this.context.getBean(HotKeys.class);
		AcquireObservations observations = AcquireObservations.observe(this.context);
		runThreads(4, 8, (call) -> hotKeys.exclusiveThenNested("sku-2", call));

		List<Seen> outer = hotKeys.seen();
		assertThat(outer).hasSize(32).as("grants handed over locally").anyMatch(Seen::localHandoff);
		assertChained(outer);
		assertNestedGrants(hotKeys, outer, observations, LockMode.EXCLUSIVE);
	}

	@Test
	void nestedWriteReentersAndReadRunsUnderARiddenWriteGrant() throws Exception {
		HotKeys hotKeys = this.context.getBean(HotKeys.class);
		AcquireObservations observations = AcquireObservations.observe(this.context);
		runThreads(4, 8, (call) -> hotKeys.writeThenNested("sku-3", call));

		List<Seen> outer = hotKeys.seen();
		assertThat(outer).hasSize(32).as("grants handed over locally").anyMatch(Seen::localHandoff);
		assertThat(outer).allSatisfy((call) -> assertThat(call.handle().mode()).isEqualTo(LockMode.WRITE));
		assertChained(outer);
		assertNestedGrants(hotKeys, outer, observations, LockMode.WRITE, LockMode.READ);
	}

	@Test
	void commitGuardRollsBackARiddenGrantLostMidChainAndTheNextThreadIsGrantedThroughZooKeeper()
			throws Exception {
		Ledger ledger = this.context.getBean(Ledger.class);
		Gates gates = this.context.getBean(Gates.class);
		gates.close("first");
		gates.close("second");
		Call first = Call.start("ledger-first", () -> ledger.record("account-1", "first"));
		gates.awaitArrival("first");
		// Two more threads queue behind the holder, in this order.
		Call second = Call.start("ledger-second", () -> ledger.record("account-1", "second"));
		awaitWaiting(second);
		Call third = Call.start("ledger-third", () -> ledger.record("account-1", "third"));
		awaitWaiting(third);

		gates.open("first");
		assertThat(first.result()).satisfies((seen) -> assertThat(seen.localHandoff()).isFalse());
		gates.awaitArrival("second");
		Seen riding = gates.seen("second");
		assertThat(riding.localHandoff()).as("second grant handed over locally").isTrue();
		assertThat(riding.state()).isEqualTo(LockState.HELD);
		assertThat(riding.token()).isEqualTo(first.result().token());
		assertThat(riding.held()).hasSize(2);

		zooKeeper.expireSession(this.context.getBean(CuratorFramework.class));
		// Every grant of the running link: the ridden one and the one nested in it.
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(riding.held()).allSatisfy(
					(handle) -> assertThat(handle.state()).isEqualTo(LockState.LOST)));

		// The lost turn is taken away from its holder at once: the next thread does not wait for the
		// lost call to return, and is granted through ZooKeeper while that call still runs.
		Seen next = third.result();
		assertThat(second.future()).as("the lost call, held at its gate").isNotDone();
		assertThat(next.localHandoff()).as("the next grant is made through ZooKeeper").isFalse();
		assertThat(next.state()).isEqualTo(LockState.HELD);
		assertThat(next.token()).isGreaterThan(riding.token());

		gates.open("second");
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(second::result)
			.havingCause()
			.isInstanceOf(LockLostException.class)
			.withMessageContaining("/locks/ledger/account-1");
		JdbcTemplate jdbc = this.context.getBean(JdbcTemplate.class);
		assertThat(jdbc.queryForList("select id from entries order by id", String.class))
			.as("committed entries")
			.containsExactly("first", "third");
	}

	@Test
	void acquireObservationIsTaggedLocalForRiddenGrantsAndNoneOtherwise() throws Exception {
		HotKeys hotKeys = this.context.getBean(HotKeys.class);
		AcquireObservations observations = AcquireObservations.observe(this.context);
		runThreads(4, 6, (call) -> hotKeys.exclusive("sku-4", call));

		List<Seen> seen = hotKeys.seen();
		assertThat(seen).hasSize(24).anyMatch(Seen::localHandoff).anyMatch((call) -> !call.localHandoff());
		// Observed on the granted thread before its method runs, so in grant order.
		assertThat(observations.tags()).extracting((tags) -> tags.get("handoff"))
			.containsExactlyElementsOf(seen.stream().map((call) -> call.localHandoff() ? "local" : "none").toList());
		assertThat(observations.tags()).allSatisfy((tags) -> assertThat(tags).containsEntry("outcome", "acquired")
			.containsEntry("name", "/hot/#{#key}")
			.containsEntry("mode", "EXCLUSIVE"));
	}

	@Test
	void everyAcquireOutcomeCarriesTheHandoffTag() throws Exception {
		HotKeys hotKeys = this.context.getBean(HotKeys.class);
		AcquireObservations observations = AcquireObservations.observe(this.context);
		CuratorLockRegistry otherProcess = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		LockHandle busy = otherProcess
			.tryAcquire(new LockTarget("/hot/busy", LockMode.EXCLUSIVE, true, 0, Duration.ZERO))
			.orElseThrow();
		try {
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> hotKeys.once("busy"));
			assertThat(hotKeys.onceOrSkip("busy")).isNull();
		}
		finally {
			busy.release();
			otherProcess.close();
		}
		assertThatExceptionOfType(LockUpgradeException.class).isThrownBy(() -> hotKeys.readThenWrite("sku-5"));
		hotKeys.exclusive("sku-5", "alone");

		assertThat(observations.tags()).extracting((tags) -> tags.get("outcome"))
			.containsExactly("timeout", "skipped", "acquired", "error", "acquired");
		// One tag set for every outcome: a meter registry such as Prometheus's needs it.
		assertThat(observations.tags()).allSatisfy(
				(tags) -> assertThat(tags.keySet()).containsExactlyInAnyOrder("name", "mode", "outcome", "handoff"));
		assertThat(observations.tags()).extracting((tags) -> tags.get("handoff")).containsOnly("none");
	}

	@Test
	void everyGrantIsMadeThroughZooKeeperWhenHandOffIsOff() throws Exception {
		this.registry.setLocalHandoff(LocalHandoff.DISABLED);
		HotKeys hotKeys = this.context.getBean(HotKeys.class);
		AcquireObservations observations = AcquireObservations.observe(this.context);
		runThreads(4, 6, (call) -> hotKeys.exclusive("sku-6", call));

		List<Seen> seen = hotKeys.seen();
		assertThat(seen).hasSize(24).noneMatch(Seen::localHandoff);
		assertThat(seen).allSatisfy((call) -> assertThat(call.chainLength()).isOne());
		assertChained(seen);
		assertThat(observations.tags()).extracting((tags) -> tags.get("handoff")).hasSize(24).containsOnly("none");
	}

	/**
	 * Check the grants of one key, in grant order: a ridden grant has the token of the grant before
	 * it and extends its chain; a grant through ZooKeeper has a higher token and starts a chain.
	 */
	private static void assertChained(List<Seen> grants) {
		for (int i = 0; i < grants.size(); i++) {
			Seen grant = grants.get(i);
			if (i == 0) {
				assertThat(grant.localHandoff()).as("first grant handed over").isFalse();
				assertThat(grant.chainLength()).isOne();
				continue;
			}
			Seen before = grants.get(i - 1);
			if (grant.localHandoff()) {
				assertThat(grant.token()).as("token of %s, ridden after %s", grant.call(), before.call())
					.isEqualTo(before.token());
				assertThat(grant.chainLength()).as("chain length of %s", grant.call())
					.isEqualTo(before.chainLength() + 1);
			}
			else {
				assertThat(grant.token()).as("token of %s, granted through ZooKeeper after %s", grant.call(),
						before.call())
					.isGreaterThan(before.token());
				assertThat(grant.chainLength()).as("chain length of %s", grant.call()).isOne();
			}
		}
	}

	/**
	 * Check the grants nested in each outer grant: each its own held handle, innermost in
	 * {@link LockContext}, above the outer one, on the outer grant's znode (its token), never
	 * observed as a hand-over. One grant holds the key at a time, and each acquisition is observed
	 * while its grant holds it, so the observations come in grant order: each outer grant's, then
	 * its nested ones'.
	 */
	private static void assertNestedGrants(HotKeys hotKeys, List<Seen> outer, AcquireObservations observations,
			LockMode... nestedModes) {
		List<String> expectedHandoffs = new ArrayList<>();
		for (Seen call : outer) {
			List<Seen> nested = hotKeys.nestedIn(call.call());
			assertThat(nested).as("grants nested in %s", call.call()).hasSize(nestedModes.length);
			expectedHandoffs.add(call.localHandoff() ? "local" : "none");
			for (int i = 0; i < nestedModes.length; i++) {
				Seen inner = nested.get(i);
				assertThat(inner.handle()).isNotSameAs(call.handle());
				assertThat(inner.handle().mode()).isEqualTo(nestedModes[i]);
				assertThat(inner.state()).as("nested %s in %s", nestedModes[i], call.call()).isEqualTo(LockState.HELD);
				assertThat(inner.held()).containsExactly(call.handle(), inner.handle());
				// A re-entry, and a READ under WRITE, ride the outer grant's znode.
				assertThat(inner.token()).as("token of nested %s in %s", nestedModes[i], call.call())
					.isEqualTo(call.token());
				expectedHandoffs.add("none");
			}
		}
		assertThat(observations.tags()).extracting((tags) -> tags.get("handoff"))
			.as("handoff tags of the outer grants, each followed by its nested grants'")
			.containsExactlyElementsOf(expectedHandoffs);
	}

	/**
	 * Wait until a thread waits for a lock: listed as waiting and parked (in the local queue).
	 */
	private void awaitWaiting(Call call) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> new CuratorLockAdmin(this.registry).describeWaitingLocks()
				.stream()
				.anyMatch((waiting) -> waiting.waiter().equals(call.thread().getName()))
					&& (call.thread().getState() == Thread.State.WAITING
							|| call.thread().getState() == Thread.State.TIMED_WAITING));
	}

	/**
	 * Run {@code threads} threads together, each making {@code calls} calls named
	 * {@code "t<thread>-<call>"}, within {@link #BOUND}.
	 */
	private static void runThreads(int threads, int calls, CallTask task) throws Exception {
		List<Callable<?>> tasks = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			String thread = "t" + t;
			tasks.add(() -> {
				for (int i = 0; i < calls; i++) {
					task.call(thread + "-" + i);
				}
				return null;
			});
		}
		LockApplications.runConcurrently(BOUND, tasks.toArray(Callable<?>[]::new));
	}

	@FunctionalInterface
	interface CallTask {

		void call(String call) throws Exception;

	}

	/**
	 * What a call saw of its innermost grant while it ran: the handle and its state, its fencing
	 * token and chain length, and every grant of the thread ({@link LockContext#held()}).
	 */
	record Seen(String call, LockHandle handle, LockState state, long token, int chainLength,
			List<LockHandle> held) {

		/**
		 * What an outermost grant sees, with its chain length from the registry's snapshot (the
		 * operators' view, {@link CuratorLockAdmin#describeHeldLocks()}).
		 */
		static Seen outermost(String call, CuratorLockRegistry registry) {
			LockHandle handle = LockContext.require();
			List<HeldLock> snapshots = new CuratorLockAdmin(registry).describeHeldLocks()
				.stream()
				.filter((held) -> held.holder().equals(Thread.currentThread().getName()))
				.toList();
			assertThat(snapshots).as("grants of %s", call).singleElement();
			return new Seen(call, handle, handle.state(), handle.fencingToken(), snapshots.get(0).chainLength(),
					LockContext.held());
		}

		/** What a nested grant sees (no chain length: 0). */
		static Seen now(String call) {
			LockHandle handle = LockContext.require();
			return new Seen(call, handle, handle.state(), handle.fencingToken(), 0, LockContext.held());
		}

		/**
		 * Whether an outermost grant was handed over locally: its znode served grants before it
		 * (a chain length above 1); a grant through ZooKeeper starts a chain.
		 */
		boolean localHandoff() {
			return this.chainLength > 1;
		}

		@Override
		public String toString() {
			return this.call + (localHandoff() ? " ridden" : " through ZooKeeper") + " token " + this.token
					+ " chain length " + this.chainLength + " " + this.state;
		}

	}

	/** A call in a thread of its own, named, so that a test can see it wait. */
	record Call(Thread thread, CompletableFuture<Seen> future) {

		static Call start(String name, Callable<Seen> task) {
			CompletableFuture<Seen> future = new CompletableFuture<>();
			Thread thread = new Thread(() -> {
				try {
					future.complete(task.call());
				}
				catch (Throwable ex) {
					future.completeExceptionally(ex);
				}
			}, name);
			thread.start();
			return new Call(thread, future);
		}

		Seen result() throws Exception {
			return this.future.get(30, TimeUnit.SECONDS);
		}

	}

	/**
	 * Holds named calls inside their lock until the test lets them go; calls without a closed gate
	 * pass at once.
	 */
	static class Gates {

		private final Map<String, CountDownLatch> arrived = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> open = new ConcurrentHashMap<>();

		private final Map<String, Seen> seen = new ConcurrentHashMap<>();

		void close(String call) {
			this.arrived.put(call, new CountDownLatch(1));
			this.open.put(call, new CountDownLatch(1));
		}

		void pass(Seen seen) throws InterruptedException {
			this.seen.put(seen.call(), seen);
			CountDownLatch arrived = this.arrived.get(seen.call());
			if (arrived == null) {
				return;
			}
			arrived.countDown();
			assertThat(this.open.get(seen.call()).await(20, TimeUnit.SECONDS)).as("gate of %s opened", seen.call())
				.isTrue();
		}

		void awaitArrival(String call) throws InterruptedException {
			assertThat(this.arrived.get(call).await(20, TimeUnit.SECONDS)).as("%s arrived", call).isTrue();
		}

		void open(String call) {
			this.open.get(call).countDown();
		}

		Seen seen(String call) {
			return this.seen.get(call);
		}

	}

	/**
	 * A plain Spring application with a database, on its own Curator client, with the lock beans
	 * (hand-off as the registry's default) and the test's services.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@EnableTransactionManagement
	static class HotKeyApplication {

		@Bean(destroyMethod = "shutdown")
		EmbeddedDatabase dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		JdbcTemplate jdbcTemplate(DataSource dataSource) {
			return new JdbcTemplate(dataSource);
		}

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient();
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		AcquireObservations acquireObservations() {
			return new AcquireObservations();
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry, AcquireObservations observations) {
			ObservationRegistry observationRegistry = ObservationRegistry.create();
			observationRegistry.observationConfig().observationHandler(observations);
			return LockTemplate.builder(lockRegistry)
				.defaultWaitTime(Duration.ofSeconds(10))
				.observationRegistry(observationRegistry)
				.build();
		}

		@Bean
		Gates gates() {
			return new Gates();
		}

		@Bean
		Nested nested(Gates gates) {
			return new Nested(gates);
		}

		@Bean
		HotKeys hotKeys(CuratorLockRegistry registry, Nested nested) {
			return new HotKeys(registry, nested);
		}

		@Bean
		Ledger ledger(JdbcTemplate jdbc, CuratorLockRegistry registry, Nested nested) {
			return new Ledger(jdbc, registry, nested);
		}

	}

	/** Methods many threads call on one key; each records what it saw. */
	static class HotKeys {

		private final Queue<Seen> seen = new ConcurrentLinkedQueue<>();

		private final AtomicInteger inside = new AtomicInteger();

		private final AtomicInteger mostInside = new AtomicInteger();

		private final CuratorLockRegistry registry;

		private final Nested nested;

		HotKeys(CuratorLockRegistry registry, Nested nested) {
			this.registry = registry;
			this.nested = nested;
		}

		@DistributedLock(path = "/hot/#{#key}")
		public void exclusive(String key, String call) throws InterruptedException {
			enter(call);
			try {
				// Work under the lock, long enough for the other threads to queue behind it.
				Thread.sleep(1);
			}
			finally {
				this.inside.decrementAndGet();
			}
		}

		@DistributedLock(path = "/hot/#{#key}")
		public void exclusiveThenNested(String key, String call) throws Exception {
			enter(call);
			try {
				this.nested.exclusive(key, call);
			}
			finally {
				this.inside.decrementAndGet();
			}
		}

		@DistributedLock(path = "/hot-rw/#{#key}", mode = LockMode.WRITE)
		public void writeThenNested(String key, String call) throws Exception {
			enter(call);
			try {
				this.nested.write(key, call);
				this.nested.read(key, call);
			}
			finally {
				this.inside.decrementAndGet();
			}
		}

		@DistributedLock(path = "/hot/#{#key}", waitTime = "0")
		public void once(String key) {
		}

		@DistributedLock(path = "/hot/#{#key}", waitTime = "0", onBusy = OnBusy.SKIP)
		public String onceOrSkip(String key) {
			return "ran";
		}

		@DistributedLock(path = "/hot-rw/#{#key}", mode = LockMode.READ)
		public void readThenWrite(String key) throws Exception {
			this.nested.write(key, "upgrade");
		}

		private void enter(String call) {
			this.mostInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
			this.seen.add(Seen.outermost(call, this.registry));
		}

		/** What each call saw, in grant order (added while the lock was held). */
		public List<Seen> seen() {
			return List.copyOf(this.seen);
		}

		public int mostInsideAtOnce() {
			return this.mostInside.get();
		}

		public List<Seen> nestedIn(String call) {
			return this.nested.seen(call);
		}

	}

	/**
	 * Nested calls of a lock the caller holds (another bean: a call through the proxy), waiting
	 * not at all: a nested grant that went to ZooKeeper behind its own caller would fail.
	 */
	static class Nested {

		private final Map<String, Queue<Seen>> seen = new ConcurrentHashMap<>();

		private final Gates gates;

		Nested(Gates gates) {
			this.gates = gates;
		}

		@DistributedLock(path = "/hot/#{#key}", waitTime = "0")
		public void exclusive(String key, String call) {
			record(call);
		}

		@DistributedLock(path = "/hot-rw/#{#key}", mode = LockMode.WRITE, waitTime = "0")
		public void write(String key, String call) {
			record(call);
		}

		@DistributedLock(path = "/hot-rw/#{#key}", mode = LockMode.READ, waitTime = "0")
		public void read(String key, String call) {
			record(call);
		}

		/**
		 * Passes the call's gate while holding the caller's grant and its own: what the gate
		 * records is the caller's grant with both grants as {@link Seen#held()}.
		 */
		@DistributedLock(path = "/ledger/#{#key}", waitTime = "0")
		public void gated(String key, Seen outer) throws InterruptedException {
			this.gates.pass(new Seen(outer.call(), outer.handle(), outer.state(), outer.token(), outer.chainLength(),
					LockContext.held()));
		}

		private void record(String call) {
			this.seen.computeIfAbsent(call, (key) -> new ConcurrentLinkedQueue<>()).add(Seen.now(call));
		}

		public List<Seen> seen(String call) {
			return List.copyOf(this.seen.getOrDefault(call, new ConcurrentLinkedQueue<>()));
		}

	}

	/** A transactional, locked write whose call can be held inside the lock by a gate. */
	static class Ledger {

		private final JdbcTemplate jdbc;

		private final CuratorLockRegistry registry;

		private final Nested nested;

		Ledger(JdbcTemplate jdbc, CuratorLockRegistry registry, Nested nested) {
			this.jdbc = jdbc;
			this.registry = registry;
			this.nested = nested;
		}

		@DistributedLock(path = "/ledger/#{#key}", waitTime = "30s")
		@Transactional
		public Seen record(String key, String call) throws InterruptedException {
			this.jdbc.update("insert into entries (id) values (?)", call);
			Seen seen = Seen.outermost(call, this.registry);
			this.nested.gated(key, seen);
			return seen;
		}

	}

}
