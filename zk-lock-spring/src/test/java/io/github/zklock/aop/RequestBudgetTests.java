package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockContext;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ZooKeeper requests of one uncontended lock cycle through {@code @DistributedLock}, counted
 * at the ZooKeeper client: the annotation, SpEL and the registry add nothing to what the Curator
 * recipe sends (create, getChildren, delete once the parent znode exists), and the fencing token
 * of an EXCLUSIVE grant costs nothing (the create returns it). A two-key multi-lock costs two
 * single-key cycles (one when both keys are the same), a {@code @DistributedSemaphore} cycle what
 * the template's own lease cycle costs. The uncontended cycles are the same with local hand-off on
 * (the registry's default) and off. Under contention within one application, hand-off serves the
 * waiting threads on the holder's znode: a handful of requests for the whole run instead of some
 * per grant; with hand-off off, the threads wait in the application's local queue, which queues
 * one znode at a time, so that each grant costs one uncontended cycle. A never-seen key whose
 * parent znodes are missing (a cold key) costs a few round trips: the missing parents, the lock
 * znode's create and the listing sent back to back, fewer requests and round trips than the raw
 * Curator recipe of the same kind, which creates the parents one by one after its create fails; the
 * key's next cycles are the ordinary ones. A plain Spring context per test with
 * {@code @EnableDistributedLocks}, on a real ZooKeeper.
 */
class RequestBudgetTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private static final int CONTENDED_THREADS = 8;

	private static final int CONTENDED_CYCLES = 25;

	private static final int CONTENDED_GRANTS = CONTENDED_THREADS * CONTENDED_CYCLES;

	/**
	 * Round trips (requests that waited for an answer before they were sent, see
	 * {@link CountingZooKeeper.Counts#roundTrips()}) of one uncontended EXCLUSIVE cycle on a
	 * never-seen key whose parent znodes are missing, at most.
	 */
	private static final long COLD_EXCLUSIVE_ROUND_TRIPS = 3;

	/** Requests of one uncontended EXCLUSIVE cycle on a never-seen key whose parents are missing, at most. */
	private static final long COLD_EXCLUSIVE_REQUESTS = 7;

	/** Cold cycles measured per kind, each on a key of its own. */
	private static final int COLD_CYCLES = 3;

	/** Tells the cold keys of the whole class apart: each is locked once, on the class's server. */
	private static final AtomicInteger coldKeys = new AtomicInteger();

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void exclusiveCycleIsThreeRequestsTwoWrites(boolean handoff) {
		assertCycle(handoff, (service) -> service.exclusive("sku-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void readCycleIsThreeRequestsTwoWrites(boolean handoff) {
		assertCycle(handoff, (service) -> service.read("sku-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void writeCycleIsThreeRequestsTwoWrites(boolean handoff) {
		assertCycle(handoff, (service) -> service.write("sku-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void fencingTokenOfAnExclusiveGrantCostsNoRequest(boolean handoff) {
		// The create returns the znode's Stat, whose czxid is the token: no exists.
		assertCycle(handoff, (service) -> service.exclusiveWithToken("sku-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void nestedReentrantCallAddsNoRequest(boolean handoff) {
		assertCycle(handoff, (service) -> service.nested("sku-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void twoKeyCycleIsTwiceTheSingleKeyCycle(boolean handoff) {
		assertCycle(handoff, (service) -> service.transfer("account-1", "account-2"), 6, 4,
				Map.of("create", 2L, "getChildren", 2L, "delete", 2L));
	}

	@ParameterizedTest(name = "local hand-off enabled: {0}")
	@ValueSource(booleans = { true, false })
	void sameKeyTwiceIsOneSingleKeyCycle(boolean handoff) {
		assertCycle(handoff, (service) -> service.transfer("account-1", "account-1"), 3, 2,
				Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void semaphoreCycleIsTheTemplatesLeaseCycle() {
		try (AnnotationConfigApplicationContext context = context(Duration.ofSeconds(5), LocalHandoff.DEFAULT)) {
			LockTemplate locks = context.getBean(LockTemplate.class);
			Budgeted service = context.getBean(Budgeted.class);
			Map<String, Long> leaseCycle = steadyCycle(
					() -> locks.acquire(LockRequest.permit("/budget/semaphore/by-template", 2)).release());
			Map<String, Long> annotatedCycle = steadyCycle(() -> service.permit("by-annotation"));
			// The permits are checked once per key (first cycle); then a lease of Curator's
			// InterProcessSemaphoreV2 as is: its inner mutex and the lease znode, each created,
			// listed and deleted, and the watch on the leases removed.
			assertThat(annotatedCycle).isEqualTo(leaseCycle);
		}
	}

	@Test
	void contendedGrantsWithinOneApplicationRideOneZnode() throws Exception {
		Map<String, Long> byOperation = contend(LocalHandoff.DEFAULT);
		// No thread of the application queues in ZooKeeper behind another: the waiting threads are
		// handed the holder's znode. A chain costs one cycle (create, getChildren, delete) and one
		// getChildren at its first hand-off (is another participant waiting?); chains end only
		// when no thread waits, here rarely.
		assertThat(byOperation.getOrDefault("getData", 0L)).as("%s", byOperation).isZero();
		assertThat(counts.total() / (double) CONTENDED_GRANTS).as("requests per grant %s", byOperation)
			.isLessThan(1.0);
	}

	@Test
	void contendedGrantsQueueOneZnodeAtATimeWithoutHandOff() throws Exception {
		Map<String, Long> byOperation = contend(LocalHandoff.DISABLED);
		// The threads wait locally; the application queues one znode at a time in ZooKeeper, so no
		// thread watches a predecessor of its own application (getData), let alone is woken by
		// another thread's delete: each grant is one cycle, create + getChildren + delete.
		assertThat(byOperation.getOrDefault("getData", 0L)).as("%s", byOperation).isZero();
		assertThat(byOperation).as("one znode per grant").containsEntry("create", (long) CONTENDED_GRANTS);
		// Counted while the threads ran (the context's close sends requests of its own).
		long requests = byOperation.values().stream().mapToLong(Long::longValue).sum();
		assertThat(requests / (double) CONTENDED_GRANTS).as("requests per grant %s", byOperation)
			.isLessThanOrEqualTo(3.0);
	}

	@Test
	void exclusiveCycleOnAColdKeySendsItsRequestsInAFewRoundTrips() throws Exception {
		try (AnnotationConfigApplicationContext context = context(Duration.ofSeconds(5), LocalHandoff.DEFAULT)) {
			LockTemplate locks = context.getBean(LockTemplate.class);
			topsExist();
			List<String> roundTrips = new ArrayList<>();
			long fewest = Long.MAX_VALUE;
			for (int i = 0; i < COLD_CYCLES; i++) {
				String key = coldName("exclusive") + "/k";
				counts.reset();
				locks.execute(key, LockMode.EXCLUSIVE, null, (handle) -> null);
				assertThat(counts.total()).as("requests of %s: %s", key, counts)
					.isLessThanOrEqualTo(COLD_EXCLUSIVE_REQUESTS);
				roundTrips.add(key + ": " + counts.roundTrips() + " " + counts);
				fewest = Math.min(fewest, counts.roundTrips());
				// The first create and its listing leave from the calling thread, one after the other:
				// when that thread is descheduled between the two sends long enough for the create's
				// answer to arrive, the listing counts as a round trip of its own. One more, never two.
				assertThat(counts.roundTrips()).as("round trips of %s: %s", key, counts)
					.isLessThanOrEqualTo(COLD_EXCLUSIVE_ROUND_TRIPS + 1);
			}
			assertThat(fewest).as("round trips, fewest of %s", roundTrips).isLessThanOrEqualTo(COLD_EXCLUSIVE_ROUND_TRIPS);
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(ColdKind.class)
	void coldKeyCostsFewerRequestsAndRoundTripsThanTheRawRecipe(ColdKind kind) throws Exception {
		try (AnnotationConfigApplicationContext context = context(Duration.ofSeconds(5), LocalHandoff.DEFAULT)) {
			LockTemplate locks = context.getBean(LockTemplate.class);
			CuratorFramework client = context.getBean(CuratorFramework.class);
			topsExist();
			List<String> ours = new ArrayList<>();
			List<String> raw = new ArrayList<>();
			long oursMostRequests = 0;
			long oursMostRoundTrips = 0;
			long rawFewestRequests = Long.MAX_VALUE;
			long rawFewestRoundTrips = Long.MAX_VALUE;
			for (int i = 0; i < COLD_CYCLES; i++) {
				String name = coldName(kind.name().toLowerCase(Locale.ROOT));
				counts.reset();
				kind.ours.run(locks, name);
				ours.add(counts.total() + " requests, " + counts.roundTrips() + " round trips " + counts);
				oursMostRequests = Math.max(oursMostRequests, counts.total());
				oursMostRoundTrips = Math.max(oursMostRoundTrips, counts.roundTrips());
				counts.reset();
				kind.raw.run(client, "/raw" + name);
				raw.add(counts.total() + " requests, " + counts.roundTrips() + " round trips " + counts);
				rawFewestRequests = Math.min(rawFewestRequests, counts.total());
				rawFewestRoundTrips = Math.min(rawFewestRoundTrips, counts.roundTrips());
			}
			assertThat(oursMostRoundTrips).as("round trips, ours %s, raw Curator %s", ours, raw)
				.isLessThan(rawFewestRoundTrips);
			assertThat(oursMostRequests).as("requests, ours %s, raw Curator %s", ours, raw)
				.isLessThan(rawFewestRequests);
		}
	}

	@Test
	void exclusiveCycleAfterTheColdOneIsThreeRequestsTwoWrites() throws Exception {
		try (AnnotationConfigApplicationContext context = context(Duration.ofSeconds(5), LocalHandoff.DEFAULT)) {
			LockTemplate locks = context.getBean(LockTemplate.class);
			topsExist();
			String key = coldName("warm") + "/k";
			locks.execute(key, LockMode.EXCLUSIVE, null, (handle) -> null);
			for (int i = 0; i < 3; i++) {
				counts.reset();
				locks.execute(key, LockMode.EXCLUSIVE, null, (handle) -> null);
				assertThat(counts.total()).as("requests %s", counts).isEqualTo(3);
				assertThat(counts.writes()).as("writes %s", counts).isEqualTo(2);
				assertThat(counts.snapshot()).isEqualTo(Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
			}
		}
	}

	/**
	 * The kinds other than the synchronous EXCLUSIVE one, each with its cycle through the template
	 * on never-seen keys below the registry's root and the raw Curator recipe of the same kind on
	 * paths of the same depth below {@code /raw}: {@code name + "/k"}, or two such keys for the
	 * multi-lock.
	 */
	enum ColdKind {

		READ((locks, name) -> locks.execute(name + "/k", LockMode.READ, null, (handle) -> null),
				(client, name) -> cycle(new InterProcessReadWriteLock(client, name + "/k").readLock())),

		WRITE((locks, name) -> locks.execute(name + "/k", LockMode.WRITE, null, (handle) -> null),
				(client, name) -> cycle(new InterProcessReadWriteLock(client, name + "/k").writeLock())),

		EXCLUSIVE_NON_REENTRANT(
				(locks, name) -> locks.execute(LockRequest.of(name + "/k").withReentrant(false), (handle) -> null),
				(client, name) -> cycle(new InterProcessSemaphoreMutex(client, name + "/k"))),

		PERMIT((locks, name) -> locks.execute(LockRequest.permit(name + "/k", 2), (handle) -> null),
				(client, name) -> {
					InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, name + "/k", 2);
					semaphore.returnLease(semaphore.acquire(10, TimeUnit.SECONDS));
				}),

		EXCLUSIVE_MULTI_2((locks, name) -> locks.execute(LockRequest.of(List.of(name + "-a/k", name + "-b/k")),
				(handle) -> null),
				(client, name) -> cycle(new InterProcessMultiLock(client, List.of(name + "-a/k", name + "-b/k")))),

		EXCLUSIVE_ASYNC((locks, name) -> locks
			.executeAsync(name + "/k", LockMode.EXCLUSIVE, null, (handle) -> CompletableFuture.completedFuture(null))
			.get(10, TimeUnit.SECONDS), (client, name) -> cycle(new InterProcessMutex(client, name + "/k")));

		private final OursCycle ours;

		private final RawCycle raw;

		ColdKind(OursCycle ours, RawCycle raw) {
			this.ours = ours;
			this.raw = raw;
		}

		private static void cycle(InterProcessLock lock) throws Exception {
			assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("acquired").isTrue();
			lock.release();
		}

	}

	@FunctionalInterface
	interface OursCycle {

		void run(LockTemplate locks, String name) throws Exception;

	}

	@FunctionalInterface
	interface RawCycle {

		void run(CuratorFramework client, String name) throws Exception;

	}

	/** Return a key name never used on the class's server: {@code /cold-<kind>-<n>}. */
	private static String coldName(String kind) {
		return "/cold-" + kind.replace('_', '-') + "-" + coldKeys.incrementAndGet();
	}

	/**
	 * Make the registry's root and the raw recipes' top exist, as persistent znodes: a cold key's
	 * parents are the ones below them.
	 */
	private static void topsExist() throws Exception {
		CuratorFramework plain = zooKeeper.newClient();
		for (String top : List.of("/locks", "/raw")) {
			if (plain.checkExists().forPath(top) == null) {
				plain.create().forPath(top);
			}
		}
	}

	/**
	 * Run {@value #CONTENDED_THREADS} threads taking one key {@value #CONTENDED_CYCLES} times each,
	 * holding it briefly so that the others queue up behind the holder, and return the requests.
	 */
	private static Map<String, Long> contend(LocalHandoff localHandoff) throws Exception {
		try (AnnotationConfigApplicationContext context = context(Duration.ofSeconds(30), localHandoff)) {
			LockTemplate locks = context.getBean(LockTemplate.class);
			locks.execute("/budget/contended", (handle) -> null);
			counts.reset();
			ExecutorService pool = Executors.newFixedThreadPool(CONTENDED_THREADS);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < CONTENDED_THREADS; t++) {
					workers.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < CONTENDED_CYCLES; i++) {
							locks.execute("/budget/contended", (handle) -> {
								Thread.sleep(1);
								return null;
							});
						}
						return null;
					}));
				}
				start.countDown();
				for (Future<?> worker : workers) {
					worker.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				pool.shutdownNow();
			}
			return counts.snapshot();
		}
	}

	private void assertCycle(boolean handoff, Consumer<Budgeted> cycle, long requests, long writes,
			Map<String, Long> byOperation) {
		try (AnnotationConfigApplicationContext context = context(Duration.ofSeconds(5),
				handoff ? LocalHandoff.DEFAULT : LocalHandoff.DISABLED)) {
			Budgeted service = context.getBean(Budgeted.class);
			// The first cycle creates the parent znodes (containers); measure the next ones.
			cycle.accept(service);
			for (int i = 0; i < 3; i++) {
				counts.reset();
				cycle.accept(service);
				assertThat(counts.total()).as("requests %s", counts).isEqualTo(requests);
				assertThat(counts.writes()).as("writes %s", counts).isEqualTo(writes);
				assertThat(counts.snapshot()).isEqualTo(byOperation);
			}
		}
	}

	/**
	 * Return the requests of one cycle after the first (which creates the parent znodes and, for a
	 * semaphore, stores its permits with the key), checking that it is the same three times.
	 */
	private static Map<String, Long> steadyCycle(Runnable cycle) {
		cycle.run();
		counts.reset();
		cycle.run();
		Map<String, Long> first = counts.snapshot();
		for (int i = 0; i < 2; i++) {
			counts.reset();
			cycle.run();
			assertThat(counts.snapshot()).isEqualTo(first);
		}
		return first;
	}

	/**
	 * Start a context whose template waits {@code defaultWaitTime} by default, as
	 * {@code zk.lock.default-wait-time} did in the Boot version, and whose registry hands locks
	 * over as {@code zk.lock.local-handoff.*} would set.
	 */
	private static AnnotationConfigApplicationContext context(Duration defaultWaitTime, LocalHandoff localHandoff) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.registerBean(LocalHandoff.class, () -> localHandoff);
		context.register(CountingClient.class);
		context.registerBean(LockTemplate.class,
				() -> new LockTemplate(context.getBean(LockRegistry.class), defaultWaitTime));
		context.refresh();
		return context;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class CountingClient {

		@Bean
		CuratorFramework countingCuratorFramework() throws InterruptedException {
			return zooKeeper.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(counts)));
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client, LocalHandoff localHandoff) {
			CuratorLockRegistry registry = new CuratorLockRegistry(client, "/locks", 10_000);
			registry.setLocalHandoff(localHandoff);
			return registry;
		}

		@Bean
		Budgeted budgeted(ObjectProvider<LockTemplate> locks) {
			return new Budgeted(locks);
		}

	}

	static class Budgeted {

		private final ObjectProvider<LockTemplate> locks;

		Budgeted(ObjectProvider<LockTemplate> locks) {
			this.locks = locks;
		}

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public void exclusive(String sku) {
		}

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public long exclusiveWithToken(String sku) {
			return LockContext.require().fencingToken();
		}

		@DistributedLock(path = "/budget/rw/#{#sku}", mode = LockMode.READ)
		public void read(String sku) {
		}

		@DistributedLock(path = "/budget/rw/#{#sku}", mode = LockMode.WRITE)
		public void write(String sku) {
		}

		@DistributedLock(path = { "/budget/account/#{#from}", "/budget/account/#{#to}" })
		public void transfer(String from, String to) {
		}

		@DistributedSemaphore(path = "/budget/semaphore/#{#sku}", permits = 2)
		public void permit(String sku) {
		}

		@DistributedLock(path = "/budget/exclusive/#{#sku}")
		public void nested(String sku) {
			// Re-enters the lock this thread holds: Curator counts it locally.
			this.locks.getObject().execute("/budget/exclusive/" + sku, (handle) -> null);
		}

	}

}
