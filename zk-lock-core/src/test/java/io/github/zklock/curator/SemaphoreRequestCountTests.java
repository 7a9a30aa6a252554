package io.github.zklock.curator;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ZooKeeper requests of a permit's uncontended lease cycle (acquire and release), counted by
 * operation on the client ({@link CountingZooKeeper}) and compared with raw Curator
 * {@code InterProcessSemaphoreV2.acquire} and {@code returnLease} on the same server: equal once the
 * registry has checked the key's number of permits, and a first use of a key that costs what
 * {@code SemaphorePermits} documents (one {@code create} and an {@code exists} for a new key, else
 * a {@code create} refused and a {@code getData}, plus a {@code setData} and an {@code exists} when
 * no number was stored yet). What a
 * refused number costs is checked in {@link SemaphorePermitsTests}.
 */
class SemaphoreRequestCountTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final int PERMITS = 2;

	private final CountingZooKeeper.Counts zkLockCounts = new CountingZooKeeper.Counts();

	private final CountingZooKeeper.Counts rawCounts = new CountingZooKeeper.Counts();

	private CuratorFramework zkLockClient;

	private CuratorFramework rawClient;

	private CuratorLockRegistry registry;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.zkLockClient = zooKeeper.newClient(
				(builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.zkLockCounts)));
		this.rawClient = zooKeeper.newClient(
				(builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.rawCounts)));
		this.registry = new CuratorLockRegistry(this.zkLockClient, ROOT, 100);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
		// The root exists, as in an application that has used a lock before: the first use of a key
		// creates no parent.
		this.rawClient.createContainers(ROOT);
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.registry.close();
	}

	@Test
	void leaseCycleSendsWhatRawCuratorSendsButTheRemovalOfAWatchOnceTheKeyWasUsed() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(this.rawClient, ROOT + this.key + "-raw", PERMITS);
		// Warm-up: the first cycle creates the znodes' parents and, for zk-lock, stores the number.
		zkLockCycle(this.key);
		rawCycle(raw);

		for (int i = 0; i < 3; i++) {
			Map<String, Long> zkLock = zkLockCycle(this.key);
			Map<String, Long> curator = rawCycle(raw);
			// Curator's recipe: the internal lock's create, getChildren and delete, the lease's create,
			// getChildren (with a watch, which Curator removes again) and delete. The watch left here
			// fires with the lease's own delete, without a request.
			assertThat(plus(zkLock, Map.of("removeWatches", 1L))).as("cycle %d: zk-lock %s, raw Curator %s", i, zkLock,
					curator)
				.isEqualTo(curator);
			assertThat(zkLock).as("cycle %d: zk-lock %s", i, zkLock)
				.isEqualTo(Map.of("create", 2L, "getChildren", 2L, "delete", 2L));
		}
	}

	@Test
	void firstUseOfANewKeyCostsNoMoreThanRawCuratorsFirstCycle() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(this.rawClient, ROOT + this.key + "-raw", PERMITS);
		Map<String, Long> zkLockFirst = zkLockCycle(this.key);
		Map<String, Long> rawFirst = rawCycle(raw);
		Map<String, Long> zkLockNext = zkLockCycle(this.key);
		String counts = "zk-lock first " + zkLockFirst + ", raw Curator first " + rawFirst + ", zk-lock next "
				+ zkLockNext;

		// The lock path's create, with the number, finds its parent (the root); the lock path is
		// then known to have no child, so the internal lock's and the lease's parents are created
		// before their creates, sent back to back, none refused (Curator's recipe has each refused,
		// then asks whether each level exists). Then the exists that leaves the number's watch.
		assertThat(zkLockFirst).as(counts)
			.isEqualTo(Map.of("create", 5L, "exists", 1L, "getChildren", 2L, "delete", 2L));
		assertThat(zkLockFirst.get("create")).as(counts).isLessThanOrEqualTo(rawFirst.get("create"));
		assertThat(zkLockFirst.getOrDefault("exists", 0L)).as(counts).isLessThanOrEqualTo(rawFirst.get("exists"));
		assertThat(total(zkLockFirst)).as(counts).isLessThanOrEqualTo(total(rawFirst));
		assertThat(zkLockFirst).as(counts).doesNotContainKeys("getData", "setData");
		assertThat(zkLockFirst.get("create")).as(counts).isGreaterThan(zkLockNext.get("create"));
	}

	@Test
	void firstUseOfAKeyAnotherApplicationNumberedCostsARefusedCreateAndAGetData() throws Exception {
		CuratorLockRegistry other = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		try {
			// Another application made the znodes and stored the number.
			other.tryAcquire(permits(this.key)).orElseThrow().release();
			Map<String, Long> first = zkLockCycle(this.key);
			Map<String, Long> next = zkLockCycle(this.key);

			assertThat(first).as("first %s, next %s", first, next)
				.isEqualTo(plus(next, Map.of("create", 1L, "getData", 1L)));
		}
		finally {
			other.close();
		}
	}

	@Test
	void firstUseOfAKeyRawCuratorMadeCostsARefusedCreateAGetDataASetDataAndAnExists() throws Exception {
		// Raw Curator made the znodes, without a number.
		rawCycle(new InterProcessSemaphoreV2(this.rawClient, ROOT + this.key, PERMITS));
		Map<String, Long> first = zkLockCycle(this.key);
		Map<String, Long> next = zkLockCycle(this.key);

		assertThat(first).as("first %s, next %s", first, next)
			.isEqualTo(plus(next, Map.of("create", 1L, "getData", 1L, "setData", 1L, "exists", 1L)));
	}

	/** One acquire and release of a permit through the registry, and its requests. */
	private Map<String, Long> zkLockCycle(String key) {
		this.zkLockCounts.reset();
		this.registry.tryAcquire(permits(key)).orElseThrow().release();
		return this.zkLockCounts.snapshot();
	}

	/** One acquire and return of a lease of raw Curator, and its requests. */
	private Map<String, Long> rawCycle(InterProcessSemaphoreV2 semaphore) throws Exception {
		this.rawCounts.reset();
		Lease lease = semaphore.acquire(0, TimeUnit.MILLISECONDS);
		assertThat(lease).isNotNull();
		semaphore.returnLease(lease);
		return this.rawCounts.snapshot();
	}

	private static LockTarget permits(String key) {
		return new LockTarget(key, LockMode.EXCLUSIVE, false, PERMITS, Duration.ZERO);
	}

	private static Map<String, Long> plus(Map<String, Long> counts, Map<String, Long> extra) {
		Map<String, Long> sum = new HashMap<>(counts);
		extra.forEach((operation, count) -> sum.merge(operation, count, Long::sum));
		return sum;
	}

	private static long total(Map<String, Long> counts) {
		return counts.values().stream().mapToLong(Long::longValue).sum();
	}

}
