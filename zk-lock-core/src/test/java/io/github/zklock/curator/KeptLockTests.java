package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.spi.RequestRules;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.awaitility.Awaitility.await;

/**
 * Kept locks ({@link KeptLocks}) on a real ZooKeeper server: a key's znode stays with the
 * application after its last release, and its later grants ride it with no ZooKeeper write and one
 * fencing token, until another participant asks. Covered: the requests of kept grants (counted at
 * the client), the mark in the znode's name, the operators' view and counts; another zk-lock
 * application granted on one attempt once the kept znode is given up, busy while it is held, with a
 * higher token; raw Curator, on one attempt or blocking, granted once the kept znode is given up; the
 * maximum idle time, the bound on kept keys (least recently used first), revocation requested and
 * forced (and requested while held, before the holder watched its znode), an expired session, the registry's close; a read confirming a kept znode whose session
 * was last heard from half a session timeout ago; WRITE kept and a READ of the same or another
 * application; keeping per request and by default; the validation of the settings and requests.
 *
 * <p>Two registries on two clients of one server stand for two applications.
 */
class KeptLockTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration LONG = Duration.ofSeconds(10);

	/**
	 * How long the other application's one attempt waits for a predecessor that may be kept to be
	 * given up: longer than the default, for a build that keeps both cores busy (the delete comes
	 * from the keeping application's event thread).
	 */
	private static final Duration GIVE_UP_WAIT = Duration.ofSeconds(1);

	private final CountingZooKeeper.Counts countsA = new CountingZooKeeper.Counts();

	private CuratorFramework clientA;

	private CuratorFramework observer;

	private CuratorLockRegistry processA;

	private CuratorLockRegistry processB;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.clientA = zooKeeper.newClient((builder) -> counting(builder, this.countsA));
		this.processA = new CuratorLockRegistry(this.clientA, ROOT, 100);
		this.processA.setKeptLocks(KeptLocks.ENABLED);
		this.processB = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.processB.setKeptLocks(new KeptLocks(false, KeptLocks.DEFAULT_MAX_IDLE, KeptLocks.DEFAULT_MAX_KEYS, GIVE_UP_WAIT));
		this.observer = zooKeeper.newClient();
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.processA.close();
		this.processB.close();
	}

	private static void counting(CuratorFrameworkFactory.Builder builder, CountingZooKeeper.Counts counts) {
		builder.zookeeperFactory(CountingZooKeeper.factory(counts));
	}

	@Test
	void keptZnodeServesLaterGrantsWithoutAWriteAndOneTokenUntilAnotherApplicationAsks() throws Exception {
		LockHandle first = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		long token = first.fencingToken();
		assertThat(fromKept(first)).isFalse();
		first.release();
		List<String> znodes = lockZnodes();
		assertThat(znodes).hasSize(1);
		assertThat(Protocol.mayBeKept(name(znodes.get(0)))).as("marked %s", znodes).isTrue();
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 1);
		assertThat(admin(this.processA).describeHeldLocks()).isEmpty();
		assertThat(admin(this.processA).describeKeptLocks()).singleElement().satisfies((kept) -> {
			assertThat(kept.node()).isEqualTo(znodes.get(0));
			assertThat(kept.fencingToken()).isEqualTo(token);
			assertThat(kept.mode()).isEqualTo(LockMode.EXCLUSIVE);
			assertThat(kept.grants()).isEqualTo(1);
		});
		// The watches of the kept znode: its children's, set by the listing that granted it, and its
		// data's, set as it is kept (a getData, this key's only one). Keeping it lists nothing more.
		await().atMost(LONG).untilAsserted(() -> assertThat(this.countsA.snapshot()).containsEntry("getData", 1L));
		// The cold key's parents are created first: three creates, and the create of the znode is sent
		// twice, each time with a listing; none more as the znode is kept.
		assertThat(this.countsA.snapshot()).containsEntry("create", 3L).containsEntry("getChildren", 2L);

		this.countsA.reset();
		for (int i = 0; i < 20; i++) {
			LockHandle grant = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
			assertThat(fromKept(grant)).as("grant %d", i).isTrue();
			assertThat(grant.fencingToken()).as("token of grant %d", i).isEqualTo(token);
			grant.release();
		}
		assertThat(this.countsA.total()).as("requests of 20 kept grants %s", this.countsA).isZero();
		assertThat(lockZnodes()).isEqualTo(znodes);
		assertThat(admin(this.processA).keptGrantCount()).isEqualTo(20);

		// Another application, one attempt: granted once the kept znode is given up, with a higher token.
		LockHandle other = this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		assertThat(other.fencingToken()).isGreaterThan(token);
		assertThat(admin(this.processA).keptLockCount()).isZero();
		assertThat(admin(this.processA).keptGivenUpCount("asked")).isEqualTo(1);
		assertThat(this.processA.tryAcquire(exclusive(Duration.ZERO))).isEmpty();
		long otherToken = other.fencingToken();
		other.release();
		LockHandle again = this.processA.tryAcquire(exclusive(LONG)).orElseThrow();
		assertThat(fromKept(again)).isFalse();
		assertThat(again.fencingToken()).isGreaterThan(otherToken);
		again.release();
	}

	/**
	 * Two applications keeping znodes, one thread each, asking again as soon as they release: each
	 * gives its kept znode up when the other queues, and rides it meanwhile; never both inside.
	 */
	@Test
	void twoApplicationsTakingTurnsNeverHoldTheKeyTogether() throws Exception {
		this.processB.setKeptLocks(KeptLocks.ENABLED);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger[] grants = { new AtomicInteger(),
				new AtomicInteger() };
		long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
		List<CompletableFuture<Void>> loops = new ArrayList<>();
		CuratorLockRegistry[] registries = { this.processA, this.processB };
		for (int i = 0; i < 2; i++) {
			CuratorLockRegistry registry = registries[i];
			AtomicInteger count = grants[i];
			loops.add(CompletableFuture.runAsync(() -> {
				while (System.nanoTime() < end) {
					LockHandle handle = registry.tryAcquire(exclusive(LONG)).orElseThrow();
					if (inside.incrementAndGet() != 1) {
						overlaps.incrementAndGet();
					}
					count.incrementAndGet();
					inside.decrementAndGet();
					handle.release();
				}
			}));
		}
		CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
		System.out.printf("TAKING_TURNS grants_a=%d grants_b=%d overlaps=%d kept_grants_a=%d kept_grants_b=%d%n",
				grants[0].get(), grants[1].get(), overlaps.get(), admin(this.processA).keptGrantCount(),
				admin(this.processB).keptGrantCount());
		assertThat(overlaps.get()).isZero();
		// Both took the key, each riding its kept znode between the other's requests.
		assertThat(grants[0].get()).isPositive();
		assertThat(grants[1].get()).isPositive();
	}

	/**
	 * Two applications strictly taking turns: each kept znode is given up unused, as the other asks
	 * before it is used again. From the second such give-up in a row an application keeps fewer and
	 * fewer of its znodes (1, 3, 7, ... skipped), so that the turns soon cost what they cost with
	 * kept locks off; a key that then stays with one application is kept again after the skipped ones.
	 */
	@Test
	void keyTakenInStrictTurnsIsKeptLessAndLessThenAgainOnceItStays() throws Exception {
		this.processB.setKeptLocks(KeptLocks.ENABLED);
		int turns = 40;
		long lastToken = 0;
		for (int i = 0; i < turns; i++) {
			for (CuratorLockRegistry registry : List.of(this.processA, this.processB)) {
				LockHandle grant = registry.tryAcquire(exclusive(LONG)).orElseThrow();
				assertThat(fromKept(grant)).as("turn %d", i).isFalse();
				assertThat(grant.fencingToken()).isGreaterThan(lastToken);
				lastToken = grant.fencingToken();
				grant.release();
			}
		}
		long askedA = admin(this.processA).keptGivenUpCount("asked");
		long askedB = admin(this.processB).keptGivenUpCount("asked");
		long skippedA = admin(this.processA).keptSkippedCount();
		long skippedB = admin(this.processB).keptSkippedCount();
		System.out.printf("STRICT_TURNS turns=%d asked_a=%d asked_b=%d skipped_a=%d skipped_b=%d%n", turns, askedA,
				askedB, skippedA, skippedB);
		// Kept after turns 1, 2, 4, 8, 16 and 32 of each: at most 6 give-ups each, not one per turn.
		assertThat(askedA).isBetween(2L, 7L);
		assertThat(askedB).isBetween(2L, 7L);
		// Every other release skipped keeping its znode, and counted it. The last kept znode of each
		// may not be counted yet: B's last one is not asked for before the loop below, and a count
		// follows the keeper's delete answer, which may come just after the other's grant.
		assertThat(skippedA + askedA).isBetween(turns - 2L, (long) turns);
		assertThat(skippedB + askedB).isBetween(turns - 2L, (long) turns);
		// The key stays with A from now on: once the skipped znodes are used up, A keeps it again.
		LockHandle kept = null;
		for (int i = 0; i <= KeptKeys.MAX_SKIPPED + 1 && kept == null; i++) {
			LockHandle grant = this.processA.tryAcquire(exclusive(LONG)).orElseThrow();
			if (fromKept(grant)) {
				kept = grant;
			}
			grant.release();
		}
		assertThat(kept).as("a grant from a kept znode within %d grants", KeptKeys.MAX_SKIPPED + 2).isNotNull();
		LockHandle again = this.processA.tryAcquire(exclusive(LONG)).orElseThrow();
		assertThat(fromKept(again)).as("kept again after a kept grant").isTrue();
		again.release();
	}

	/**
	 * A key that another application keeps is visited once: the visitor's znode, granted after
	 * waiting for the kept one, is not kept (the key lives elsewhere), so that the application that
	 * keeps it takes it back without waiting for a give-up. A line of an application that rode a
	 * kept znode keeps its znode even when it had to wait for a visitor's.
	 */
	@Test
	void znodeTakenFromAnotherApplicationIsNotKeptUnlessTheKeyStays() throws Exception {
		this.processB.setKeptLocks(KeptLocks.ENABLED);
		this.processA.tryAcquire(exclusive(LONG)).orElseThrow().release();
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 1);

		// B waits for A's kept znode, and does not keep its own.
		LockHandle visit = this.processB.tryAcquire(exclusive(LONG)).orElseThrow();
		visit.release();
		assertThat(admin(this.processB).keptLockCount()).isZero();
		assertThat(admin(this.processB).keptSkippedCount()).isEqualTo(1);
		await().atMost(LONG).untilAsserted(() -> assertThat(lockZnodes()).isEmpty());

		// A takes the key back without waiting: kept again, and a grant rides it (the line stays).
		this.processA.tryAcquire(exclusive(LONG)).orElseThrow().release();
		assertThat(admin(this.processA).keptLockCount()).isEqualTo(1);
		LockHandle ridden = this.processA.tryAcquire(exclusive(LONG)).orElseThrow();
		assertThat(fromKept(ridden)).isTrue();
		ridden.release();

		// B visits again and holds; A waits behind B's znode, and keeps its own all the same.
		LockHandle held = this.processB.tryAcquire(exclusive(LONG)).orElseThrow();
		CompletableFuture<Void> back = CompletableFuture.runAsync(() -> this.processA.tryAcquire(exclusive(LONG))
			.orElseThrow()
			.release());
		await().atMost(LONG).untilAsserted(() -> assertThat(lockZnodes()).hasSize(2));
		held.release();
		back.get(LONG.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(admin(this.processA).keptLockCount()).isEqualTo(1);
		assertThat(admin(this.processB).keptLockCount()).isZero();
	}

	@Test
	void oneAttemptOfAnotherApplicationIsBusyWhileTheKeepableZnodeIsHeld() throws Exception {
		LockHandle held = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		long started = System.nanoTime();
		assertThat(this.processB.tryAcquire(exclusive(Duration.ZERO))).isEmpty();
		// It waited for the znode to be given up, at most the give-up wait (and a round trip or two).
		assertThat(Duration.ofNanos(System.nanoTime() - started))
			.isGreaterThanOrEqualTo(GIVE_UP_WAIT.minusMillis(20));
		assertThat(lockZnodes()).hasSize(1);
		assertThat(held.isHeld()).isTrue();
		long heldToken = held.fencingToken();
		held.release();
		// The participant that asked left before the release: nobody waits behind the znode, so it is
		// kept, and given up when another application asks again.
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 1);
		assertThat(lockZnodes()).hasSize(1);
		LockHandle other = this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		assertThat(other.fencingToken()).isGreaterThan(heldToken);
		assertThat(admin(this.processA).keptGivenUpCount("asked")).isEqualTo(1);
		other.release();
	}

	@Test
	void rawCuratorAskingForAKeptLockIsGrantedOnceItIsGivenUp() throws Exception {
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		InterProcessMutex raw = new InterProcessMutex(this.observer, ROOT + this.key);
		// One look: the raw mutex's znode asks for the kept one, which is given up at once. Its listing
		// may come before the delete (held) or after it (granted), and either way the znode is given up.
		boolean first = raw.acquire(0, TimeUnit.MILLISECONDS);
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 0);
		assertThat(admin(this.processA).keptGivenUpCount("asked")).isEqualTo(1);
		if (first) {
			raw.release();
		}
		else {
			await().atMost(LONG).until(() -> lockZnodes().isEmpty());
			assertThat(raw.acquire(0, TimeUnit.MILLISECONDS)).isTrue();
			raw.release();
		}
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 1);
		// A blocking acquire queues: the application gives its kept znode up.
		assertThat(raw.acquire(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
		assertThat(admin(this.processA).keptLockCount()).isZero();
		CompletableFuture<Optional<RegistryGrant>> waiting = this.processA.submit(exclusive(LONG));
		await().atMost(LONG).until(() -> lockZnodes().size() == 2);
		assertThat(waiting).isNotDone();
		raw.release();
		RegistryGrant grant = waiting.get(LONG.toSeconds(), TimeUnit.SECONDS).orElseThrow();
		assertThat(fromKept(grant)).isFalse();
		grant.release();
	}

	@Test
	void keptZnodeIsGivenUpAfterTheMaximumIdleTime() throws Exception {
		this.processA.setKeptLocks(new KeptLocks(true, Duration.ofMillis(300), 10, KeptLocks.DEFAULT_GIVE_UP_WAIT));
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		assertThat(lockZnodes()).hasSize(1);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).keptLockCount()).isZero();
		assertThat(admin(this.processA).keptGivenUpCount("idle")).isEqualTo(1);
		// A key used again within the idle time stays kept.
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		for (int i = 0; i < 5; i++) {
			Thread.sleep(100);
			this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		}
		assertThat(admin(this.processA).keptGivenUpCount("idle")).isEqualTo(1);
		assertThat(lockZnodes()).hasSize(1);
	}

	@Test
	void keptKeysAreBoundedLeastRecentlyUsedFirst() throws Exception {
		this.processA.setKeptLocks(new KeptLocks(true, KeptLocks.DEFAULT_MAX_IDLE, 3, KeptLocks.DEFAULT_GIVE_UP_WAIT));
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			String each = this.key + "-" + i;
			keys.add(each);
			this.processA.tryAcquire(target(each, LockMode.EXCLUSIVE, Duration.ZERO)).orElseThrow().release();
		}
		await().atMost(LONG).until(() -> admin(this.processA).keptGivenUpCount("max-keys") == 2);
		assertThat(admin(this.processA).keptLockCount()).isEqualTo(3);
		assertThat(admin(this.processA).describeKeptLocks()).extracting(KeptLock::path)
			.containsExactly(ROOT + keys.get(2), ROOT + keys.get(3), ROOT + keys.get(4));
		await().atMost(LONG).until(() -> ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + keys.get(0)).isEmpty()
				&& ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + keys.get(1)).isEmpty());
	}

	@Test
	void revocationRequestedOrForcedGivesTheKeptZnodeUp() throws Exception {
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		Revocation requested = admin(this.processB).revoke(this.key, RevocationMode.REQUEST, LONG);
		assertThat(requested.released()).isTrue();
		assertThat(admin(this.processA).keptLockCount()).isZero();

		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 1);
		Revocation forced = admin(this.processB).revoke(this.key, RevocationMode.FORCE, Duration.ZERO);
		assertThat(forced.action()).isEqualTo(RevocationAction.FORCED_DELETE);
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 0);
		LockHandle after = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		assertThat(fromKept(after)).isFalse();
		after.release();
	}

	@Test
	void revocationRequestedWhileHeldAndNotWatchedGivesTheZnodeUpWhenReleased() throws Exception {
		// Held for less than the revocation check interval: the holder sets no watch, and learns of
		// the request only from the mark, read as the released znode is kept.
		this.processA.setRevocationCheckInterval(Duration.ofHours(1));
		LockHandle held = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		CompletableFuture<Revocation> requested = CompletableFuture
			.supplyAsync(() -> admin(this.processB).revoke(this.key, RevocationMode.REQUEST, LONG));
		await().atMost(LONG).until(() -> Revocations.isRevocationMark(
				this.observer.getData().forPath(lockZnodes().get(0))));
		assertThat(held.isHeld()).isTrue();
		held.release();
		assertThat(requested.get(LONG.toSeconds() + 5, TimeUnit.SECONDS).released()).isTrue();
		assertThat(lockZnodes()).isEmpty();
		assertThat(admin(this.processA).keptLockCount()).isZero();
		assertThat(admin(this.processA).keptGivenUpCount("revoked")).isEqualTo(1);
	}

	@Test
	void expiredSessionDropsTheKeptZnodeAndTheNextGrantHasANewOne() throws Exception {
		LockHandle first = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		long token = first.fencingToken();
		first.release();
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 1);
		zooKeeper.expireSession(this.clientA);
		await().atMost(LONG).until(() -> admin(this.processA).keptLockCount() == 0);
		assertThat(admin(this.processA).keptGivenUpCount("session")).isEqualTo(1);
		LockHandle next = this.processA.tryAcquire(exclusive(LONG)).orElseThrow();
		assertThat(fromKept(next)).isFalse();
		assertThat(next.fencingToken()).isGreaterThan(token);
		assertThat(next.state()).isEqualTo(LockState.HELD);
		next.release();
	}

	@Test
	void closingTheRegistryDeletesTheKeptZnodes() throws Exception {
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		this.processA.tryAcquire(target(this.key + "-other", LockMode.WRITE, Duration.ZERO)).orElseThrow().release();
		assertThat(admin(this.processA).keptLockCount()).isEqualTo(2);
		this.processA.close();
		// Deleted before close returned, with the client still open.
		assertThat(lockZnodes()).isEmpty();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + this.key + "-other")).isEmpty();
		assertThat(admin(this.processA).keptGivenUpCount("closed")).isEqualTo(2);
	}

	@Test
	void keptZnodeLastConfirmedHalfASessionTimeoutAgoIsConfirmedByARead() throws Exception {
		CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();
		CuratorFramework shortSession = zooKeeper.newClient((builder) -> {
			counting(builder, counts);
			builder.sessionTimeoutMs(2_000).connectionTimeoutMs(2_000);
		});
		CuratorLockRegistry registry = new CuratorLockRegistry(shortSession, ROOT, 100);
		registry.setKeptLocks(KeptLocks.ENABLED);
		try {
			int negotiated = shortSession.getZookeeperClient().getZooKeeper().getSessionTimeout();
			registry.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
			Thread.sleep(negotiated / 2 + 100);
			counts.reset();
			LockHandle grant = registry.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
			assertThat(fromKept(grant)).isTrue();
			grant.release();
			assertThat(counts.writes()).as("requests %s", counts).isZero();
			assertThat(counts.snapshot()).as("requests %s", counts).containsEntry("exists", 1L);
		}
		finally {
			registry.close();
		}
	}

	@Test
	void keptWriteLockIsGivenUpForAReadOfTheSameOrAnotherApplication() throws Exception {
		LockHandle write = this.processA.tryAcquire(target(this.key, LockMode.WRITE, Duration.ZERO)).orElseThrow();
		long token = write.fencingToken();
		write.release();
		assertThat(lockZnodes()).hasSize(1);
		LockHandle read = this.processA.tryAcquire(target(this.key, LockMode.READ, Duration.ZERO)).orElseThrow();
		assertThat(read.fencingToken()).isGreaterThan(token);
		assertThat(lockZnodes()).hasSize(1);
		read.release();

		this.processA.tryAcquire(target(this.key, LockMode.WRITE, Duration.ZERO)).orElseThrow().release();
		LockHandle otherRead = this.processB.tryAcquire(target(this.key, LockMode.READ, Duration.ZERO)).orElseThrow();
		assertThat(admin(this.processA).keptLockCount()).isZero();
		otherRead.release();
	}

	@Test
	void keepingIsChosenPerRequestOverTheRegistryDefault() throws Exception {
		this.processA.setKeptLocks(KeptLocks.DISABLED);
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		assertThat(lockZnodes()).isEmpty();
		this.processA.tryAcquire(keeping(true)).orElseThrow().release();
		assertThat(lockZnodes()).hasSize(1);
		assertThat(admin(this.processA).keptLockCount()).isEqualTo(1);
		this.processB.tryAcquire(exclusive(LONG)).orElseThrow().release();

		this.processA.setKeptLocks(KeptLocks.ENABLED);
		this.processA.tryAcquire(keeping(false)).orElseThrow().release();
		assertThat(lockZnodes()).isEmpty();
		assertThat(admin(this.processA).keptLockCount()).isZero();
	}

	@Test
	void settingsAndRequestsAreValidated() {
		assertThatIllegalArgumentException().isThrownBy(() -> new KeptLocks(true, Duration.ZERO, 1, Duration.ofMillis(1)))
			.withMessageContaining("maxIdle");
		assertThatIllegalArgumentException().isThrownBy(() -> new KeptLocks(true, Duration.ofSeconds(1), 0, Duration.ofMillis(1)))
			.withMessageContaining("maxKeys");
		assertThatIllegalArgumentException().isThrownBy(() -> new KeptLocks(true, Duration.ofSeconds(1), 1, Duration.ofMillis(-1)))
			.withMessageContaining("giveUpWait");
		assertThatNullPointerException().isThrownBy(() -> new KeptLocks(true, null, 1, Duration.ofMillis(1)));
		assertThatNullPointerException().isThrownBy(() -> this.processA.setKeptLocks(null));
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of("/a").withMode(LockMode.READ).withKeep(true))
			.withMessageContaining("READ");
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.permit("/a", 2).withKeep(true))
			.withMessageContaining("permit");
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of("/a").withReentrant(false).withKeep(true))
			.withMessageContaining("non-reentrant");
		assertThat(LockRequest.of("/a").withKeep(true).withMode(LockMode.WRITE).keep()).isTrue();
		assertThat(LockRequest.of("/a").keep()).isNull();
	}

	private static boolean fromKept(LockHandle grant) {
		return ((RegistryGrant) grant).isFromKeptZnode();
	}

	private LockTarget exclusive(Duration waitTime) {
		return target(this.key, LockMode.EXCLUSIVE, waitTime);
	}

	private LockTarget keeping(boolean keep) {
		return new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO, RequestRules.NO_CEILING, keep);
	}

	private static LockTarget target(String key, LockMode mode, Duration waitTime) {
		return new LockTarget(key, mode, true, 0, waitTime);
	}

	private static String name(String znode) {
		return znode.substring(znode.lastIndexOf('/') + 1);
	}

	/** The ephemeral znodes below the test's lock path: the grants and waiters of every client. */
	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + this.key);
	}

}
