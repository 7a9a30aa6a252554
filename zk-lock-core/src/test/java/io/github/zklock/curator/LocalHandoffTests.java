package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockUpgradeException;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.handedOver;
import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.awaitility.Awaitility.await;

/**
 * Local hand-off ({@link LocalHandoff}) on a real ZooKeeper server: when a thread releases an
 * EXCLUSIVE (reentrant) or WRITE grant while another thread of the same application waits for the
 * key, that thread rides the held znode, with no ZooKeeper request, the same fencing token and
 * {@code isLocalHandoff()}; tokens still rise across applications. Covered: the requests of a
 * chain (counted at the ZooKeeper client) and of an EXCLUSIVE fencing token, re-entry and READ
 * under WRITE of a chain holder (local, keeping the key until the outermost release; no
 * read-to-write upgrade once the WRITE is released), FIFO among local threads, local wait times
 * (bounded, zero, interrupted) leaving nothing behind, no znode outliving the last release (also
 * when waiters time out or are interrupted right at the hand-off), the chain length
 * in held-lock snapshots, WRITE chains excluding readers, the kinds that are never handed over
 * (non-reentrant EXCLUSIVE, READ, permits), {@link LocalHandoff#DISABLED} sending what Curator's
 * recipe sends, a raw Curator {@code InterProcessMutex} of another client excluded during a chain
 * and let in, and the validation of the settings. The bound of a chain while another application
 * waits is in {@link LocalHandoffBoundTests}; a session lost mid-chain in the chaos tests.
 *
 * <p>Two registries on two clients of one server stand for two applications; the threads of
 * application A are {@link LockThread}s, so that a test decides who acquires and releases when.
 */
class LocalHandoffTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration SHORT = Duration.ofMillis(200);

	private static final Duration LONG = Duration.ofSeconds(10);

	/** A hand-over in ZooKeeper on a loaded machine: the slack of the bounds asserted here. */
	private static final Duration HAND_OVER = Duration.ofSeconds(1);

	private final CountingZooKeeper.Counts countsA = new CountingZooKeeper.Counts();

	private final List<LockThread> threads = new ArrayList<>();

	private CuratorFramework observer;

	private CuratorLockRegistry processA;

	private CuratorLockRegistry processB;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		CuratorFramework clientA = zooKeeper.newClient((builder) -> counting(builder, this.countsA));
		this.processA = new CuratorLockRegistry(clientA, ROOT, 100);
		this.processB = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.observer = zooKeeper.newClient();
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() throws InterruptedException {
		for (LockThread thread : this.threads) {
			thread.close();
		}
		// The extension closes the clients after this.
		this.processA.close();
		this.processB.close();
	}

	private static void counting(CuratorFrameworkFactory.Builder builder, CountingZooKeeper.Counts counts) {
		builder.zookeeperFactory(CountingZooKeeper.factory(counts));
	}

	@Test
	void handOffSendsNoRequestAndTheChainSharesOneFencingToken() throws Exception {
		LockThread first = thread("first");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		long token = held.fencingToken();
		assertThat(handedOver(held)).isFalse();
		List<LockThread> riders = new ArrayList<>();
		List<CompletableFuture<Optional<RegistryGrant>>> waiting = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			LockThread rider = thread("rider-" + i);
			riders.add(rider);
			waiting.add(rider.tryAcquire(this.processA, exclusive(LONG)));
			awaitWaiting(i + 1);
		}
		// The waiting threads queue locally, not in ZooKeeper.
		List<String> znodes = lockZnodes();
		assertThat(znodes).hasSize(1);

		this.countsA.reset();
		LockThread holderThread = first;
		LockHandle holder = held;
		for (int i = 0; i < 4; i++) {
			holderThread.release(holder);
			LockHandle next = waiting.get(i).get(10, TimeUnit.SECONDS).orElseThrow();
			assertThat(handedOver(next)).as("grant %d", i).isTrue();
			assertThat(next.isHeld()).isTrue();
			assertThat(next.fencingToken()).as("token of grant %d", i).isEqualTo(token);
			holderThread = riders.get(i);
			holder = next;
		}
		assertThat(lockZnodes()).isEqualTo(znodes);
		Map<String, Long> requests = this.countsA.snapshot();
		// Four hand-offs: at most the one getChildren that looks for other participants, at the first.
		assertThat(this.countsA.writes()).as("writes of four hand-offs %s", requests).isZero();
		assertThat(requests.keySet()).as("requests of four hand-offs").isSubsetOf("getChildren");
		assertThat(requests.getOrDefault("getChildren", 0L)).as("requests of four hand-offs").isLessThanOrEqualTo(1);

		holderThread.release(holder);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(this.countsA.snapshot()).containsEntry("delete", 1L).doesNotContainKey("create");
		assertThat(admin(this.processA).heldLockCount()).isZero();
		// Another application's grant has a znode of its own: a higher token.
		LockHandle other = this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		assertThat(handedOver(other)).isFalse();
		assertThat(other.fencingToken()).isGreaterThan(token);
		other.release();
	}

	@Test
	void fencingTokenOfAReentrantExclusiveGrantSendsNoRequest() throws Exception {
		// A first cycle creates the key's parent znodes.
		this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
		this.countsA.reset();
		LockHandle outer = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		long token = outer.fencingToken();
		LockHandle inner = this.processA.tryAcquire(exclusive(Duration.ZERO)).orElseThrow();
		assertThat(inner.fencingToken()).isEqualTo(token);
		String znode = lockZnodes().get(0);
		assertThat(token).isEqualTo(this.observer.checkExists().forPath(znode).getCzxid());
		inner.release();
		outer.release();
		// The token comes with the create's answer: the cycle is Curator's create, getChildren, delete.
		assertThat(this.countsA.snapshot()).isEqualTo(Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
	}

	@Test
	void reentryOfAChainHolderIsLocalAndKeepsTheZnodeUntilTheOutermostRelease() throws Exception {
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		CompletableFuture<Optional<RegistryGrant>> next = second.tryAcquire(this.processA, exclusive(LONG));
		awaitWaiting(1);
		// The holder's nested grant is not the outermost: releasing it hands nothing over.
		first.release(first.acquire(this.processA, exclusive(Duration.ZERO)));
		assertStillWaiting(next);
		first.release(held);
		LockHandle rider = next.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(handedOver(rider)).isTrue();
		String znode = lockZnodes().get(0);

		this.countsA.reset();
		LockHandle nested = second.acquire(this.processA, exclusive(Duration.ZERO));
		assertThat(nested.isHeld()).isTrue();
		assertThat(nested.fencingToken()).isEqualTo(rider.fencingToken());
		second.release(nested);
		assertThat(this.countsA.total()).as("requests of a re-entry %s", this.countsA).isZero();
		assertThat(rider.isHeld()).isTrue();
		assertThat(lockZnodes()).containsExactly(znode);
		assertThat(this.processB.tryAcquire(exclusive(Duration.ZERO))).isEmpty();

		second.release(rider);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
	}

	@Test
	void readUnderWriteOfAChainHolderIsLocalAndKeepsTheKeyUntilTheReadIsReleased() throws Exception {
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockHandle held = first.acquire(this.processA, write(LONG));
		CompletableFuture<Optional<RegistryGrant>> next = second.tryAcquire(this.processA, write(LONG));
		awaitWaiting(1);
		first.release(held);
		LockHandle rider = next.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(handedOver(rider)).as("WRITE handed over").isTrue();

		this.countsA.reset();
		LockHandle read = second.acquire(this.processA, read(Duration.ZERO));
		assertThat(read.isHeld()).isTrue();
		assertThat(this.countsA.total()).as("requests of READ under a ridden WRITE %s", this.countsA).isZero();
		// The WRITE goes first: the READ still keeps every other application out.
		second.release(rider);
		assertThat(read.isHeld()).isTrue();
		assertThat(this.processB.tryAcquire(write(Duration.ZERO))).as("WRITE of another application").isEmpty();
		assertThat(this.processB.tryAcquire(read(Duration.ZERO))).as("READ of another application").isEmpty();
		assertThat(lockZnodes()).isNotEmpty();

		second.release(read);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).heldLockCount()).isZero();
		this.processB.tryAcquire(write(Duration.ZERO)).orElseThrow().release();
	}

	/**
	 * A thread that took READ under its WRITE and released the WRITE holds READ only: asking for
	 * WRITE again fails at once, as without hand-off (DESIGN.md semantics 3), although the WRITE's
	 * znode is still kept for the READ.
	 */
	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void readHolderAskingForWriteAfterReleasingItsWriteFailsFast(boolean handOff) throws Exception {
		this.processA.setLocalHandoff(handOff ? LocalHandoff.DEFAULT : LocalHandoff.DISABLED);
		LockThread first = thread("first");
		LockHandle write = first.acquire(this.processA, write(Duration.ZERO));
		LockHandle read = first.acquire(this.processA, read(Duration.ZERO));
		first.release(write);
		assertThatExceptionOfType(LockUpgradeException.class)
			.isThrownBy(() -> first.call(() -> this.processA.tryAcquire(write(LockRequest.WAIT_FOREVER))));
		assertThat(read.isHeld()).isTrue();
		assertThat(admin(this.processA).heldLockCount()).isOne();
		first.release(read);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		this.processB.tryAcquire(write(Duration.ZERO)).orElseThrow().release();
	}

	@Test
	void readUnderWriteKeepsLocalWritersOutUntilTheReadIsReleased() throws Exception {
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockHandle write = first.acquire(this.processA, write(LONG));
		CompletableFuture<Optional<RegistryGrant>> next = second.tryAcquire(this.processA, write(LONG));
		awaitWaiting(1);
		LockHandle read = first.acquire(this.processA, read(Duration.ZERO));
		first.release(write);
		// A WRITE is never handed over while its holder still reads.
		assertStillWaiting(next);
		assertThat(this.processB.tryAcquire(write(Duration.ZERO))).isEmpty();

		first.release(read);
		LockHandle granted = next.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(granted.isHeld()).isTrue();
		second.release(granted);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).heldLockCount()).isZero();
	}

	@Test
	void localWaitersAreGrantedInArrivalOrderEachOnTheHeldZnode() throws Exception {
		LockThread first = thread("first");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		long token = held.fencingToken();
		List<String> grants = new ArrayList<>();
		List<CompletableFuture<Void>> waiters = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			int index = i;
			waiters.add(thread("waiter-" + i).submit(() -> {
				LockHandle granted = this.processA.tryAcquire(exclusive(LONG)).orElseThrow();
				synchronized (grants) {
					grants.add(index + ":" + handedOver(granted) + ":" + (granted.fencingToken() == token));
				}
				granted.release();
				return null;
			}));
			// Arrival order: each waiter is queued before the next one starts.
			awaitWaiting(i + 1);
		}
		first.release(held);
		CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
		assertThat(grants).containsExactly("0:true:true", "1:true:true", "2:true:true", "3:true:true",
				"4:true:true");
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void localWaiterTimesOutAfterItsWaitTimeAndLeavesNothingBehind() throws Exception {
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		List<String> znodes = lockZnodes();
		long started = System.nanoTime();
		Optional<RegistryGrant> attempt = second.tryAcquire(this.processA, exclusive(SHORT)).get(10, TimeUnit.SECONDS);
		Duration waited = Duration.ofNanos(System.nanoTime() - started);
		assertThat(attempt).isEmpty();
		assertThat(waited).isGreaterThanOrEqualTo(SHORT).isLessThan(SHORT.plus(HAND_OVER));
		assertThat(admin(this.processA).heldLockCount()).isOne();
		assertThat(admin(this.processA).describeWaitingLocks()).isEmpty();
		assertThat(lockZnodes()).isEqualTo(znodes);

		first.release(held);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).heldLockCount()).isZero();
		LockHandle again = second.acquire(this.processA, exclusive(Duration.ZERO));
		assertThat(handedOver(again)).isFalse();
		second.release(again);
	}

	@Test
	void zeroWaitWhileTheChainIsBusyIsEmptyAtOnceWithoutARequest() throws Exception {
		LockThread first = thread("first");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		List<String> znodes = lockZnodes();
		this.countsA.reset();
		long started = System.nanoTime();
		Optional<RegistryGrant> attempt = thread("second").tryAcquire(this.processA, exclusive(Duration.ZERO))
			.get(10, TimeUnit.SECONDS);
		assertThat(attempt).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(HAND_OVER);
		assertThat(this.countsA.total()).as("requests %s", this.countsA).isZero();
		assertThat(lockZnodes()).isEqualTo(znodes);
		assertThat(admin(this.processA).heldLockCount()).isOne();
		first.release(held);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void localWaiterInterruptedFailsWithItsFlagSetAndLeavesNothingBehind() throws Exception {
		LockThread first = thread("first");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicBoolean interrupted = new AtomicBoolean();
		Thread waiter = new Thread(() -> {
			try {
				this.processA.tryAcquire(exclusive(LockRequest.WAIT_FOREVER));
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
			interrupted.set(Thread.currentThread().isInterrupted());
		});
		waiter.start();
		awaitWaiting(1);
		waiter.interrupt();
		waiter.join(10_000);
		assertThat(waiter.isAlive()).isFalse();
		assertThat(failure.get()).isExactlyInstanceOf(LockException.class).hasMessageContaining("interrupted");
		assertThat(interrupted.get()).as("interrupt flag after the failure").isTrue();
		assertThat(admin(this.processA).describeWaitingLocks()).isEmpty();
		assertThat(admin(this.processA).heldLockCount()).isOne();

		// Nobody waits any more: the release deletes the znode.
		first.release(held);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).heldLockCount()).isZero();
		this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
	}

	/**
	 * Waiters whose wait time runs out about when the holder releases: each round the holder
	 * releases after a few milliseconds and two local waiters give up after a few milliseconds.
	 * Whoever wins each race, no znode may stay behind without a holder (an idle chain), which the
	 * holder's next acquisition and another application's attempt at the end would show.
	 */
	@Test
	void noZnodeOutlivesTheLastReleaseWhenLocalWaitersTimeOutAtTheHandOff() throws Exception {
		LockThread holderThread = thread("holder");
		List<LockThread> waiters = List.of(thread("waiter-0"), thread("waiter-1"));
		int rounds = 200;
		int handedOver = 0;
		int timedOut = 0;
		for (int round = 0; round < rounds; round++) {
			LockHandle held = holderThread.acquire(this.processA, exclusive(LONG));
			// Nobody held or waited: a kept znode would be ridden here.
			assertThat(handedOver(held)).as("round %d: holder's grant handed over", round).isFalse();
			List<CompletableFuture<String>> outcomes = new ArrayList<>();
			for (int w = 0; w < waiters.size(); w++) {
				Duration waitTime = Duration.ofMillis(1 + (round + w) % 5);
				outcomes.add(waiters.get(w).submit(() -> this.processA.tryAcquire(exclusive(waitTime)).map((granted) -> {
					boolean local = handedOver(granted);
					granted.release();
					return local ? "local" : "zookeeper";
				}).orElse("timeout")));
			}
			long holdNanos = TimeUnit.MILLISECONDS.toNanos(1 + round % 4);
			holderThread.call(() -> {
				LockSupport.parkNanos(holdNanos);
				held.release();
				return null;
			});
			for (CompletableFuture<String> outcome : outcomes) {
				switch (outcome.get(10, TimeUnit.SECONDS)) {
					case "local" -> handedOver++;
					case "timeout" -> timedOut++;
					default -> {
					}
				}
			}
		}
		System.out.printf("LOCAL-HANDOFF timeout_race rounds=%d handed_over=%d timed_out=%d%n", rounds, handedOver,
				timedOut);
		assertThat(handedOver).as("grants handed over").isPositive();
		assertThat(timedOut).as("waiters timed out").isPositive();
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).heldLockCount()).isZero();
		assertThat(admin(this.processA).describeWaitingLocks()).isEmpty();
		this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
	}

	/**
	 * A local waiter is interrupted at the moment the holder releases: whoever wins, the znode is
	 * released once nobody holds or waits, so the holder's next grant is made through ZooKeeper.
	 */
	@Test
	void noZnodeOutlivesTheLastReleaseWhenALocalWaiterIsInterruptedAtTheHandOff() throws Exception {
		LockThread holderThread = thread("holder");
		int rounds = 100;
		int handedOver = 0;
		int interrupted = 0;
		for (int round = 0; round < rounds; round++) {
			LockHandle held = holderThread.acquire(this.processA, exclusive(LONG));
			assertThat(handedOver(held)).as("round %d: holder's grant handed over", round).isFalse();
			CompletableFuture<Thread> waiterThread = new CompletableFuture<>();
			CountDownLatch interruptSent = new CountDownLatch(1);
			CompletableFuture<String> outcome = CompletableFuture.supplyAsync(() -> {
				waiterThread.complete(Thread.currentThread());
				try {
					return this.processA.tryAcquire(exclusive(LockRequest.WAIT_FOREVER)).map((granted) -> {
						boolean local = handedOver(granted);
						// Granted before the interrupt, which came too late to matter: clear it once sent.
						while (interruptSent.getCount() > 0) {
							Thread.onSpinWait();
						}
						Thread.interrupted();
						granted.release();
						return local ? "local" : "zookeeper";
					}).orElse("empty");
				}
				catch (LockException ex) {
					return "interrupted";
				}
			}, (task) -> new Thread(task, "interrupted-waiter").start());
			Thread waiter = waiterThread.get(10, TimeUnit.SECONDS);
			awaitWaiting(1);
			// Both at once, from two threads.
			CountDownLatch go = new CountDownLatch(1);
			CompletableFuture<Void> release = holderThread.submit(() -> {
				go.await(10, TimeUnit.SECONDS);
				held.release();
				return null;
			});
			go.countDown();
			waiter.interrupt();
			interruptSent.countDown();
			release.get(10, TimeUnit.SECONDS);
			switch (outcome.get(10, TimeUnit.SECONDS)) {
				case "local" -> handedOver++;
				case "interrupted" -> interrupted++;
				default -> {
				}
			}
		}
		System.out.printf("LOCAL-HANDOFF interrupt_race rounds=%d handed_over=%d interrupted=%d%n", rounds, handedOver,
				interrupted);
		assertThat(interrupted).as("waiters interrupted").isPositive();
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		assertThat(admin(this.processA).heldLockCount()).isZero();
		this.processB.tryAcquire(exclusive(Duration.ZERO)).orElseThrow().release();
	}

	@Test
	void heldLockSnapshotsShowTheChainLength() throws Exception {
		LockThread first = thread("first");
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		long token = held.fencingToken();
		String znode = lockZnodes().get(0);
		assertThat(admin(this.processA).describeHeldLocks()).singleElement().satisfies((lock) -> {
			assertThat(lock.chainLength()).isOne();
			assertThat(lock.holder()).isEqualTo("first");
		});
		LockThread second = thread("second");
		LockThread third = thread("third");
		CompletableFuture<Optional<RegistryGrant>> secondGrant = second.tryAcquire(this.processA, exclusive(LONG));
		awaitWaiting(1);
		CompletableFuture<Optional<RegistryGrant>> thirdGrant = third.tryAcquire(this.processA, exclusive(LONG));
		awaitWaiting(2);
		first.release(held);
		LockHandle secondHeld = secondGrant.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(admin(this.processA).describeHeldLocks()).singleElement()
			.satisfies((lock) -> assertThat(lock.chainLength()).isEqualTo(2));
		second.release(secondHeld);
		LockHandle thirdHeld = thirdGrant.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(admin(this.processA).describeHeldLocks()).singleElement().satisfies((lock) -> {
			assertThat(lock.chainLength()).isEqualTo(3);
			assertThat(lock.holder()).isEqualTo("third");
			assertThat(lock.node()).isEqualTo(znode);
			assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
			assertThat(lock.fencingToken()).isEqualTo(token);
		});
		third.release(thirdHeld);
		assertThat(admin(this.processA).describeHeldLocks()).isEmpty();
	}

	@Test
	void writeChainExcludesReadersOfAnotherApplicationAndOfAnotherLocalThread() throws Exception {
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockThread reader = thread("reader");
		LockHandle held = first.acquire(this.processA, write(LONG));
		CompletableFuture<Optional<RegistryGrant>> next = second.tryAcquire(this.processA, write(LONG));
		awaitWaiting(1);
		first.release(held);
		LockHandle rider = next.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(handedOver(rider)).isTrue();

		assertThat(this.processB.tryAcquire(read(SHORT))).as("READ of another application").isEmpty();
		assertThat(reader.tryAcquire(this.processA, read(SHORT)).get(10, TimeUnit.SECONDS))
			.as("READ of another thread").isEmpty();
		CompletableFuture<Optional<RegistryGrant>> read = reader.tryAcquire(this.processA, read(LONG));
		awaitWaiting(1);
		assertStillWaiting(read);
		second.release(rider);
		LockHandle readHeld = read.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(handedOver(readHeld)).isFalse();
		reader.release(readHeld);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@ParameterizedTest
	@ValueSource(strings = { "non-reentrant", "permit" })
	void nonReentrantExclusiveAndPermitsAreNeverHandedOver(String kind) throws Exception {
		LockTarget request = new LockTarget(this.key, LockMode.EXCLUSIVE, false, kind.equals("permit") ? 1 : 0, LONG);
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockHandle held = first.acquire(this.processA, request);
		long token = held.fencingToken();
		CompletableFuture<Optional<RegistryGrant>> next = second.tryAcquire(this.processA, request);
		awaitWaiting(1);
		first.release(held);
		LockHandle granted = next.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(handedOver(granted)).isFalse();
		assertThat(granted.fencingToken()).as("a znode of its own").isGreaterThan(token);
		assertThat(admin(this.processA).describeHeldLocks()).singleElement()
			.satisfies((lock) -> assertThat(lock.chainLength()).isOne());
		second.release(granted);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void readGrantsAreNeverHandedOver() throws Exception {
		LockThread first = thread("first");
		LockThread second = thread("second");
		LockHandle readA = first.acquire(this.processA, read(Duration.ZERO));
		LockHandle readB = second.acquire(this.processA, read(Duration.ZERO));
		assertThat(handedOver(readA)).isFalse();
		assertThat(handedOver(readB)).isFalse();
		assertThat(readB.fencingToken()).isNotEqualTo(readA.fencingToken());
		assertThat(lockZnodes()).hasSize(2);
		first.release(readA);
		LockHandle again = first.acquire(this.processA, read(Duration.ZERO));
		assertThat(handedOver(again)).isFalse();
		first.release(again);
		second.release(readB);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	/**
	 * With hand-off disabled, two threads taking the key one after the other send a create, a
	 * listing and a delete each, fewer requests than two Curator {@code InterProcessMutex} instances
	 * (one per thread) send for the same two grants: the second thread waits in the local queue
	 * rather than with a znode and a watch of its own, and queues its znode once the first is
	 * deleted.
	 */
	@Test
	void disabledHandOffSendsACycleEachAndNoMoreThanCuratorsRecipe() throws Exception {
		this.processA.setLocalHandoff(LocalHandoff.DISABLED);
		assertThat(this.processA.getLocalHandoff()).isEqualTo(LocalHandoff.DISABLED);
		LockThread first = thread("first");
		LockThread second = thread("second");
		// A first cycle creates the key's parent znodes.
		first.release(first.acquire(this.processA, exclusive(Duration.ZERO)));
		this.countsA.reset();
		LockHandle held = first.acquire(this.processA, exclusive(LONG));
		CompletableFuture<Optional<RegistryGrant>> next = second.tryAcquire(this.processA, exclusive(LONG));
		// The successor waits here, without a znode, until the holder's is deleted.
		await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == 1);
		assertThat(lockZnodes()).hasSize(1);
		first.release(held);
		LockHandle granted = next.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(handedOver(granted)).isFalse();
		second.release(granted);
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
		Map<String, Long> zkLock = this.countsA.snapshot();

		CountingZooKeeper.Counts rawCounts = new CountingZooKeeper.Counts();
		CuratorFramework rawClient = zooKeeper.newClient((builder) -> counting(builder, rawCounts));
		String rawPath = ROOT + this.key + "-raw";
		InterProcessMutex firstMutex = new InterProcessMutex(rawClient, rawPath);
		InterProcessMutex secondMutex = new InterProcessMutex(rawClient, rawPath);
		first.call(() -> {
			firstMutex.acquire();
			firstMutex.release();
			return null;
		});
		rawCounts.reset();
		first.call(() -> {
			firstMutex.acquire();
			return null;
		});
		CompletableFuture<Boolean> rawNext = second.submit(() -> secondMutex.acquire(10, TimeUnit.SECONDS));
		await().atMost(LONG).until(() -> this.observer.getChildren().forPath(rawPath).size() == 2);
		first.call(() -> {
			firstMutex.release();
			return null;
		});
		assertThat(rawNext.get(10, TimeUnit.SECONDS)).isTrue();
		second.call(() -> {
			secondMutex.release();
			return null;
		});
		assertThat(zkLock).as("requests of two contended grants, hand-off disabled")
			.isEqualTo(Map.of("create", 2L, "getChildren", 2L, "delete", 2L));
		Map<String, Long> raw = rawCounts.snapshot();
		assertThat(zkLock.values().stream().mapToLong(Long::longValue).sum())
			.as("requests against Curator's " + raw)
			.isLessThan(raw.values().stream().mapToLong(Long::longValue).sum());
	}

	@Test
	void rawCuratorMutexOfAnotherClientIsExcludedDuringAChainAndLetInWithinABound() throws Exception {
		ChainLoad.Section section = new ChainLoad.Section();
		InterProcessMutex raw = new InterProcessMutex(zooKeeper.newClient(), ROOT + this.key);
		long waitedMs;
		int chainGrants;
		try (ChainLoad chain = ChainLoad.start(this.processA, exclusive(LONG), 4, Duration.ofMillis(1), section)) {
			await().atMost(LONG).until(() -> chain.localCount() >= 20);
			long asked = System.nanoTime();
			assertThat(raw.acquire(10, TimeUnit.SECONDS)).isTrue();
			waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
			int grantsBefore = chain.count();
			section.hold(Duration.ofMillis(100));
			assertThat(chain.count()).as("grants of the chain while the raw mutex held the key").isEqualTo(grantsBefore);
			raw.release();
			await().atMost(LONG).until(() -> chain.count() > grantsBefore);
			chainGrants = chain.count();
		}
		System.out.printf("LOCAL-HANDOFF raw_mutex_wait_ms=%d chain_grants=%d max_time_ms=%d%n", waitedMs, chainGrants,
				LocalHandoff.DEFAULT_MAX_TIME.toMillis());
		assertThat(section.overlaps()).as("holders inside at once").isZero();
		assertThat(Duration.ofMillis(waitedMs)).as("wait of the raw mutex")
			.isLessThanOrEqualTo(LocalHandoff.DEFAULT_MAX_TIME.plus(HAND_OVER));
	}

	@Test
	void settingsAreValidated() {
		assertThat(LocalHandoff.DEFAULT)
			.isEqualTo(new LocalHandoff(true, LocalHandoff.DEFAULT_MAX_GRANTS, LocalHandoff.DEFAULT_MAX_TIME));
		assertThat(LocalHandoff.DISABLED.enabled()).isFalse();
		assertThat(this.processA.getLocalHandoff()).as("a registry's default").isEqualTo(LocalHandoff.DEFAULT);
		assertThatIllegalArgumentException().isThrownBy(() -> new LocalHandoff(true, 0, Duration.ofMillis(50)))
			.withMessageContaining("maxGrants");
		assertThatIllegalArgumentException().isThrownBy(() -> new LocalHandoff(true, -1, Duration.ofMillis(50)))
			.withMessageContaining("maxGrants");
		assertThatIllegalArgumentException().isThrownBy(() -> new LocalHandoff(true, 1, Duration.ZERO))
			.withMessageContaining("maxTime");
		assertThatIllegalArgumentException().isThrownBy(() -> new LocalHandoff(true, 1, Duration.ofMillis(-1)))
			.withMessageContaining("maxTime");
		assertThatNullPointerException().isThrownBy(() -> new LocalHandoff(true, 1, null))
			.withMessageContaining("maxTime");
		assertThatNullPointerException().isThrownBy(() -> this.processA.setLocalHandoff(null));
		LocalHandoff smallest = new LocalHandoff(true, 1, Duration.ofNanos(1));
		this.processA.setLocalHandoff(smallest);
		assertThat(this.processA.getLocalHandoff()).isSameAs(smallest);
	}

	private LockThread thread(String name) {
		LockThread thread = new LockThread(name);
		this.threads.add(thread);
		return thread;
	}

	private void awaitWaiting(int count) {
		await().pollInterval(Duration.ofMillis(5))
			.atMost(LONG)
			.until(() -> admin(this.processA).describeWaitingLocks().size() == count);
	}

	/** The waiter stays waiting for a while (it would be granted within milliseconds if it could be). */
	private static void assertStillWaiting(CompletableFuture<?> waiter) {
		await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !waiter.isDone());
	}

	private LockTarget exclusive(Duration waitTime) {
		return new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, waitTime);
	}

	private LockTarget write(Duration waitTime) {
		return new LockTarget(this.key, LockMode.WRITE, true, 0, waitTime);
	}

	private LockTarget read(Duration waitTime) {
		return new LockTarget(this.key, LockMode.READ, true, 0, waitTime);
	}

	/** The ephemeral znodes below the test's lock path: the grants and waiters of every client. */
	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + this.key);
	}

}
