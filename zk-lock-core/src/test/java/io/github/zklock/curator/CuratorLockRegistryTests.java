package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockUpgradeException;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Behaviour of {@link CuratorLockRegistry} that belongs to one lock kind or to the registry's own
 * machinery, on a real ZooKeeper server: reentrancy and thread binding, READ/WRITE interplay
 * (sharing, downgrade, refused upgrade), the cache of lock keys and the local queue of waiting threads.
 * Two independent clients, each with its own registry, stand for two processes. What every lock
 * kind must do (exclusion, wait times, release, fencing tokens, invalid keys, interruption, failures)
 * is the contract of {@link AbstractLockRegistryContractTests}.
 */
class CuratorLockRegistryTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration SHORT = Duration.ofMillis(200);

	private static final Duration LONG = Duration.ofSeconds(10);

	private static final Duration FOREVER = LockRequest.WAIT_FOREVER;

	private static final Executor NEW_THREAD = (task) -> new Thread(task).start();

	private CuratorFramework clientA;

	private CuratorLockRegistry processA;

	private CuratorLockRegistry processB;

	private String path;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.clientA = zooKeeper.newClient();
		this.processA = new CuratorLockRegistry(this.clientA, "/locks", 100);
		this.processB = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.path = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.processA.close();
		this.processB.close();
	}

	@Test
	void reentersSamePathInSameThread() {
		LockHandle outer = acquire(this.processA, LockMode.EXCLUSIVE, Duration.ZERO);
		LockHandle inner = acquire(this.processA, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());

		inner.release();
		assertThat(outer.isHeld()).isTrue();
		assertThat(this.processB.tryAcquire(request(LockMode.EXCLUSIVE, true, Duration.ZERO))).isEmpty();

		outer.release();
		acquire(this.processB, LockMode.EXCLUSIVE, Duration.ZERO).release();
	}

	@ParameterizedTest
	@CsvSource({ "EXCLUSIVE, EXCLUSIVE", "WRITE, WRITE", "WRITE, READ", "READ, READ" })
	void grantNestedInAGrantLostWithItsSessionFailsUntilTheLostGrantIsReleased(LockMode outerMode,
			LockMode innerMode) throws Exception {
		LockHandle outer = acquire(this.processA, outerMode, Duration.ZERO);
		zooKeeper.expireSession(this.clientA);
		await().atMost(LONG).until(() -> outer.state() == LockState.LOST);
		// Curator would re-enter (or take READ under WRITE) locally, on a znode that is gone.
		assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> this.processA.tryAcquire(request(innerMode, true, Duration.ZERO)))
			.withMessageContaining("enclosing grant")
			.withMessageContaining("/locks" + this.path);
		assertThat(admin(this.processA).heldLockCount()).isEqualTo(1);
		// Another client holds the key meanwhile.
		LockHandle other = acquire(this.processB, (outerMode == LockMode.EXCLUSIVE) ? LockMode.EXCLUSIVE : LockMode.WRITE,
				Duration.ZERO);
		other.release();

		outer.release();
		LockHandle again = acquire(this.processA, innerMode, LONG);
		assertThat(again.isHeld()).isTrue();
		assertThat(children()).hasSize(1);
		again.release();
	}

	/**
	 * The listeners are told of a grant lost with its session only once its key has taken its turn
	 * away: a request nested in it from then on is refused as nested in a lost grant, never granted
	 * on the turn (and then lost). The listener holds the thread that tells until the nested request
	 * is answered, so that the request is made at the moment the listeners are told.
	 */
	@ParameterizedTest
	@CsvSource({ "EXCLUSIVE, EXCLUSIVE", "WRITE, WRITE", "WRITE, READ", "READ, READ" })
	void grantNestedAsTheListenersAreToldOfItsLossIsRefused(LockMode outerMode, LockMode innerMode) throws Exception {
		LockHandle outer = acquire(this.processA, outerMode, Duration.ZERO);
		CountDownLatch told = new CountDownLatch(1);
		CountDownLatch nestedAnswered = new CountDownLatch(1);
		this.processA.addLockStateListener((event) -> {
			if (event.handle() == outer && event.state() == LockState.LOST && told.getCount() > 0) {
				told.countDown();
				try {
					nestedAnswered.await(LONG.toMillis(), TimeUnit.MILLISECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		});
		zooKeeper.expireSession(this.clientA);
		try {
			assertThat(told.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).as("the listeners were told").isTrue();
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> this.processA.tryAcquire(request(innerMode, true, Duration.ZERO)))
				.withMessageContaining("enclosing grant");
		}
		finally {
			nestedAnswered.countDown();
		}
		outer.release();
		assertThat(admin(this.processA).heldLockCount()).isZero();
	}

	@Test
	void otherThreadOfSameProcessWaits() throws Exception {
		LockHandle held = acquire(this.processA, LockMode.EXCLUSIVE, Duration.ZERO);
		Optional<RegistryGrant> fromOtherThread = inNewThread(
				() -> this.processA.tryAcquire(request(LockMode.EXCLUSIVE, true, SHORT)))
			.get(10, TimeUnit.SECONDS);
		assertThat(fromOtherThread).isEmpty();
		held.release();
	}

	@Test
	void nonReentrantNestedCallFailsAfterItsWaitTime() {
		// The whole scenario runs on the timeout's thread: nesting is a property of the thread.
		assertTimeoutPreemptively(LONG, () -> {
			LockHandle outer = this.processA.tryAcquire(request(LockMode.EXCLUSIVE, false, Duration.ZERO))
				.orElseThrow();
			long started = System.nanoTime();
			assertThat(this.processA.tryAcquire(request(LockMode.EXCLUSIVE, false, SHORT))).isEmpty();
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(SHORT);
			outer.release();
		});
	}

	@Test
	void nonReentrantNestedCallWithoutLimitFailsAtOnce() {
		assertTimeoutPreemptively(LONG, () -> {
			LockHandle outer = this.processA.tryAcquire(request(LockMode.EXCLUSIVE, false, Duration.ZERO))
				.orElseThrow();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.processA.tryAcquire(request(LockMode.EXCLUSIVE, false, FOREVER)))
				.withMessageContaining("not reentrant");
			outer.release();
		});
		// Released: free for another process.
		this.processB.tryAcquire(request(LockMode.EXCLUSIVE, false, Duration.ZERO)).orElseThrow().release();
	}

	@Test
	void nonReentrantLockExcludesOtherClientAndMayBeReleasedByAnyThread() throws Exception {
		LockHandle held = this.processA.tryAcquire(request(LockMode.EXCLUSIVE, false, Duration.ZERO)).orElseThrow();
		assertThat(this.processB.tryAcquire(request(LockMode.EXCLUSIVE, false, SHORT))).isEmpty();

		CompletableFuture.runAsync(held::release).get(10, TimeUnit.SECONDS);
		this.processB.tryAcquire(request(LockMode.EXCLUSIVE, false, SHORT)).orElseThrow().release();
	}

	@Test
	void reentrantGrantMustBeReleasedByItsThread() throws Exception {
		LockHandle held = acquire(this.processA, LockMode.EXCLUSIVE, Duration.ZERO);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		CompletableFuture.runAsync(held::release).exceptionally((ex) -> {
			failure.set(ex.getCause());
			return null;
		}).get(10, TimeUnit.SECONDS);
		assertThat(failure.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("must be released by it");
		assertThat(held.isHeld()).isTrue();
		held.release();
		// Releasing twice is harmless.
		held.release();
	}

	@Test
	void readLocksAreShared() throws Exception {
		LockHandle readA = acquire(this.processA, LockMode.READ, Duration.ZERO);
		// Process B works on its own thread, as it would in its own JVM.
		CompletableFuture.runAsync(() -> {
			LockHandle readB = acquire(this.processB, LockMode.READ, Duration.ZERO);
			assertThat(readA.isHeld()).isTrue();
			assertThat(readB.isHeld()).isTrue();
			readB.release();
			assertThat(this.processB.tryAcquire(request(LockMode.WRITE, true, SHORT))).isEmpty();
		}).get(10, TimeUnit.SECONDS);
		readA.release();
		acquire(this.processB, LockMode.WRITE, Duration.ZERO).release();
	}

	@Test
	void writeExcludesReadersAndWriters() {
		LockHandle write = acquire(this.processA, LockMode.WRITE, Duration.ZERO);
		assertThat(this.processB.tryAcquire(request(LockMode.READ, true, SHORT))).isEmpty();
		assertThat(this.processB.tryAcquire(request(LockMode.WRITE, true, SHORT))).isEmpty();
		write.release();
		acquire(this.processB, LockMode.READ, Duration.ZERO).release();
	}

	/**
	 * A WRITE holder's READ rides its WRITE znode, also after the WRITE is released: other writers
	 * and readers stay out until both are released, with hand-off disabled as with it on. (Curator's
	 * own downgrade, a READ znode of its own granted because the thread holds the write lock, lets
	 * other readers in once the WRITE is released, and a writer queued between the two znodes as
	 * well, since the READ's grant is not checked again.)
	 */
	@Test
	void writeHolderMayTakeReadLockWhichKeepsOthersOutUntilReleased() {
		this.processA.setLocalHandoff(LocalHandoff.DISABLED);
		LockHandle write = acquire(this.processA, LockMode.WRITE, Duration.ZERO);
		LockHandle read = acquire(this.processA, LockMode.READ, Duration.ZERO);
		assertThat(read.isHeld()).isTrue();
		write.release();
		assertThat(this.processB.tryAcquire(request(LockMode.WRITE, true, SHORT))).isEmpty();
		assertThat(this.processB.tryAcquire(request(LockMode.READ, true, SHORT))).isEmpty();
		read.release();
		acquire(this.processB, LockMode.WRITE, Duration.ZERO).release();
		acquire(this.processB, LockMode.READ, Duration.ZERO).release();
	}

	@Test
	void writeHolderTakingReadKeepsOthersOutUntilBothAreReleasedWithLocalHandoff() {
		LockHandle write = acquire(this.processA, LockMode.WRITE, Duration.ZERO);
		LockHandle read = acquire(this.processA, LockMode.READ, Duration.ZERO);
		assertThat(read.isHeld()).isTrue();
		write.release();
		// The READ rides the WRITE's znode, which stays until the READ is released too.
		assertThat(this.processB.tryAcquire(request(LockMode.READ, true, SHORT))).isEmpty();
		assertThat(this.processB.tryAcquire(request(LockMode.WRITE, true, SHORT))).isEmpty();
		read.release();
		acquire(this.processB, LockMode.WRITE, Duration.ZERO).release();
	}

	@Test
	void readHolderAskingForWriteFailsFast() {
		assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
			LockHandle read = acquire(this.processA, LockMode.READ, Duration.ZERO);
			assertThatExceptionOfType(LockUpgradeException.class)
				.isThrownBy(() -> this.processA.tryAcquire(request(LockMode.WRITE, true, FOREVER)))
				.withMessageContaining("/locks" + this.path);
			assertThat(read.isHeld()).isTrue();
			read.release();
		});
		acquire(this.processB, LockMode.WRITE, Duration.ZERO).release();
	}

	/**
	 * The contract checks the tokens of one kind; here grants of two kinds on two keys alternate:
	 * the tokens are znode creation ids, so they rise across kinds and keys as well.
	 */
	@Test
	void fencingTokensStrictlyIncreaseAcrossClientsAndLockKinds() throws Exception {
		long previous = 0;
		for (int i = 0; i < 6; i++) {
			CuratorLockRegistry process = (i % 2 == 0) ? this.processA : this.processB;
			LockMode mode = (i % 3 == 0) ? LockMode.WRITE : LockMode.EXCLUSIVE;
			String lockPath = (mode == LockMode.WRITE) ? this.path + "-rw" : this.path;
			LockHandle handle = acquire(process, lockPath, mode, Duration.ZERO);
			long token = handle.fencingToken();
			String node = ((CuratorLockHandle) handle).nodePath();
			assertThat(token).isEqualTo(this.clientA.checkExists().forPath(node).getCzxid());
			assertThat(token).isGreaterThan(previous);
			previous = token;
			handle.release();
		}
	}

	@Test
	void cacheNeverEvictsKeysInUse() throws Exception {
		CuratorLockRegistry small = new CuratorLockRegistry(this.clientA, "/locks", 2);
		try {
			LockHandle first = acquire(small, this.path + "/0", LockMode.EXCLUSIVE, Duration.ZERO);
			List<LockHandle> others = new ArrayList<>();
			for (int i = 1; i < 6; i++) {
				others.add(acquire(small, this.path + "/" + i, LockMode.EXCLUSIVE, Duration.ZERO));
			}
			others.forEach(LockHandle::release);
			assertThat(admin(small).cachedKeyCount()).isLessThanOrEqualTo(2);
			// The held key survived eviction: re-entering it works and keeps the same znode.
			LockHandle nested = acquire(small, this.path + "/0", LockMode.EXCLUSIVE, Duration.ZERO);
			assertThat(((CuratorLockHandle) nested).nodePath()).isEqualTo(((CuratorLockHandle) first).nodePath());
			nested.release();
			first.release();
			assertThat(admin(small).heldLockCount()).isZero();
		}
		finally {
			small.close();
		}
	}

	@Test
	void threadsWaitingOnOnePathQueueLocallyBehindTheApplicationsZnode() throws Exception {
		this.processA.setLocalHandoff(LocalHandoff.DISABLED);
		LockHandle held = acquire(this.processA, LockMode.EXCLUSIVE, SHORT);
		LockHandle nested = acquire(this.processA, LockMode.EXCLUSIVE, SHORT);
		assertThat(admin(this.processA).cachedKeyCount()).isEqualTo(1);
		List<CompletableFuture<String>> waiters = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			waiters.add(inNewThread(() -> {
				LockHandle granted = acquire(this.processA, LockMode.EXCLUSIVE, LONG);
				String node = ((CuratorLockHandle) granted).nodePath();
				granted.release();
				return node;
			}));
		}
		await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == 3);
		assertThat(admin(this.processA).describeWaitingLocks()).allSatisfy((waiting) -> {
			assertThat(waiting.path()).isEqualTo("/locks" + this.path);
			assertThat(waiting.mode()).isEqualTo(LockMode.EXCLUSIVE);
		});
		assertThat(admin(this.processA).cachedKeyCount()).isEqualTo(1);
		// The holder's znode only: the waiters wait here, and queue one znode at a time.
		assertThat(children()).hasSize(1);
		nested.release();
		held.release();
		List<String> nodes = new ArrayList<>();
		for (CompletableFuture<String> waiter : waiters) {
			nodes.add(waiter.get(10, TimeUnit.SECONDS));
		}
		assertThat(nodes).doesNotHaveDuplicates();
		assertThat(admin(this.processA).describeWaitingLocks()).isEmpty();
		assertThat(admin(this.processA).heldLockCount()).isZero();
		// The idle key is kept for reuse, not created anew.
		assertThat(admin(this.processA).cachedKeyCount()).isEqualTo(1);
		acquire(this.processA, LockMode.EXCLUSIVE, SHORT).release();
		assertThat(admin(this.processA).cachedKeyCount()).isEqualTo(1);
	}

	@Test
	void localWaitersAreGrantedInArrivalOrder() throws Exception {
		LockHandle held = acquire(this.processA, LockMode.EXCLUSIVE, SHORT);
		List<Integer> order = Collections.synchronizedList(new ArrayList<>());
		List<CompletableFuture<Void>> waiters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			int index = i;
			waiters.add(CompletableFuture.runAsync(() -> {
				LockHandle granted = acquire(this.processA, LockMode.EXCLUSIVE, LONG);
				order.add(index);
				granted.release();
			}, runnable -> new Thread(runnable, "waiter-" + index).start()));
			// Arrival order: each waiter is queued before the next one starts.
			int waiting = i + 1;
			await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == waiting);
		}
		held.release();
		CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
		assertThat(order).containsExactly(0, 1, 2, 3);
	}

	@Test
	void nestedCallOfTheHolderIsNotQueuedBehindLocalWaiters() throws Exception {
		LockHandle held = acquire(this.processA, LockMode.EXCLUSIVE, SHORT);
		List<CompletableFuture<Boolean>> waiters = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			waiters.add(grantedAndReleased(LONG));
		}
		await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == 3);
		// The queue of this process is full (holder and successor); a nested call re-enters anyway.
		LockHandle nested = acquire(this.processA, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(nested.path()).isEqualTo(held.path());
		nested.release();
		// Another thread asking without waiting finds the lock busy, as it is.
		assertThat(grantedAndReleased(Duration.ZERO).get(10, TimeUnit.SECONDS)).isFalse();
		held.release();
		for (CompletableFuture<Boolean> waiter : waiters) {
			assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(admin(this.processA).heldLockCount()).isZero();
	}

	@Test
	void interruptWhileWaitingInTheLocalQueueRestoresTheFlag() throws Exception {
		this.processA.setLocalHandoff(LocalHandoff.DISABLED);
		LockHandle held = acquire(this.processA, LockMode.EXCLUSIVE, SHORT);
		CompletableFuture<Boolean> successor = grantedAndReleased(LONG);
		await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == 1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicReference<Boolean> interrupted = new AtomicReference<>();
		Thread waiter = new Thread(() -> {
			try {
				this.processA.tryAcquire(request(LockMode.EXCLUSIVE, true, FOREVER));
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
			interrupted.set(Thread.currentThread().isInterrupted());
		});
		waiter.start();
		await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == 2);
		waiter.interrupt();
		waiter.join(10_000);
		assertThat(failure.get()).isExactlyInstanceOf(LockException.class).hasMessageContaining("interrupted");
		assertThat(interrupted.get()).isTrue();
		held.release();
		assertThat(successor.get(10, TimeUnit.SECONDS)).isTrue();
		// The interrupted waiter gave its place back: the next thread is admitted at once.
		acquire(this.processA, LockMode.EXCLUSIVE, SHORT).release();
	}

	@Test
	void readersOfOneProcessHoldTogetherAndItsWritersQueueOneZnode() throws Exception {
		this.processA.setLocalHandoff(LocalHandoff.DISABLED);
		int readers = 4;
		CountDownLatch allHold = new CountDownLatch(readers);
		CountDownLatch release = new CountDownLatch(1);
		List<CompletableFuture<Void>> reads = new ArrayList<>();
		for (int i = 0; i < readers; i++) {
			reads.add(CompletableFuture.runAsync(() -> {
				LockHandle read = acquire(this.processA, LockMode.READ, LONG);
				allHold.countDown();
				try {
					assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
				read.release();
			}, NEW_THREAD));
		}
		assertThat(allHold.await(10, TimeUnit.SECONDS)).as("readers not limited by the local queue").isTrue();
		List<CompletableFuture<Void>> writes = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			writes.add(CompletableFuture.runAsync(() -> acquire(this.processA, LockMode.WRITE, LONG).release(),
					NEW_THREAD));
		}
		await().atMost(LONG).until(() -> admin(this.processA).describeWaitingLocks().size() == 3);
		// Four read znodes and one znode for the three writers.
		await().atMost(LONG).until(() -> children().size() == readers + 1);
		release.countDown();
		CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
		CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
		assertThat(admin(this.processA).heldLockCount()).isZero();
	}

	@Test
	void writeHolderOfOneThreadExcludesReaderOfAnother() throws Exception {
		LockHandle write = acquire(this.processA, LockMode.WRITE, SHORT);
		CompletableFuture<Boolean> reader = inNewThread(
				() -> this.processA.tryAcquire(request(LockMode.READ, true, SHORT)).isPresent());
		assertThat(reader.get(10, TimeUnit.SECONDS)).isFalse();
		// The holder's own READ is a downgrade through its instance.
		LockHandle read = acquire(this.processA, LockMode.READ, Duration.ZERO);
		read.release();
		write.release();
	}

	/**
	 * Ask for the test's path, EXCLUSIVE, in a thread of its own, and release when granted.
	 * @return whether it was granted within the wait time
	 */
	private CompletableFuture<Boolean> grantedAndReleased(Duration waitTime) {
		return inNewThread(() -> this.processA.tryAcquire(request(LockMode.EXCLUSIVE, true, waitTime))
			.map((granted) -> {
				granted.release();
				return true;
			})
			.orElse(false));
	}

	/**
	 * Run a task in a new thread. Not the common pool: on two cores it may run one task at a time,
	 * and these tasks block.
	 */
	private static <T> CompletableFuture<T> inNewThread(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, NEW_THREAD);
	}

	private LockTarget request(LockMode mode, boolean reentrant, Duration waitTime) {
		return new LockTarget(this.path, mode, reentrant, 0, waitTime);
	}

	private LockHandle acquire(CuratorLockRegistry registry, LockMode mode, Duration waitTime) {
		return acquire(registry, this.path, mode, waitTime);
	}

	private static LockHandle acquire(CuratorLockRegistry registry, String path, LockMode mode, Duration waitTime) {
		return registry.tryAcquire(new LockTarget(path, mode, true, 0, waitTime))
			.orElseThrow(() -> new AssertionError("not granted: " + path));
	}

	private List<String> children() throws Exception {
		return this.clientA.getChildren().forPath("/locks" + this.path);
	}

}
