package io.github.zklock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.ClosedTogether;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link LockRequest#withLockAtLeastFor(Duration)} on a real ZooKeeper server: a grant
 * released before its time stays taken in ZooKeeper (its znode kept, another application busy or
 * skipped) until that time has passed since the grant, while the releasing thread returns at once;
 * a grant held longer is released when asked; the same for a multi-lock as a whole, whose parts
 * taken before a busy key are released at once; a grant lost with its session is not released
 * later with an error, and its loss does not interrupt the thread that acquired it; the requests that cannot be kept after their call (thread-bound ones) and
 * negative durations are refused. "Two applications" are two clients of one server.
 */
class LockAtLeastForTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	/**
	 * How long a grant is kept: long enough for another application's one-attempt requests on a
	 * loaded machine to find it kept (a few round trips), and waited for whole by most tests here.
	 */
	private static final Duration AT_LEAST = Duration.ofSeconds(1);

	/** How early a timed event may be seen: Curator and ZooKeeper time by the wall clock. */
	private static final Duration CLOCK_GRANULARITY = Duration.ofMillis(20);

	/** The clients this test made, closed together once what uses them is closed. */
	private final List<CuratorFramework> clients = new ArrayList<>();

	private CuratorFramework observer;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate other;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.observer = newClient();
		this.registry = new CuratorLockRegistry(newClient(), ROOT, 100);
		this.template = new LockTemplate(this.registry, Duration.ofSeconds(10));
		this.otherRegistry = new CuratorLockRegistry(newClient(), ROOT, 100);
		this.other = new LockTemplate(this.otherRegistry, Duration.ofSeconds(10));
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.registry.close();
		this.otherRegistry.close();
		ClosedTogether.close(this.clients);
	}

	private CuratorFramework newClient() throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient();
		this.clients.add(client);
		return client;
	}

	private LockRequest kept(String key) {
		return LockRequest.of(key).withReentrant(false).withWaitTime(Duration.ZERO).withLockAtLeastFor(AT_LEAST);
	}

	@Test
	void quickActionKeepsTheKeyUntilLockAtLeastForHasPassedSinceTheGrant() throws Exception {
		AtomicLong grantedAt = new AtomicLong();
		LockHandle handle = this.template.execute(kept(this.key), (granted) -> {
			grantedAt.set(System.nanoTime());
			return granted;
		}).result();

		// The calling thread is back while the grant is still held: the release is not a blocked thread.
		assertThat(handle.state()).isEqualTo(LockState.HELD);
		assertThat(znodes(this.key)).hasSize(1);
		assertThat(this.other.tryAcquire(kept(this.key))).isEmpty();
		LockResult<String> result = this.other.execute(kept(this.key).withOnBusy(OnBusy.SKIP), (granted) -> "ran");
		assertThat(result.wasExecuted()).isFalse();

		LockHandle next = await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.other.tryAcquire(kept(this.key)).orElse(null), (granted) -> granted != null);
		long heldFor = System.nanoTime() - grantedAt.get();
		assertThat(Duration.ofNanos(heldFor)).isGreaterThanOrEqualTo(AT_LEAST.minus(CLOCK_GRANULARITY));
		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
		next.release();
	}

	@Test
	void actionLongerThanLockAtLeastForReleasesWhenItReturns() {
		LockRequest request = LockRequest.of(this.key).withReentrant(false).withWaitTime(Duration.ZERO)
			.withLockAtLeastFor(Duration.ofMillis(50));
		LockHandle handle = this.template.execute(request, (granted) -> {
			await().pollDelay(Duration.ofMillis(100)).atMost(Duration.ofSeconds(1)).until(() -> true);
			return granted;
		}).result();

		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
		Optional<LockHandle> next = this.other.tryAcquire(kept(this.key));
		assertThat(next).isPresent();
		next.get().release();
	}

	@Test
	void acquiredGrantReleasedEarlyIsKeptAndASecondReleaseChangesNothing() throws Exception {
		LockHandle handle = this.template.acquire(kept(this.key));
		handle.release();
		handle.release();

		assertThat(handle.state()).isEqualTo(LockState.HELD);
		assertThat(this.other.tryAcquire(kept(this.key))).isEmpty();
		await().atMost(AT_LEAST.plusSeconds(5)).until(() -> handle.state() == LockState.RELEASED);
		// The release thread marks the grant released, then deletes its znode.
		await().atMost(AT_LEAST.plusSeconds(5)).untilAsserted(() -> assertThat(znodes(this.key)).isEmpty());
	}

	@Test
	void keepAtLeastViewsComposeSoTheLaterTimeWins() throws Exception {
		LockRequest quick = LockRequest.of(this.key).withReentrant(false).withWaitTime(Duration.ZERO)
			.withLockAtLeastFor(Duration.ofMillis(200));
		LockHandle handle = this.template.acquire(quick);
		long extendedAt = System.nanoTime();
		LockHandle extended = handle.keepAtLeast(AT_LEAST);
		assertThat(extended.keepAtLeast(Duration.ZERO)).isSameAs(extended);
		assertThatIllegalArgumentException().isThrownBy(() -> handle.keepAtLeast(Duration.ofMillis(-1)));

		extended.release();
		await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.other.tryAcquire(kept(this.key)).map((next) -> {
				next.release();
				return true;
			}).orElse(false));
		// Not at the grant's own 200 ms: the extension's time counted.
		assertThat(Duration.ofNanos(System.nanoTime() - extendedAt))
			.isGreaterThanOrEqualTo(AT_LEAST.minus(CLOCK_GRANULARITY));
		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
	}

	@Test
	void permitIsKeptToo() throws Exception {
		LockRequest permit = LockRequest.permit(this.key, 1).withWaitTime(Duration.ZERO).withLockAtLeastFor(AT_LEAST);
		LockHandle handle = this.template.acquire(permit);
		handle.release();

		assertThat(this.other.tryAcquire(permit)).isEmpty();
		await().atMost(AT_LEAST.plusSeconds(5)).until(() -> handle.state() == LockState.RELEASED);
		// Marked released before its lease is deleted: the other application gets the permit soon after.
		Optional<LockHandle> next = await().atMost(AT_LEAST.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.other.tryAcquire(permit), Optional::isPresent);
		next.get().release();
	}

	@Test
	void multiLockIsKeptAsAWhole() throws Exception {
		LockRequest both = kept(this.key + "/a").withKeys(List.of(this.key + "/a", this.key + "/b"));
		LockHandle multi = this.template.execute(both, (granted) -> granted).result();

		assertThat(multi.state()).isEqualTo(LockState.HELD);
		assertThat(this.other.tryAcquire(kept(this.key + "/a"))).isEmpty();
		assertThat(this.other.tryAcquire(kept(this.key + "/b"))).isEmpty();
		await().atMost(AT_LEAST.plusSeconds(5)).until(() -> multi.state() == LockState.RELEASED);
		// Released with its first part released; the parts go one after the other.
		await().atMost(AT_LEAST.plusSeconds(5)).untilAsserted(() -> {
			assertThat(znodes(this.key + "/a")).isEmpty();
			assertThat(znodes(this.key + "/b")).isEmpty();
		});
	}

	@Test
	void partsOfAMultiLockGivenUpOnABusyKeyAreReleasedAtOnce() throws Exception {
		LockHandle busy = this.other.acquire(kept(this.key + "/b"));
		LockRequest both = kept(this.key + "/a").withKeys(List.of(this.key + "/a", this.key + "/b"))
			.withOnBusy(OnBusy.SKIP);

		LockResult<String> result = this.template.execute(both, (granted) -> "ran");

		assertThat(result.wasExecuted()).isFalse();
		// Key a was taken first, then given up: not kept for lockAtLeastFor.
		assertThat(znodes(this.key + "/a")).isEmpty();
		Optional<LockHandle> a = this.other.tryAcquire(kept(this.key + "/a"));
		assertThat(a).isPresent();
		a.get().release();
		busy.release();
	}

	@Test
	void grantLostWithItsSessionIsNotReleasedLaterWithAnError() throws Exception {
		CuratorFramework client = newClient();
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 100);
		try {
			// Longer than the expiry takes to be noticed (about 1.5 s here: the client's next
			// connection attempt, up to a second after the server closed its connection, is told).
			Duration atLeast = Duration.ofSeconds(3);
			LockHandle handle = new LockTemplate(registry, Duration.ZERO)
				.acquire(kept(this.key).withLockAtLeastFor(atLeast));
			handle.release();
			zooKeeper.expireSession(client);
			await().atMost(Duration.ofSeconds(10)).until(() -> handle.state() == LockState.LOST);

			// The session took the znode: another application gets the key before lockAtLeastFor ends.
			LockHandle next = await().atMost(Duration.ofSeconds(10))
				.until(() -> this.other.tryAcquire(kept(this.key)).orElse(null), (granted) -> granted != null);
			next.release();
			await().atMost(atLeast.plusSeconds(5)).until(() -> handle.state() == LockState.RELEASED);
		}
		finally {
			registry.close();
		}
	}

	@Test
	void lossWhileKeptDoesNotInterruptTheThreadThatAcquiredTheGrant() throws Exception {
		CuratorFramework client = newClient();
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 100);
		registry.setInterruptOnLost(true);
		LockTemplate template = new LockTemplate(registry, Duration.ZERO);
		CountDownLatch lost = new CountDownLatch(1);
		registry.addLockStateListener((event) -> {
			if (event.state() == LockState.LOST) {
				lost.countDown();
			}
		});
		CompletableFuture<LockHandle> granted = new CompletableFuture<>();
		CountDownLatch moveOn = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		// The job runs and returns on its thread, which then waits for other work; the grant is kept.
		Thread scheduler = new Thread(() -> {
			granted.complete(template.execute(kept(this.key).withLockAtLeastFor(Duration.ofSeconds(10)),
					(handle) -> handle).result());
			try {
				moveOn.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
			}
		});
		scheduler.start();
		try {
			LockHandle handle = granted.get(10, TimeUnit.SECONDS);
			zooKeeper.expireSession(client);
			// The interrupt, if any, comes before the listeners are told.
			assertThat(lost.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(handle.state()).isEqualTo(LockState.LOST);
			moveOn.countDown();
			scheduler.join(10_000);
			assertThat(scheduler.isAlive()).isFalse();
			assertThat(interrupted).as("the thread that acquired the kept grant was interrupted").isFalse();
		}
		finally {
			moveOn.countDown();
			registry.close();
		}
	}

	@Test
	void keptExclusiveRequestIsBoundToNoThreadAndThreadBoundModesAndNegativeDurationsAreRefused() {
		// The rule of @DistributedLock(lockAtLeastFor) too: the kept grant is released by another
		// thread, so the request is not reentrant, whatever was asked.
		assertThat(LockRequest.of(this.key).withLockAtLeastFor(AT_LEAST).reentrant()).isFalse();
		assertThat(kept(this.key).withReentrant(true).reentrant()).isFalse();
		assertThat(kept(this.key).withLockAtLeastFor(Duration.ZERO).withReentrant(true).reentrant()).isTrue();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.of(this.key).withMode(LockMode.READ).withLockAtLeastFor(AT_LEAST))
			.withMessageContaining("READ");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.of(this.key).withMode(LockMode.WRITE).withLockAtLeastFor(AT_LEAST))
			.withMessageContaining("WRITE");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> kept(this.key).withLockAtLeastFor(Duration.ofMillis(-1)))
			.withMessageContaining("PT-0.001S");
		assertThat(kept(this.key).withLockAtLeastFor(Duration.ZERO).lockAtLeastFor()).isZero();
		assertThat(LockRequest.of(this.key).lockAtLeastFor()).isZero();
	}

	@Test
	void multiLockHasOneLockAtLeastForAndNoPermits() {
		// One request, one lockAtLeastFor for every key (keys that differ cannot be expressed).
		LockRequest both = kept(this.key + "/a").withKeys(List.of(this.key + "/a", this.key + "/b"));
		assertThat(both.lockAtLeastFor()).isEqualTo(AT_LEAST);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.permit(this.key, 2).withKeys(List.of(this.key + "/a", this.key + "/b")))
			.withMessageContaining("permit");
	}

	@Test
	void keepingAGrantBoundToItsThreadIsRefused() {
		LockHandle bound = this.template.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			// Its release would come from the scheduler thread, which Curator refuses.
			assertThatIllegalStateException().isThrownBy(() -> bound.keepAtLeast(AT_LEAST))
				.withMessageContaining("bound to thread");
			assertThatIllegalStateException().isThrownBy(() -> bound.keepAtLeast(Duration.ZERO));
		}
		finally {
			bound.release();
		}
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	private List<String> znodes(String key) throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ROOT + key);
	}

}
