package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A storm of short grants on one key, on a real ZooKeeper: six threads of one application take it
 * again and again, each grant doing 0.5 to 3 ms of work, while their grants are ended under them
 * as often as possible: by a ceiling ({@code lockAtMostFor} of 1 to 3 ms), or by revocations from
 * another application (Curator's revocation request and forced deletes, back to back); with
 * synchronous grants, bound to their thread, and with asynchronous ones; with znodes deleted at
 * each last release, and kept (kept locks on). Whatever ends a grant,
 * the next is made only once it is LOST: no two holders are ever inside, both HELD; every request
 * is granted within its wait (nothing stalls, no znode of the application blocks the key), or,
 * revoked just as it was handed out, fails with a {@code LockLostException} (as documented); nothing
 * is left behind. With kept locks the threads pause up to 15 ms between grants, so that the key
 * is now and then idle and its znode kept (how many grants came from a kept znode is printed: on a
 * loaded machine a storm may have none). Prints what it measured ({@code STORM ...}). Runs for
 * {@code -Dzklock.storm.seconds} (default 5) per case; {@code scripts/stress-tests.sh} runs it
 * longer with the CPUs saturated.
 */
class LockStormTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration STORM = Duration.ofSeconds(Long.getLong("zklock.storm.seconds", 5));

	private static final int THREADS = 6;

	/** Every request's wait: far longer than a turn of all six threads, even under load. */
	private static final Duration WAIT = Duration.ofSeconds(30);

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private String key;

	@BeforeEach
	void start(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
		this.template = new LockTemplate(this.registry, WAIT);
		this.key = "/storm/" + testInfo.getDisplayName().replaceAll("[^A-Za-z0-9]", "");
	}

	@AfterEach
	void stop() {
		this.registry.close();
	}

	@ParameterizedTest(name = "{0} {1} {2}")
	@CsvSource({ "ceiling, sync, released", "ceiling, async, released", "revocation, sync, released",
			"revocation, async, released", "ceiling, sync, kept", "ceiling, async, kept", "revocation, sync, kept",
			"revocation, async, kept" })
	void grantsEndedUnderTheirHoldersLeaveNoUntoldOverlapAndNoStalledKey(String ender, String grants, String znodes)
			throws Exception {
		boolean ceilings = ender.equals("ceiling");
		boolean async = grants.equals("async");
		boolean kept = znodes.equals("kept");
		if (kept) {
			// Kept locks on: the znode stays between the storm's grants whenever no thread waits.
			this.registry.setKeptLocks(KeptLocks.ENABLED);
		}
		// Revoked znodes are watched once held longer than this; a chain of grants keeps one longer.
		this.registry.setRevocationCheckInterval(Duration.ofMillis(ceilings ? 1000 : 10));
		ChainLoad.Section section = new ChainLoad.Section();
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger granted = new AtomicInteger();
		AtomicInteger lost = new AtomicInteger();
		AtomicInteger lostAtGrant = new AtomicInteger();
		AtomicLong revocations = new AtomicLong();
		List<Throwable> failures = new CopyOnWriteArrayList<>();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < THREADS; i++) {
			Thread thread = new Thread(() -> {
				try {
					while (!stop.get()) {
						ThreadLocalRandom random = ThreadLocalRandom.current();
						LockRequest request = LockRequest.of(this.key).withWaitTime(WAIT);
						if (ceilings) {
							request = request.withLockAtMostFor(Duration.ofMillis(random.nextInt(1, 4)));
						}
						LockHandle handle;
						try {
							handle = async
									? this.template.async().acquire(request).get(WAIT.toSeconds() + 10, TimeUnit.SECONDS)
									: this.template.acquire(request);
						}
						catch (LockLostException | ExecutionException ex) {
							// Revoked just as it was handed out: the wait fails, told (see Grants.deliver).
							if (ceilings || !(ex instanceof LockLostException || ex.getCause() instanceof LockLostException)) {
								throw ex;
							}
							lostAtGrant.incrementAndGet();
							continue;
						}
						granted.incrementAndGet();
						try {
							section.hold(handle, Duration.ofNanos(random.nextLong(500_000, 3_000_001)));
						}
						finally {
							if (handle.state() == LockState.LOST) {
								lost.incrementAndGet();
							}
							handle.release();
						}
						if (kept) {
							// A pause of up to 15 ms, so that the key is idle now and then (six threads
							// asking some 15 % of the time each) and its znode kept.
							LockSupport.parkNanos(random.nextLong(0, 15_000_001));
						}
					}
				}
				catch (Throwable ex) {
					failures.add(ex);
				}
			}, "storm-" + i);
			threads.add(thread);
			thread.start();
		}
		CuratorLockRegistry other = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		try {
			long end = System.nanoTime() + STORM.toNanos();
			while (System.nanoTime() < end && failures.isEmpty()) {
				if (ceilings) {
					Thread.sleep(50);
				}
				else {
					RevocationMode mode = (revocations.incrementAndGet() % 2 == 0) ? RevocationMode.FORCE
							: RevocationMode.REQUEST;
					admin(other).revoke(this.key, mode, Duration.ofMillis(200));
				}
			}
		}
		finally {
			stop.set(true);
			for (Thread thread : threads) {
				thread.join(WAIT.plusSeconds(20).toMillis());
			}
			other.close();
		}
		CuratorLockAdmin admin = admin(this.registry);
		System.out.printf("STORM ender=%s grants=%s znodes=%s seconds=%d threads=%d granted=%d lost_at_release=%d "
				+ "lost_at_grant=%d revocations=%d overlaps_told=%d untold_overlaps=%d failures=%d kept_grants=%d "
				+ "kept_given_up=%s%n", ender, grants, znodes, STORM.toSeconds(), THREADS, granted.get(), lost.get(),
				lostAtGrant.get(),
				ceilings ? 0 : revocations.get(), section.overlaps(), section.untoldOverlaps().size(), failures.size(),
				admin.keptGrantCount(), CuratorLockAdmin.keptGiveUpCauses().stream()
					.map((cause) -> cause + ":" + admin.keptGivenUpCount(cause))
					.collect(Collectors.joining(",")));
		// A znode kept after the storm is the application's alone: given up on close.
		this.registry.close();
		assertThat(threads).noneMatch(Thread::isAlive);
		assertThat(failures).as("requests not granted within their wait, or failed").isEmpty();
		assertThat(section.untoldOverlaps()).as("two holders inside, both HELD").isEmpty();
		assertThat(granted.get()).isPositive();
		assertThat(admin.heldLockCount()).isZero();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, "/locks")).isEmpty());
	}

}
