package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The contract of a {@link LockRegistry} grant, which every lock kind of {@link CuratorLockRegistry}
 * must keep: a subclass per kind says which request it makes and which request of another process
 * its grant excludes. Two registries on two clients of one real ZooKeeper server stand for two
 * processes. Covered: mutual exclusion, the three kinds of wait time (zero, bounded, without limit),
 * release, the handle's states after release and after the session expired, fencing tokens, invalid
 * keys and a missing wait time (refused before any request), an interrupted waiter and a stopped
 * server (a {@link LockException}, never an empty "busy" result), and that no attempt leaves a znode
 * behind. Kind-specific behaviour (reentrancy, READ/WRITE interplay, cache of lock keys, local queue) is in
 * {@link CuratorLockRegistryTests}.
 *
 * <p>One server serves each subclass; the clients are made afresh for each test, with a short
 * connection timeout and a single retry so that a stopped server fails a request within seconds.
 */
abstract class AbstractLockRegistryContractTests {

	/**
	 * One extension for all subclasses, which run one after the other: JUnit starts its server
	 * before each subclass's first test and stops it after its last. The test that stops the server
	 * restarts it.
	 */
	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	static final String ROOT = "/locks";

	static final Duration SHORT = Duration.ofMillis(200);

	static final Duration LONG = Duration.ofSeconds(10);

	private final CountingZooKeeper.Counts countsA = new CountingZooKeeper.Counts();

	private final CountingZooKeeper.Counts countsB = new CountingZooKeeper.Counts();

	private CuratorFramework clientA;

	private CuratorFramework observer;

	private CuratorLockRegistry processA;

	private CuratorLockRegistry processB;

	private String key;

	/**
	 * Return the request of the lock kind under test.
	 * @param key the key to lock
	 * @param waitTime its wait time
	 * @return the request
	 */
	protected abstract LockTarget request(String key, Duration waitTime);

	/**
	 * Return a request of another process that a grant of {@link #request} excludes, and that
	 * excludes it: by default the same request.
	 * @param key the key to lock
	 * @param waitTime its wait time
	 * @return the request
	 */
	protected LockTarget excludingRequest(String key, Duration waitTime) {
		return request(key, waitTime);
	}

	/**
	 * Return how many znodes one attempt of {@link #excludingRequest} creates, and deletes again
	 * when it is not granted.
	 * @return the number of znodes, 1 for the lock recipes
	 */
	protected int znodesPerAttempt() {
		return 1;
	}

	/**
	 * Check that a grant's znode is the one the kind's Curator recipe creates.
	 * @param lockPath the lock's path
	 * @param node the znode of a grant of {@link #request}
	 */
	protected abstract void assertRecipeZnode(String lockPath, String node);

	/**
	 * Prepare a registry before a test counts the requests of one attempt of
	 * {@link #excludingRequest}, while the key is still free: by default nothing, the first attempt
	 * of a lock costing what any other does.
	 * @param registry the registry whose attempt is counted next
	 * @param key the key
	 */
	protected void beforeCountedAttempt(CuratorLockRegistry registry, String key) {
	}

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.clientA = zooKeeper.newClient((builder) -> counting(builder, this.countsA));
		CuratorFramework clientB = zooKeeper.newClient((builder) -> counting(builder, this.countsB));
		this.observer = zooKeeper.newClient();
		this.processA = new CuratorLockRegistry(this.clientA, ROOT, 100);
		this.processB = new CuratorLockRegistry(clientB, ROOT, 100);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.processA.close();
		this.processB.close();
	}

	private static void counting(CuratorFrameworkFactory.Builder builder, CountingZooKeeper.Counts counts) {
		builder.zookeeperFactory(CountingZooKeeper.factory(counts))
			.connectionTimeoutMs(1000)
			.retryPolicy(new RetryOneTime(100));
	}

	@Test
	void grantIsAZnodeOfTheKindsRecipeBelowTheLockPath() throws Exception {
		LockTarget request = request(this.key, Duration.ZERO);
		LockHandle held = grant(this.processA, request);
		assertThat(held.path()).isEqualTo(ROOT + this.key).isEqualTo(this.processA.lockPath(this.key));
		assertThat(held.mode()).isEqualTo(request.mode());
		assertThat(held.state()).isEqualTo(LockState.HELD);
		assertThat(held.isHeld()).isTrue();
		assertRecipeZnode(held.path(), nodePath(held));
		assertThat(lockZnodes()).containsExactly(nodePath(held));
		held.release();
	}

	@Test
	void twoRegistriesExcludeEachOther() {
		LockHandle held = grant(this.processA, request(this.key, SHORT));
		assertThat(held.isHeld()).isTrue();
		assertThat(this.processB.tryAcquire(excludingRequest(this.key, SHORT))).isEmpty();

		held.release();
		assertThat(held.isHeld()).isFalse();
		LockHandle next = grant(this.processB, excludingRequest(this.key, SHORT));
		assertThat(next.isHeld()).isTrue();
		// And the other way round.
		assertThat(this.processA.tryAcquire(request(this.key, SHORT))).isEmpty();
		next.release();
		grant(this.processA, request(this.key, SHORT)).release();
	}

	@Test
	void zeroWaitMakesExactlyOneAttemptAndLeavesNoZnode() throws Exception {
		beforeCountedAttempt(this.processB, this.key);
		LockHandle held = grant(this.processA, request(this.key, Duration.ZERO));

		this.countsB.reset();
		long started = System.nanoTime();
		assertThat(this.processB.tryAcquire(excludingRequest(this.key, Duration.ZERO))).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		// One attempt: the recipe's znodes created once, and deleted again.
		assertThat(this.countsB.snapshot()).containsEntry("create", (long) znodesPerAttempt())
			.containsEntry("delete", (long) znodesPerAttempt());
		assertThat(lockZnodes()).containsExactly(nodePath(held));

		held.release();
	}

	@Test
	void boundedWaitTimesOutWithAnEmptyResultWhenHeldElsewhere() throws Exception {
		LockHandle held = grant(this.processA, request(this.key, Duration.ZERO));

		long started = System.nanoTime();
		Optional<RegistryGrant> attempt = this.processB.tryAcquire(excludingRequest(this.key, SHORT));
		assertThat(attempt).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(SHORT);
		assertThat(lockZnodes()).containsExactly(nodePath(held));
		assertThat(held.isHeld()).isTrue();

		held.release();
	}

	@Test
	void boundedWaitIsGrantedWhenTheHolderReleasesInTime() throws Exception {
		grantedToWaiterAfterRelease(LONG);
	}

	@Test
	void unlimitedWaitIsGrantedWhenTheHolderReleases() throws Exception {
		grantedToWaiterAfterRelease(LockRequest.WAIT_FOREVER);
	}

	private void grantedToWaiterAfterRelease(Duration waitTime) throws Exception {
		LockHandle held = grant(this.processA, request(this.key, Duration.ZERO));
		CompletableFuture<Optional<RegistryGrant>> waiter = inNewThread(() -> {
			Optional<RegistryGrant> handle = this.processB.tryAcquire(excludingRequest(this.key, waitTime));
			handle.ifPresent(LockHandle::release);
			return handle;
		});
		// The waiter has queued a znode of its own behind the holder's.
		await().atMost(LONG).until(() -> lockZnodes().size() > 1);
		assertThat(waiter).isNotDone();

		held.release();
		assertThat(waiter.get(10, TimeUnit.SECONDS)).isPresent();
		await().atMost(LONG).until(() -> lockZnodes().isEmpty());
	}

	@Test
	void releaseDeletesTheGrantsZnodeAndIsIdempotent() throws Exception {
		LockHandle held = grant(this.processA, request(this.key, Duration.ZERO));
		String node = nodePath(held);
		assertThat(this.observer.checkExists().forPath(node)).isNotNull();
		assertThat(admin(this.processA).heldLockCount()).isOne();

		held.release();
		assertThat(this.observer.checkExists().forPath(node)).isNull();
		assertThat(lockZnodes()).isEmpty();
		assertThat(admin(this.processA).heldLockCount()).isZero();

		this.countsA.reset();
		held.release();
		held.close();
		assertThat(this.countsA.total()).as("requests of a second release").isZero();
		assertThat(held.state()).isEqualTo(LockState.RELEASED);
		// Free for the other process at once.
		grant(this.processB, excludingRequest(this.key, Duration.ZERO)).release();
	}

	@Test
	void releasedHandleReportsReleasedAndRefusesUse() {
		LockHandle handle = grant(this.processA, request(this.key, Duration.ZERO));
		handle.release();
		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
		assertThat(handle.isHeld()).isFalse();
		assertThatIllegalStateException().isThrownBy(handle::checkHeld).withMessageContaining("released");
		assertThatIllegalStateException().isThrownBy(handle::fencingToken).withMessageContaining("released");
	}

	@Test
	void fencingTokenIsPositiveAndStrictlyIncreasesAcrossClients() throws Exception {
		long previous = 0;
		for (int i = 0; i < 6; i++) {
			CuratorLockRegistry process = (i % 2 == 0) ? this.processA : this.processB;
			LockHandle handle = grant(process, request(this.key, Duration.ZERO));
			long token = handle.fencingToken();
			assertThat(token).as("grant %d", i).isPositive().isGreaterThan(previous);
			// The creation id of the grant's znode, read once.
			assertThat(token).isEqualTo(this.observer.checkExists().forPath(nodePath(handle)).getCzxid());
			assertThat(handle.fencingToken()).isEqualTo(token);
			previous = token;
			handle.release();
		}
	}

	@Test
	void invalidKeyFailsBeforeAnyRequest() {
		this.countsA.reset();
		for (String bad : List.of("", "/", "no-slash", "/a//b", "/a/", "/a/./b", "/a/../b", "/a\u0000b")) {
			assertThatExceptionOfType(InvalidLockPathException.class).as(bad)
				.isThrownBy(() -> this.processA.tryAcquire(request(bad, Duration.ZERO)));
		}
		assertThat(this.countsA.total()).as("requests sent").isZero();
		assertThat(admin(this.processA).cachedKeyCount()).isZero();
		assertThat(admin(this.processA).heldLockCount()).isZero();
	}

	@Test
	void waitTimeIsRequired() {
		LockTarget target = request(this.key, Duration.ZERO);
		this.countsA.reset();
		// A target carries a wait time or cannot be made: the registry is never asked without one.
		assertThatNullPointerException()
			.isThrownBy(() -> new LockTarget(target.key(), target.mode(), target.reentrant(), target.permits(), null))
			.withMessageContaining("waitTime");
		assertThat(this.countsA.total()).as("requests sent").isZero();
		assertThat(admin(this.processA).cachedKeyCount()).isZero();
	}

	@Test
	void waiterInterruptedWhileWaitingFailsWithItsFlagSetAndLeavesNoZnode() throws Exception {
		LockHandle held = grant(this.processA, request(this.key, Duration.ZERO));
		CountDownLatch done = new CountDownLatch(1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicBoolean interrupted = new AtomicBoolean();
		Thread waiter = new Thread(() -> {
			try {
				this.processB.tryAcquire(excludingRequest(this.key, LockRequest.WAIT_FOREVER));
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
			interrupted.set(Thread.currentThread().isInterrupted());
			done.countDown();
		});
		waiter.start();
		await().atMost(LONG).until(() -> lockZnodes().size() > 1);
		waiter.interrupt();
		assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(failure.get()).isExactlyInstanceOf(LockException.class).hasMessageContaining("interrupted");
		assertThat(interrupted.get()).as("interrupt flag after the failure").isTrue();
		// The waiter's znodes are gone, the holder is unaffected.
		await().atMost(LONG).until(() -> lockZnodes().equals(List.of(nodePath(held))));
		assertThat(held.isHeld()).isTrue();
		assertThat(admin(this.processB).heldLockCount()).isZero();
		held.release();
	}

	@Test
	void zooKeeperDownIsALockExceptionNeverBusy() throws Exception {
		TestingServer server = zooKeeper.getServer();
		server.stop();
		try {
			for (Duration waitTime : List.of(Duration.ZERO, Duration.ofMillis(100))) {
				assertTimeoutPreemptively(Duration.ofSeconds(20),
						() -> assertThatExceptionOfType(LockException.class).as("wait time %s", waitTime)
							.isThrownBy(() -> this.processA.tryAcquire(request(this.key, waitTime)))
							.isNotInstanceOf(LockAcquisitionException.class)
							.withMessageContaining("ZooKeeper is unreachable"));
			}
			assertThat(admin(this.processA).heldLockCount()).isZero();
		}
		finally {
			// The other tests of the class use the server.
			server.restart();
		}
	}

	@Test
	void holderWhoseSessionExpiresIsLostAndTheOtherClientIsGranted() throws Exception {
		LockHandle held = grant(this.processA, request(this.key, Duration.ZERO));
		long token = held.fencingToken();
		CompletableFuture<Long> waiter = inNewThread(() -> {
			LockHandle next = grant(this.processB, excludingRequest(this.key, LONG));
			try {
				return next.fencingToken();
			}
			finally {
				next.release();
			}
		});
		await().atMost(LONG).until(() -> lockZnodes().size() > 1);
		assertThat(waiter).isNotDone();

		zooKeeper.expireSession(this.clientA);
		await().atMost(LONG).until(() -> held.state() == LockState.LOST);
		assertThat(held.isHeld()).isFalse();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(held::checkHeld)
			.withMessageContaining("session was lost");
		assertThat(waiter.get(10, TimeUnit.SECONDS)).as("token of the next grant").isGreaterThan(token);
		// Releasing a lost grant is harmless.
		held.release();
		assertThat(held.state()).isEqualTo(LockState.RELEASED);
	}

	/**
	 * Return the ephemeral znodes below the test's lock path, at any depth: the grants and waiters
	 * of every client, whatever the recipe.
	 */
	private List<String> lockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + this.key);
	}

	static String nodePath(LockHandle handle) {
		return ((CuratorLockHandle) handle).nodePath();
	}

	private static LockHandle grant(CuratorLockRegistry registry, LockTarget request) {
		return registry.tryAcquire(request).orElseThrow(() -> new AssertionError("not granted: " + request));
	}

	/**
	 * Run a blocking task in a new thread, as another process would (not the common pool, which on
	 * two cores may run one task at a time).
	 */
	private static <T> CompletableFuture<T> inNewThread(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, (runnable) -> new Thread(runnable).start());
	}

}
