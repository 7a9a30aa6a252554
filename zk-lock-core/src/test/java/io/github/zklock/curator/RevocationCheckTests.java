package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockTemplate;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for the holder's side of revocation (the sweep of {@link CuratorLockRegistry}'s
 * revocation check, see {@link Revocations}) on a real ZooKeeper: what it costs in requests
 * (nothing for grants released within the check interval, for every lock kind; one getData with
 * a watch for a znode held longer, however many sweeps pass, and no loss when it is then
 * released normally), that a local hand-off chain of short grants is revoked by the age of its
 * znode, and that its thread stops when the registry closes.
 */
class RevocationCheckTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration CHECK_INTERVAL = Duration.ofMillis(100);

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** The wait of the chain's requests: a key that stalls longer fails the load. */
	private static final Duration PROMPTLY = Duration.ofSeconds(3);

	private static final int CYCLES = 10;

	private final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private final List<LockStateEvent> events = new CopyOnWriteArrayList<>();

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate locks;

	private String key;

	@BeforeEach
	void start(TestInfo testInfo) throws Exception {
		this.client = zooKeeper
			.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.counts)));
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
		this.registry.addLockStateListener(this.events::add);
		this.locks = new LockTemplate(this.registry, BOUND);
		this.key = "/check/" + testInfo.getTestMethod().orElseThrow().getName()
				+ testInfo.getDisplayName().replaceAll("[^A-Za-z0-9]", "");
	}

	@AfterEach
	void stop() {
		this.registry.close();
	}

	@ParameterizedTest
	@ValueSource(strings = { "EXCLUSIVE", "READ", "WRITE", "NON_REENTRANT", "PERMIT" })
	void grantsReleasedWithinTheIntervalSendTheSameRequestsAsWithoutTheCheck(String kind) {
		this.registry.setRevocationCheckInterval(Duration.ZERO);
		Map<String, Long> unchecked = cycles(request(kind, this.key + "/unchecked"));
		this.registry.setRevocationCheckInterval(CuratorLockRegistry.DEFAULT_REVOCATION_CHECK_INTERVAL);
		Map<String, Long> checked = cycles(request(kind, this.key + "/checked"));

		assertThat(checked).isEqualTo(unchecked);
		if (kind.equals("EXCLUSIVE")) {
			assertThat(checked).as("create, getChildren, delete per cycle")
				.isEqualTo(Map.of("create", (long) CYCLES, "getChildren", (long) CYCLES, "delete", (long) CYCLES));
		}
		assertThat(this.events).isEmpty();
	}

	@Test
	void znodeHeldLongerThanTheIntervalIsWatchedWithOneRequest() {
		this.registry.setRevocationCheckInterval(CHECK_INTERVAL);
		LockRequest request = request("EXCLUSIVE", this.key);
		this.locks.acquire(request).release();
		this.counts.reset();

		LockHandle held = this.locks.acquire(request);
		await().atMost(BOUND).until(() -> getData() == 1);
		await().during(CHECK_INTERVAL.multipliedBy(5)).atMost(BOUND).until(() -> getData() == 1);
		held.release();

		assertThat(held.state()).isEqualTo(LockState.RELEASED);
		assertThat(this.counts.snapshot())
			.isEqualTo(Map.of("create", 1L, "getChildren", 1L, "getData", 1L, "delete", 1L));
		// The watch tells of the release's own delete: neither a loss nor a request follows.
		await().during(CHECK_INTERVAL.multipliedBy(3))
			.atMost(BOUND)
			.until(() -> this.events.isEmpty() && this.counts.total() == 4);
	}

	@Test
	void chainOfShortGrantsIsRevokedByTheAgeOfItsZnode() throws Exception {
		this.registry.setRevocationCheckInterval(CHECK_INTERVAL);
		CuratorLockRegistry revoker = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		ChainLoad.Section section = new ChainLoad.Section();
		// Each grant is held for a fifth of the interval, the chain's znode for longer. A wait of a
		// few seconds fails the load if the key stalls after the revocation. In relay, so that the
		// chain's znode never ends by itself for want of a waiter (a thread descheduled between two
		// of its grants): only then is a grant sure to ride it when the revocation arrives.
		try (ChainLoad load = ChainLoad.startRelay(this.registry,
				new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, PROMPTLY), CHECK_INTERVAL.dividedBy(5),
				section)) {
			await().atMost(BOUND).until(() -> chainLength() >= 10);
			String revokedNode = admin(this.registry).describeHeldLocks().get(0).node();
			int grantsBeforeRevocation = load.count();

			// Shorter than the half session timeout after which the chain would end anyway: the
			// znode goes because its own application, watching it by its age, deleted it.
			Revocation revocation = admin(revoker).revoke(this.key, RevocationMode.REQUEST, Duration.ofSeconds(2));

			assertThat(revocation.released()).isTrue();
			assertThat(revocation.holders()).singleElement()
				.satisfies((holder) -> assertThat(holder.path()).isEqualTo(revokedNode));
			// A turn always rides the chain's znode (it ends when no thread waits for it): the grant
			// riding it when the holder heard of the revocation is told, through its own watch.
			await().atMost(BOUND).until(() -> !this.events.isEmpty());
			assertThat(this.events).singleElement().satisfies((event) -> {
				assertThat(event.state()).isEqualTo(LockState.LOST);
				assertThat(event.handle().path()).isEqualTo(this.registry.lockPath(this.key));
			});
			// And the key is granted again, on a new znode, within the load's wait time.
			await().atMost(BOUND)
				.until(() -> load.count() > grantsBeforeRevocation + 2 && admin(this.registry).describeHeldLocks()
					.stream()
					.anyMatch((held) -> !held.node().equals(revokedNode)));
		}
		finally {
			revoker.close();
		}
		// The revoked holder is not waited for (it may be stuck): the next grant may start while it
		// still finishes its section, told; never two holders both HELD.
		assertThat(section.untoldOverlaps()).isEmpty();
		assertThat(section.overlaps()).isLessThanOrEqualTo(1);
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, "/locks")).isEmpty();
	}

	@Test
	void sweepThreadStopsWhenTheRegistryCloses() {
		Set<Thread> before = revocationThreads();
		CuratorLockRegistry closed = new CuratorLockRegistry(this.client, "/locks", 10);
		Set<Thread> started = revocationThreads();
		started.removeAll(before);
		assertThat(started).hasSize(1).allSatisfy((thread) -> assertThat(thread.isDaemon()).isTrue());

		closed.close();

		await().atMost(BOUND).until(() -> started.stream().noneMatch(Thread::isAlive));
	}

	/** Run uncontended lock cycles after a first one (which creates the parents), and count them. */
	private Map<String, Long> cycles(LockRequest request) {
		this.locks.acquire(request).release();
		settled();
		this.counts.reset();
		for (int i = 0; i < CYCLES; i++) {
			this.locks.acquire(request).release();
		}
		return settled();
	}

	/**
	 * The counts once no request has been sent for a while: Curator sends some (the semaphore's
	 * removeWatches) in the background after the call that caused them returned.
	 */
	private Map<String, Long> settled() {
		AtomicReference<Map<String, Long>> previous = new AtomicReference<>(this.counts.snapshot());
		await().atMost(BOUND).pollDelay(Duration.ofMillis(150)).pollInterval(Duration.ofMillis(150)).until(() -> {
			Map<String, Long> now = this.counts.snapshot();
			return now.equals(previous.getAndSet(now));
		});
		return previous.get();
	}

	private long getData() {
		return this.counts.snapshot().getOrDefault("getData", 0L);
	}

	private int chainLength() {
		return admin(this.registry).describeHeldLocks()
			.stream()
			.mapToInt(HeldLock::chainLength)
			.max()
			.orElse(0);
	}

	private static Set<Thread> revocationThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("zk-lock-revocation-"))
			.collect(Collectors.toSet());
	}

	private static LockRequest request(String kind, String key) {
		LockRequest request = switch (kind) {
			case "NON_REENTRANT" -> LockRequest.of(key).withReentrant(false);
			case "PERMIT" -> LockRequest.permit(key, 1);
			default -> LockRequest.of(key).withMode(LockMode.valueOf(kind));
		};
		return request.withWaitTime(BOUND);
	}

}
