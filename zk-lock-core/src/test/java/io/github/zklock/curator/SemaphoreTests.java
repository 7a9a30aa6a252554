package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Permits of a semaphore (a {@link LockTarget} with permits, {@link LockRequest#permit(String, int)})
 * on a real ZooKeeper server, with three
 * clients, each with its own registry and template, standing for three applications: never more
 * holders than permits under contention, a permit released from another thread, fencing tokens
 * (the lease znode's creation id), a request refused while every permit is held, nested requests
 * of one thread, no lease left behind by a holder or a waiter whose session expired or by an
 * interrupted waiter (Curator's orphaned-lease bugs CURATOR-595, -462 and -315), and exclusion
 * together with raw Curator {@code InterProcessSemaphoreV2} participants. The number of permits stored with the
 * key is covered by {@link SemaphorePermitsTests}, request counts by
 * {@link SemaphoreRequestCountTests}, the single-permit contract by
 * {@link SemaphoreRegistryContractTests}.
 */
class SemaphoreTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration SHORT = Duration.ofMillis(200);

	private static final Duration LONG = Duration.ofSeconds(10);

	private final List<Application> applications = new ArrayList<>();

	private CuratorFramework observer;

	private String key;

	private String lockPath;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		for (int i = 0; i < 3; i++) {
			CuratorFramework client = zooKeeper.newClient();
			CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 100);
			this.applications.add(new Application(client, registry, new LockTemplate(registry, LONG)));
		}
		this.observer = zooKeeper.newClient();
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
		this.lockPath = ROOT + this.key;
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.applications.forEach((application) -> application.registry().close());
	}

	@Test
	void atMostTwoOfTwelveThreadsInThreeApplicationsHoldAPermitAtOnce() throws Exception {
		int threadsPerApplication = 4;
		int cycles = 8;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		AtomicInteger leases = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		CountDownLatch twoInside = new CountDownLatch(2);
		List<CompletableFuture<Void>> threads = new ArrayList<>();
		for (Application application : this.applications) {
			for (int t = 0; t < threadsPerApplication; t++) {
				threads.add(inNewThread(() -> {
					awaitQuietly(start);
					for (int i = 0; i < cycles; i++) {
						LockHandle permit = application.template().acquire(LockRequest.permit(this.key, 2).withWaitTime(LONG));
						try {
							maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
							leases.incrementAndGet();
							// The first holder stays until a second one is in: both permits are used.
							twoInside.countDown();
							awaitQuietly(twoInside);
							// The work under the permit: longer than an acquisition, which Curator
							// serializes on the semaphore's internal lock, so that the number of
							// permits, not that lock, limits how many are inside.
							sleepQuietly(10);
						}
						finally {
							inside.decrementAndGet();
							permit.release();
						}
					}
					return null;
				}));
			}
		}
		start.countDown();
		CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

		assertThat(leases.get()).isEqualTo(this.applications.size() * threadsPerApplication * cycles);
		assertThat(maxInside.get()).as("most holders at once; both permits used").isEqualTo(2);
		assertThat(leaseZnodes()).isEmpty();
		assertThat(this.applications).allSatisfy(
				(application) -> assertThat(admin(application.registry()).heldLockCount()).isZero());
	}

	@Test
	void permitIsReleasableFromAnotherThreadAndItsTokenIsTheLeaseZnodesCreationId() throws Exception {
		LockHandle permit = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		String node = node(permit);
		assertThat(ZKPaths.getPathAndNode(node).getPath()).isEqualTo(leasesPath());
		Stat stat = this.observer.checkExists().forPath(node);
		assertThat(stat).isNotNull();
		assertThat(stat.getEphemeralOwner())
			.isEqualTo(client(0).getZookeeperClient().getZooKeeper().getSessionId());
		assertThat(permit.fencingToken()).isEqualTo(stat.getCzxid());

		long firstToken = permit.fencingToken();
		inNewThread(() -> {
			permit.release();
			return null;
		}).get(10, TimeUnit.SECONDS);
		assertThat(permit.state()).isEqualTo(LockState.RELEASED);
		assertThat(this.observer.checkExists().forPath(node)).isNull();
		assertThat(admin(registry(0)).heldLockCount()).isZero();

		// Successive leases of every application, some held together: strictly increasing tokens,
		// each its own lease znode's creation id.
		long previous = firstToken;
		LockHandle kept = null;
		for (int i = 0; i < 6; i++) {
			LockHandle next = registry(i % 3).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
			long token = next.fencingToken();
			assertThat(token).as("lease %d", i)
				.isGreaterThan(previous)
				.isEqualTo(this.observer.checkExists().forPath(node(next)).getCzxid());
			previous = token;
			if (kept != null) {
				kept.release();
			}
			kept = next;
		}
		kept.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void thirdRequestWhileBothPermitsAreHeldIsRefusedWithinItsWait() throws Exception {
		LockHandle first = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle second = registry(1).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();

		long started = System.nanoTime();
		assertThat(registry(2).tryAcquire(permits(2, SHORT))).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(SHORT).isLessThan(LONG);
		assertThat(registry(2).tryAcquire(permits(2, Duration.ZERO))).isEmpty();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> template(2).acquire(LockRequest.permit(this.key, 2).withWaitTime(SHORT)))
			.withMessageContaining("all 2 permits are held")
			.satisfies((ex) -> {
				assertThat(ex.getPath()).isEqualTo(this.lockPath);
				assertThat(ex.getWaitTime()).isEqualTo(SHORT);
			});
		// The refused requests left no lease behind.
		assertThat(leaseZnodes()).containsExactlyInAnyOrder(node(first), node(second));
		assertThat(admin(registry(2)).heldLockCount()).isZero();
		// The operators' view lists the two leases, of any application.
		assertThat(admin(registry(2)).describeParticipants(this.key)).extracting(LockParticipant::fencingToken)
			.containsExactly(first.fencingToken(), second.fencingToken());
		assertThat(admin(registry(2)).describeParticipants(this.key)).extracting(LockParticipant::kind)
			.containsOnly("PERMIT (of 2)");

		second.release();
		LockHandle third = template(2).acquire(LockRequest.permit(this.key, 2).withWaitTime(Duration.ZERO));
		assertThat(third.isHeld()).isTrue();
		assertThat(first.isHeld()).isTrue();
		first.release();
		third.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void waiterIsGrantedWhenAPermitIsReleased() throws Exception {
		LockHandle first = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle second = registry(1).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		CompletableFuture<Long> waiter = inNewThread(() -> {
			LockHandle granted = template(2).acquire(LockRequest.permit(this.key, 2).withWaitTime(LONG));
			try {
				return granted.fencingToken();
			}
			finally {
				granted.release();
			}
		});
		// The waiter's lease znode is queued beside the two held ones.
		await().atMost(LONG).until(() -> leaseZnodes().size() == 3);
		assertThat(waiter).isNotDone();

		first.release();
		assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(second.fencingToken());
		second.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void nestedRequestWaitingWithoutLimitFailsAtOnceWhenTheThreadHoldsTheOnlyPermit() {
		// Nesting is a property of the thread: the whole scenario runs on the timeout's thread.
		assertTimeoutPreemptively(LONG, () -> {
			LockHandle outer = registry(0).tryAcquire(permits(1, Duration.ZERO)).orElseThrow();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> registry(0).tryAcquire(permits(1, LockRequest.WAIT_FOREVER)))
				.withMessageContaining("waiting without limit would never end");
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> template(0).acquire(LockRequest.permit(this.key, 1).withWaitTime(LockRequest.WAIT_FOREVER)))
				.withMessageContaining("waiting without limit would never end");
			// A bounded wait is only refused after it.
			assertThat(registry(0).tryAcquire(permits(1, SHORT))).isEmpty();
			assertThat(outer.isHeld()).isTrue();
			assertThat(leaseZnodes()).containsExactly(node(outer));
			outer.release();
		});
		registry(1).tryAcquire(permits(1, Duration.ZERO)).orElseThrow().release();
	}

	@Test
	void oneThreadTakesTwoPermitsOfTwoAndThenCannotWaitForAThird() throws Exception {
		assertTimeoutPreemptively(LONG, () -> {
			LockHandle first = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
			LockHandle second = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
			assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
			assertThat(leaseZnodes()).hasSize(2);
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> registry(0).tryAcquire(permits(2, LockRequest.WAIT_FOREVER)))
				.withMessageContaining("this thread holds all 2 permits");
			// Another application is refused as well.
			assertThat(registry(1).tryAcquire(permits(2, Duration.ZERO))).isEmpty();
			// With one given back, even from another thread, the thread may wait without limit.
			CompletableFuture.runAsync(first::release, (task) -> new Thread(task).start()).get(10, TimeUnit.SECONDS);
			LockHandle third = registry(0).tryAcquire(permits(2, LockRequest.WAIT_FOREVER)).orElseThrow();
			third.release();
			second.release();
		});
		assertThat(leaseZnodes()).isEmpty();
		assertThat(admin(registry(0)).heldLockCount()).isZero();
	}

	@Test
	void leasesOfAnExpiredSessionAreLostAndTheirPermitsComeBack() throws Exception {
		LockHandle first = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle second = inNewThread(() -> registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow())
			.get(10, TimeUnit.SECONDS);
		List<String> expiredLeases = List.of(node(first), node(second));
		long lastExpiredToken = second.fencingToken();
		CompletableFuture<LockHandle> waiter = inNewThread(() -> template(1).acquire(LockRequest.permit(this.key, 2).withWaitTime(LONG)));
		await().atMost(LONG).until(() -> leaseZnodes().size() == 3);
		assertThat(waiter).isNotDone();

		zooKeeper.expireSession(client(0));
		await().atMost(LONG)
			.untilAsserted(() -> assertThat(List.of(first, second)).extracting(LockHandle::state)
				.containsOnly(LockState.LOST));
		for (String lease : expiredLeases) {
			assertThat(this.observer.checkExists().forPath(lease)).as(lease).isNull();
		}
		// The permits are back: the waiter and one more request without waiting are granted.
		LockHandle waited = waiter.get(10, TimeUnit.SECONDS);
		LockHandle other = registry(2).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		assertThat(leaseZnodes()).containsExactlyInAnyOrder(node(waited), node(other));
		assertThat(other.fencingToken()).isGreaterThan(lastExpiredToken);

		// Releasing the lost leases is harmless and frees nothing of the others.
		first.release();
		second.release();
		assertThat(first.state()).isEqualTo(LockState.RELEASED);
		assertThat(admin(registry(0)).heldLockCount()).isZero();
		assertThat(leaseZnodes()).hasSize(2);
		waited.release();
		other.release();
		// The application whose session expired takes both permits again in its new session.
		LockHandle again = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle againToo = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		again.release();
		againToo.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void interruptedWaitersLeaveNoLeaseAndNoInternalLockZnodeBehind() throws Exception {
		LockHandle first = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle second = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		List<String> held = List.of(node(first), node(second));
		// The first waiter takes the semaphore's internal lock, creates its lease znode and waits for
		// a lease to go; the second waits for the internal lock.
		Waiter leaseWaiter = new Waiter(registry(1), permits(2, LockRequest.WAIT_FOREVER));
		await().atMost(LONG).until(() -> leaseZnodes().size() == 3 && internalLockZnodes().size() == 1);
		Waiter lockWaiter = new Waiter(registry(1), permits(2, LockRequest.WAIT_FOREVER));
		await().atMost(LONG).until(() -> internalLockZnodes().size() == 2);
		assertThat(leaseZnodes()).hasSize(3);
		assertThat(admin(registry(1)).describeWaitingLocks()).hasSize(2);

		// A waiter's znodes are deleted as its wait is given up, in the background.
		lockWaiter.interruptAndAssertFailed();
		await().atMost(LONG).until(() -> internalLockZnodes().size() == 1);
		assertThat(leaseZnodes()).hasSize(3);
		leaseWaiter.interruptAndAssertFailed();
		await().atMost(LONG).untilAsserted(() -> {
			assertThat(leaseZnodes()).containsExactlyInAnyOrderElementsOf(held);
			assertThat(internalLockZnodes()).isEmpty();
		});
		assertThat(admin(registry(1)).heldLockCount()).isZero();
		assertThat(admin(registry(1)).describeWaitingLocks()).isEmpty();

		first.release();
		second.release();
		// Both permits are free at once, for the application whose waiters were interrupted too.
		LockHandle again = registry(1).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle againToo = registry(2).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		again.release();
		againToo.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void waiterWhoseSessionExpiresLeavesNoLeaseOfThatSessionBehind() throws Exception {
		LockHandle first = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle second = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		List<String> held = List.of(node(first), node(second));
		AtomicReference<Thread> waiterThread = new AtomicReference<>();
		CompletableFuture<LockHandle> waiter = inNewThread(() -> {
			waiterThread.set(Thread.currentThread());
			return registry(1).tryAcquire(permits(2, LONG)).orElse(null);
		});
		await().atMost(LONG).until(() -> waiterThread.get() != null && leaseZnodes().size() == 3
				&& internalLockZnodes().size() == 1);
		List<String> expiredSessionZnodes = new ArrayList<>(leaseZnodes());
		expiredSessionZnodes.removeAll(held);
		expiredSessionZnodes.addAll(internalLockZnodes());
		assertThat(expiredSessionZnodes).hasSize(2);

		zooKeeper.expireSession(client(1));
		await().atMost(LONG).untilAsserted(() -> {
			for (String znode : expiredSessionZnodes) {
				assertThat(this.observer.checkExists().forPath(znode)).as(znode).isNull();
			}
		});
		// Curator queues the waiter again in the client's new session (within its retry policy), or
		// the request fails: either way as a waiter of the new session, or not at all.
		first.release();
		LockHandle granted = waiter.handle((handle, ex) -> {
			if (ex != null) {
				assertThat(ex).hasCauseExactlyInstanceOf(LockException.class);
				return null;
			}
			return handle;
		}).get(10, TimeUnit.SECONDS);
		if (granted != null) {
			assertThat(granted.state()).isEqualTo(LockState.HELD);
			assertThat(this.observer.checkExists().forPath(node(granted)).getEphemeralOwner())
				.isEqualTo(client(1).getZookeeperClient().getZooKeeper().getSessionId());
			granted.release();
		}
		second.release();
		assertThat(leaseZnodes()).isEmpty();
		assertThat(internalLockZnodes()).isEmpty();
		// Both permits are free at once.
		LockHandle again = registry(1).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		LockHandle againToo = registry(2).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		again.release();
		againToo.release();
	}

	@Test
	void rawCuratorSemaphoreAndPermitsOfTheSameKeyShareTheLimit() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(client(2), this.lockPath, 2);
		Lease rawLease = raw.acquire(0, TimeUnit.MILLISECONDS);
		assertThat(rawLease).isNotNull();
		LockHandle permit = registry(0).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		// Two holders of two permits, one of each kind: neither kind lets a third in.
		assertThat(registry(1).tryAcquire(permits(2, Duration.ZERO))).isEmpty();
		assertThat(raw.acquire(0, TimeUnit.MILLISECONDS)).isNull();
		assertThat(leaseZnodes()).hasSize(2);

		raw.returnLease(rawLease);
		LockHandle next = registry(1).tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		assertThat(raw.acquire(0, TimeUnit.MILLISECONDS)).isNull();
		permit.release();
		Lease rawAgain = raw.acquire(0, TimeUnit.MILLISECONDS);
		assertThat(rawAgain).isNotNull();
		assertThat(registry(0).tryAcquire(permits(2, Duration.ZERO))).isEmpty();
		raw.returnLease(rawAgain);
		next.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void rawCuratorSemaphoreOfOnePermitExcludesAPermit() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(client(2), this.lockPath, 1);
		Lease rawLease = raw.acquire(0, TimeUnit.MILLISECONDS);
		assertThat(rawLease).isNotNull();
		assertThat(registry(0).tryAcquire(permits(1, Duration.ZERO))).isEmpty();
		CompletableFuture<LockHandle> waiter = inNewThread(() -> template(0).acquire(LockRequest.permit(this.key, 1).withWaitTime(LONG)));
		await().atMost(LONG).until(() -> leaseZnodes().size() == 2);
		assertThat(waiter).isNotDone();

		raw.returnLease(rawLease);
		LockHandle permit = waiter.get(10, TimeUnit.SECONDS);
		assertThat(raw.acquire(0, TimeUnit.MILLISECONDS)).isNull();
		permit.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	/** A thread of an application waiting for a permit; records how its request ended. */
	private final class Waiter {

		private final Thread thread;

		private final CountDownLatch done = new CountDownLatch(1);

		private final AtomicReference<Throwable> failure = new AtomicReference<>();

		private final AtomicBoolean interruptedAfter = new AtomicBoolean();

		Waiter(CuratorLockRegistry registry, LockTarget request) {
			this.thread = new Thread(() -> {
				try {
					registry.tryAcquire(request).ifPresent(LockHandle::release);
				}
				catch (Throwable ex) {
					this.failure.set(ex);
				}
				this.interruptedAfter.set(Thread.currentThread().isInterrupted());
				this.done.countDown();
			});
			this.thread.start();
		}

		void interruptAndAssertFailed() throws InterruptedException {
			this.thread.interrupt();
			assertThat(this.done.await(10, TimeUnit.SECONDS)).as("interrupted waiter returned").isTrue();
			assertThat(this.failure.get()).isExactlyInstanceOf(LockException.class)
				.hasMessageContaining("interrupted")
				.hasMessageContaining(SemaphoreTests.this.lockPath);
			assertThat(this.interruptedAfter.get()).as("interrupt flag after the failure").isTrue();
		}

	}

	private LockTarget permits(int permits, Duration waitTime) {
		return new LockTarget(this.key, LockMode.EXCLUSIVE, false, permits, waitTime);
	}

	/** The lease znode of a grant: a registry's own, or, for a template's, its only part held by that registry. */
	private String node(LockHandle handle) {
		if (handle instanceof CuratorLockHandle grant) {
			return grant.nodePath();
		}
		return this.applications.stream()
			.flatMap((application) -> admin(application.registry()).describeHeldLocks().stream())
			.filter((held) -> held.path().equals(handle.path()))
			.map(HeldLock::node)
			.filter((node) -> {
				try {
					return this.observer.checkExists().forPath(node).getCzxid() == handle.fencingToken();
				}
				catch (Exception ex) {
					return false;
				}
			})
			.findFirst()
			.orElseThrow(() -> new AssertionError("No lease znode held for " + handle));
	}

	private String leasesPath() {
		return ZKPaths.makePath(this.lockPath, Protocol.LEASES);
	}

	/** The lease znodes of the test's semaphore, held or waiting, of every client. */
	private List<String> leaseZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, leasesPath());
	}

	/** The znodes of the semaphore's internal lock (Curator's {@code locks} child). */
	private List<String> internalLockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ZKPaths.makePath(this.lockPath, Protocol.LOCKS));
	}

	private CuratorFramework client(int index) {
		return this.applications.get(index).client();
	}

	private CuratorLockRegistry registry(int index) {
		return this.applications.get(index).registry();
	}

	private LockTemplate template(int index) {
		return this.applications.get(index).template();
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void sleepQuietly(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Run a blocking task in a new thread, as another application would (not the common pool, which
	 * on two cores may run one task at a time).
	 */
	private static <T> CompletableFuture<T> inNewThread(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, (runnable) -> new Thread(runnable).start());
	}

	/** One application: its client, registry and template. */
	private record Application(CuratorFramework client, CuratorLockRegistry registry, LockTemplate template) {
	}

}
