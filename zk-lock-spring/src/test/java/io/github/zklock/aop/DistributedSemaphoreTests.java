package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.OnBusy;
import io.github.zklock.PermitsMismatchException;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @DistributedSemaphore} methods through the advisor of {@code @EnableDistributedLocks}, in
 * plain Spring contexts on a real ZooKeeper: never more than {@code permits} callers inside across
 * two applications and several threads, and exactly that many at once; a full semaphore fails a
 * call with wait time zero, or skips it ({@code null}, {@code Optional.empty()}, nothing) without
 * invoking the method; the method sees its permit's handle, whose fencing token is its lease
 * znode's; a nested call takes another permit; two applications naming different permits for a
 * key fail the call with {@link PermitsMismatchException}. Start-up checks are in
 * {@link LockOperationSourceTests}.
 */
class DistributedSemaphoreTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final Gate gate = new Gate();

	private CuratorLockRegistry otherRegistry;

	private LockTemplate otherProcess;

	@BeforeEach
	void connectOtherProcess() throws InterruptedException {
		// Another application: its own client (closed by the extension after the test).
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		this.otherProcess = new LockTemplate(this.otherRegistry, Duration.ZERO);
	}

	@AfterEach
	void closeOtherProcess() {
		this.otherRegistry.close();
	}

	@Test
	void neverMoreThanPermitsInsideAcrossTwoApplicationsAndSeveralThreads() throws Exception {
		int threadsPerApplication = 3;
		int callsPerThread = 10;
		try (AnnotationConfigApplicationContext first = start(Partners.class);
				AnnotationConfigApplicationContext second = start(Partners.class)) {
			List<Callable<?>> callers = new ArrayList<>();
			for (AnnotationConfigApplicationContext application : List.of(first, second)) {
				Partners partners = application.getBean(Partners.class);
				for (int t = 0; t < threadsPerApplication; t++) {
					callers.add(() -> {
						for (int i = 0; i < callsPerThread; i++) {
							partners.call("load");
						}
						return null;
					});
				}
			}
			LockApplications.runConcurrently(Duration.ofSeconds(60), callers.toArray(Callable<?>[]::new));
		}
		assertThat(this.gate.calls()).isEqualTo(2 * threadsPerApplication * callsPerThread);
		assertThat(this.gate.maxInside()).isEqualTo(2);
	}

	@Test
	void permitsAreHeldAtOnceUpToTheCountAndTheNextCallerFindsItBusy() throws Exception {
		try (AnnotationConfigApplicationContext first = start(Partners.class);
				AnnotationConfigApplicationContext second = start(Partners.class)) {
			CountDownLatch bothInside = new CountDownLatch(2);
			CountDownLatch leave = new CountDownLatch(1);
			Callable<Boolean> holdAPermit = () -> {
				bothInside.countDown();
				return leave.await(10, TimeUnit.SECONDS);
			};
			Partners firstPartners = first.getBean(Partners.class);
			Partners secondPartners = second.getBean(Partners.class);
			ExecutorService pool = Executors.newFixedThreadPool(2);
			try {
				Future<Boolean> one = pool.submit(() -> firstPartners.inside("meet", holdAPermit));
				Future<Boolean> other = pool.submit(() -> secondPartners.inside("meet", holdAPermit));
				assertThat(bothInside.await(10, TimeUnit.SECONDS)).as("two permits held at once").isTrue();
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> firstPartners.callNow("meet"))
					.withMessageContaining("/locks/partner/meet")
					.withMessageContaining("all 2 permits are held");
				assertThat(this.gate.calls()).isZero();
				leave.countDown();
				assertThat(one.get(10, TimeUnit.SECONDS)).isTrue();
				assertThat(other.get(10, TimeUnit.SECONDS)).isTrue();
			}
			finally {
				leave.countDown();
				pool.shutdownNow();
			}
			assertThat(firstPartners.callNow("meet")).isEqualTo("called");
		}
	}

	@Test
	void fullSemaphoreSkipsTheCallWithoutInvokingTheMethod() throws Exception {
		try (AnnotationConfigApplicationContext application = start(Partners.class)) {
			Partners partners = application.getBean(Partners.class);
			AcquireObservations observations = AcquireObservations.observe(application);
			LockHandle firstPermit = this.otherProcess.acquire(LockRequest.permit("/partner/full", 2).withWaitTime(Duration.ZERO));
			LockHandle secondPermit = this.otherProcess.acquire(LockRequest.permit("/partner/full", 2).withWaitTime(Duration.ZERO));
			try {
				assertThat(partners.callOrSkip("full")).isNull();
				assertThat(partners.callOrEmpty("full")).isEmpty();
				partners.callOrNothing("full");
				assertThat(this.gate.calls()).isZero();
				assertThat(observations.recorded()).containsOnly("/partner/#{#partner} skipped").hasSize(3);
				assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
			}
			finally {
				secondPermit.release();
			}
			assertThat(partners.callOrSkip("full")).isEqualTo("called");
			assertThat(partners.callOrEmpty("full")).contains("called");
			firstPermit.release();
		}
	}

	@Test
	void methodSeesItsPermitWhoseFencingTokenIsTheLeaseZnodes() throws Exception {
		try (AnnotationConfigApplicationContext application = start(Partners.class)) {
			Partners partners = application.getBean(Partners.class);
			CuratorFramework client = application.getBean(CuratorFramework.class);
			List<Long> leaseZxids = new ArrayList<>();
			long[] token = new long[1];
			LockHandle permit = partners.inside("token", () -> {
				LockHandle handle = LockContext.require();
				assertThat(handle.isHeld()).isTrue();
				token[0] = handle.fencingToken();
				for (String lease : client.getChildren().forPath("/locks/partner/token/leases")) {
					Stat stat = client.checkExists().forPath("/locks/partner/token/leases/" + lease);
					leaseZxids.add(stat.getCzxid());
				}
				return handle;
			});
			assertThat(permit.path()).isEqualTo("/locks/partner/token");
			assertThat(leaseZxids).containsExactly(token[0]);
			assertThat(permit.isHeld()).isFalse();
			assertThat(LockContext.current()).isEmpty();
		}
	}

	@Test
	void nestedCallOnTheSameKeyTakesAnotherPermit() throws Exception {
		try (AnnotationConfigApplicationContext application = start(Partners.class)) {
			Partners partners = application.getBean(Partners.class);
			// Not reentrant: inner and outer each hold one of the two permits, none is left.
			LockRequest permit = LockRequest.permit("/partner/nested", 2).withWaitTime(Duration.ZERO);
			boolean otherGotOne = partners.inside("nested",
					() -> partners.inside("nested", () -> this.otherProcess.tryAcquire(permit).isPresent()));
			assertThat(otherGotOne).isFalse();
			assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
		}
	}

	@Test
	void applicationsNamingDifferentPermitsForOneKeyFailTheCall() throws Exception {
		try (AnnotationConfigApplicationContext first = start(TwoSlots.class);
				AnnotationConfigApplicationContext second = start(ThreeSlots.class)) {
			assertThat(first.getBean(TwoSlots.class).use("quota")).isEqualTo(2);
			assertThatExceptionOfType(PermitsMismatchException.class)
				.isThrownBy(() -> second.getBean(ThreeSlots.class).use("quota"))
				.satisfies((ex) -> {
					assertThat(ex.getPath()).isEqualTo("/locks/slots/quota");
					assertThat(ex.getRequestedPermits()).isEqualTo(3);
					assertThat(ex.getStoredPermits()).isEqualTo(2);
				});
			assertThat(this.gate.calls()).isOne();
			// The count stored first still serves its participants.
			assertThat(first.getBean(TwoSlots.class).use("quota")).isEqualTo(2);
		}
	}

	private AnnotationConfigApplicationContext start(Class<?> service) throws InterruptedException {
		return LockApplications.start(zooKeeper, (context) -> context.registerBean(Gate.class, () -> this.gate),
				service);
	}

	/** Counts the callers inside, shared by the applications of a test. */
	static final class Gate {

		private final AtomicInteger inside = new AtomicInteger();

		private final AtomicInteger maxInside = new AtomicInteger();

		private final AtomicInteger calls = new AtomicInteger();

		void pass() {
			this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
			this.calls.incrementAndGet();
			this.inside.decrementAndGet();
		}

		/**
		 * Stay inside until {@code company} callers are, or at most {@code patience}: a caller
		 * the semaphore lets in next to this one is then seen, however slow the hand-over.
		 */
		void passInCompany(int company, Duration patience) throws InterruptedException {
			synchronized (this) {
				this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
				notifyAll();
				long deadline = System.nanoTime() + patience.toNanos();
				long left = patience.toNanos();
				while (this.inside.get() < company && left > 0) {
					TimeUnit.NANOSECONDS.timedWait(this, left);
					left = deadline - System.nanoTime();
				}
			}
			this.calls.incrementAndGet();
			this.inside.decrementAndGet();
		}

		int calls() {
			return this.calls.get();
		}

		int maxInside() {
			return this.maxInside.get();
		}

	}

	static class Partners {

		private final Gate gate;

		Partners(Gate gate) {
			this.gate = gate;
		}

		@DistributedSemaphore(path = "/partner/#{#partner}", permits = 2, waitTime = "20s")
		public void call(String partner) throws InterruptedException {
			this.gate.passInCompany(2, Duration.ofMillis(200));
		}

		@DistributedSemaphore(path = "/partner/#{#partner}", permits = 2, waitTime = "20s")
		public <T> T inside(String partner, Callable<T> work) throws Exception {
			return work.call();
		}

		@DistributedSemaphore(path = "/partner/#{#partner}", permits = 2, waitTime = "0")
		public String callNow(String partner) {
			this.gate.pass();
			return "called";
		}

		@DistributedSemaphore(path = "/partner/#{#partner}", permits = 2, waitTime = "0", onBusy = OnBusy.SKIP)
		public String callOrSkip(String partner) {
			this.gate.pass();
			return "called";
		}

		@DistributedSemaphore(path = "/partner/#{#partner}", permits = 2, waitTime = "0", onBusy = OnBusy.SKIP)
		public Optional<String> callOrEmpty(String partner) {
			this.gate.pass();
			return Optional.of("called");
		}

		@DistributedSemaphore(path = "/partner/#{#partner}", permits = 2, waitTime = "0", onBusy = OnBusy.SKIP)
		public void callOrNothing(String partner) {
			this.gate.pass();
		}

	}

	static class TwoSlots {

		private final Gate gate;

		TwoSlots(Gate gate) {
			this.gate = gate;
		}

		@DistributedSemaphore(path = "/slots/#{#name}", permits = 2, waitTime = "0")
		public int use(String name) {
			this.gate.pass();
			return 2;
		}

	}

	static class ThreeSlots {

		private final Gate gate;

		ThreeSlots(Gate gate) {
			this.gate = gate;
		}

		@DistributedSemaphore(path = "/slots/#{#name}", permits = 3, waitTime = "0")
		public int use(String name) {
			this.gate.pass();
			return 3;
		}

	}

}
