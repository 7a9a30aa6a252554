package io.github.zklock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for asynchronous grants ({@link AsyncLockHandle}) of every kind on a real ZooKeeper server:
 * released from a thread other than the one that acquired them, idempotent release, state and
 * fencing token read from any thread; READ, WRITE, permits and multi-locks granted asynchronously
 * exclude as their synchronous twins do, and exclude the synchronous grants of the same key in
 * one application and across applications (with local hand-off on); a nested asynchronous request
 * for a key the grant holds fails after its wait instead of re-entering. A second client with its
 * own registry and template stands for another application.
 */
class AsyncLockModesTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration WAIT = Duration.ofSeconds(10);

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate otherApplication;

	private String key;

	private ExecutorService releasers;

	/** The kinds of asynchronous grants. */
	enum Kind {

		EXCLUSIVE, NON_REENTRANT_EXCLUSIVE, READ, WRITE, PERMIT, MULTI

	}

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
		this.template = new LockTemplate(this.registry, WAIT);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.otherApplication = new LockTemplate(this.otherRegistry, Duration.ZERO);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName()
				+ testInfo.getDisplayName().replaceAll("[^A-Za-z0-9_]", "");
		this.releasers = Executors.newSingleThreadExecutor((task) -> new Thread(task, "releaser"));
	}

	@AfterEach
	void close() {
		this.releasers.shutdownNow();
		this.registry.close();
		this.otherRegistry.close();
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void grantIsReleasedFromAnotherThreadThanTheOneThatAcquiredIt(Kind kind) throws Exception {
		AsyncLockHandle handle = this.template.async().acquire(request(kind)).get(10, TimeUnit.SECONDS);
		assertThat(handle.parts()).hasSize((kind == Kind.MULTI) ? 2 : 1);
		// Read from the test thread, which is neither the grant's thread nor the releasing one.
		assertThat(handle.isHeld()).isTrue();
		assertThat(handle.state()).isEqualTo(LockState.HELD);
		assertThat(handle.parts()).allSatisfy((part) -> assertThat(part.fencingToken()).isPositive());
		handle.checkHeld();
		assertThat(admin(this.registry).heldLockCount()).isEqualTo((kind == Kind.MULTI) ? 2 : 1);
		assertThat(this.otherApplication.tryAcquire(conflicting(kind))).isEmpty();

		AsyncLockHandle grant = handle;
		CompletableFuture<String> released = CompletableFuture.supplyAsync(() -> {
			grant.release();
			return Thread.currentThread().getName();
		}, this.releasers);
		assertThat(released.get(10, TimeUnit.SECONDS)).isEqualTo("releaser");

		assertThat(handle.isHeld()).isFalse();
		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		// release() of a grant owned by no thread returns once the delete is sent (see
		// AsyncLockHandle.release()); the delete's answer comes within the wait.
		await().atMost(WAIT).until(() -> ZooKeeperExtension.ephemeralZnodes(this.client, ROOT + this.key).isEmpty());
		Optional<LockHandle> next = this.otherApplication.tryAcquire(conflicting(kind));
		assertThat(next).isPresent();
		next.get().release();
	}

	@ParameterizedTest
	@EnumSource(value = Kind.class, names = { "EXCLUSIVE", "NON_REENTRANT_EXCLUSIVE", "PERMIT" })
	void releaseAsyncIsIdempotent(Kind kind) throws Exception {
		AsyncLockHandle handle = this.template.async().acquire(request(kind)).get(10, TimeUnit.SECONDS);

		CompletableFuture<Void> first = handle.releaseAsync();
		CompletableFuture<Void> second = handle.releaseAsync();
		assertThat(second).isSameAs(first);
		assertThat(first).succeedsWithin(WAIT);
		assertThat(handle.releaseAsync()).isSameAs(first);
		handle.release();
		CompletableFuture.runAsync(handle::release, this.releasers).get(10, TimeUnit.SECONDS);
		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, ROOT + this.key)).isEmpty();
	}

	@Test
	void fencingTokensIncreaseStrictlyAcrossApplications() throws Exception {
		long previous = 0;
		for (int round = 0; round < 6; round++) {
			long token;
			if (round % 3 == 0) {
				AsyncLockHandle handle = this.template.async().acquire(LockRequest.of(this.key)).get(10, TimeUnit.SECONDS);
				token = handle.fencingToken();
				handle.releaseAsync().get(10, TimeUnit.SECONDS);
			}
			else if (round % 3 == 1) {
				LockHandle handle = this.otherApplication.acquire(LockRequest.of(this.key));
				token = handle.fencingToken();
				handle.release();
			}
			else {
				token = this.otherApplication
					.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT,
							(handle) -> CompletableFuture.completedFuture(handle.fencingToken()))
					.get(10, TimeUnit.SECONDS);
			}
			assertThat(token).as("round %d", round).isGreaterThan(previous);
			previous = token;
		}
	}

	@Test
	void readGrantsAreSharedAndExcludeWrite() throws Exception {
		LockRequest read = LockRequest.of(this.key).withMode(LockMode.READ).withWaitTime(Duration.ZERO);
		AsyncLockHandle first = this.template.async().acquire(read).get(10, TimeUnit.SECONDS);
		AsyncLockHandle second = this.template.async().acquire(read).get(10, TimeUnit.SECONDS);
		AsyncLockHandle third = this.otherApplication.async().acquire(read).get(10, TimeUnit.SECONDS);
		assertThat(List.of(first, second, third)).allMatch(LockHandle::isHeld);

		LockRequest write = LockRequest.of(this.key).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO);
		assertBusy(this.otherApplication.async().acquire(write));
		assertBusy(this.template.async().acquire(write));
		first.release();
		second.releaseAsync().get(10, TimeUnit.SECONDS);
		assertBusy(this.template.async().acquire(write));
		third.releaseAsync().get(10, TimeUnit.SECONDS);

		// The busy attempts above delete their znodes in the background, each on its own session:
		// the writer waits for those deletes (bounded), not for a reader.
		AsyncLockHandle writer = this.template.async()
			.acquire(write.withWaitTime(Duration.ofSeconds(10)))
			.get(20, TimeUnit.SECONDS);
		assertBusy(this.otherApplication.async().acquire(read));
		assertBusy(this.template.async().acquire(read));
		assertBusy(this.otherApplication.async().acquire(write));
		writer.release();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void permitsGrantAtMostTheirNumber() throws Exception {
		LockRequest permit = LockRequest.permit(this.key, 2).withWaitTime(Duration.ZERO);
		AsyncLockHandle first = this.template.async().acquire(permit).get(10, TimeUnit.SECONDS);
		AsyncLockHandle second = this.otherApplication.async().acquire(permit).get(10, TimeUnit.SECONDS);
		assertBusy(this.template.async().acquire(permit));
		assertBusy(this.otherApplication.async().acquire(permit));
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.acquire(LockRequest.permit(this.key, 2).withWaitTime(Duration.ZERO)));

		// From another thread, and waiting for the delete: the next request looks only once.
		CompletableFuture.supplyAsync(first::releaseAsync, this.releasers)
			.thenCompose((released) -> released)
			.get(10, TimeUnit.SECONDS);
		AsyncLockHandle third = this.template.async().acquire(permit).get(10, TimeUnit.SECONDS);
		assertBusy(this.otherApplication.async().acquire(permit));
		third.release();
		second.release();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.otherRegistry).heldLockCount()).isZero();
	}

	@Test
	void multiLockIsGrantedAllOrNothing() throws Exception {
		LockHandle b = this.otherApplication.acquire(this.key + "/b", LockMode.EXCLUSIVE, Duration.ZERO);
		LockRequest both = LockRequest.of(List.of(this.key + "/a", this.key + "/b"))
			.withWaitTime(Duration.ofMillis(200));
		AtomicBoolean ran = new AtomicBoolean();
		assertBusy(this.template.async().execute(both, (handle) -> {
			ran.set(true);
			return CompletableFuture.completedFuture(null);
		}));
		assertBusy(this.template.async().acquire(both));
		assertThat(this.template.async().execute(both.withOnBusy(OnBusy.SKIP), (handle) -> {
			ran.set(true);
			return CompletableFuture.completedFuture(null);
		})).succeedsWithin(WAIT).isEqualTo(LockResult.skipped());
		assertThat(ran).isFalse();
		// Key a, acquired first, was given up.
		assertThat(admin(this.registry).heldLockCount()).isZero();
		Optional<LockHandle> a = this.otherApplication.tryAcquire(this.key + "/a", LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(a).isPresent();
		a.get().release();
		b.release();

		AsyncLockHandle all = this.template.async().acquire(both).get(10, TimeUnit.SECONDS);
		assertThat(all.parts()).extracting(LockHandle::path).containsExactly(ROOT + this.key + "/a",
				ROOT + this.key + "/b");
		assertThat(this.otherApplication.tryAcquire(this.key + "/a", LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		assertThat(this.otherApplication.tryAcquire(this.key + "/b", LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		CompletableFuture.runAsync(all::release, this.releasers).get(10, TimeUnit.SECONDS);
		assertThat(admin(this.registry).heldLockCount()).isZero();

		assertThat(this.template.async()
			.execute(both, (handle) -> CompletableFuture.completedFuture(handle.parts().size())))
			.succeedsWithin(WAIT)
			.isEqualTo(LockResult.executed(2));
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@ParameterizedTest
	@EnumSource(value = LockMode.class, names = { "EXCLUSIVE", "WRITE" })
	void syncAndAsyncGrantsOfOneKeyExcludeEachOtherInOneApplication(LockMode mode) throws Exception {
		LockRequest now = LockRequest.of(this.key).withMode(mode).withWaitTime(Duration.ZERO);
		LockHandle sync = this.template.acquire(now);
		assertBusy(this.template.async().acquire(now));
		assertBusy(this.template.async().execute(now, (handle) -> CompletableFuture.completedFuture(null)));
		sync.release();

		AsyncLockHandle async = this.template.async().acquire(now).get(10, TimeUnit.SECONDS);
		assertThat(this.template.tryAcquire(now)).isEmpty();
		assertThat(CompletableFuture.supplyAsync(() -> this.template.tryAcquire(now), this.releasers)
			.get(10, TimeUnit.SECONDS)).isEmpty();
		async.release();
		Optional<LockHandle> again = this.template.tryAcquire(now);
		assertThat(again).isPresent();
		again.get().release();
	}

	@ParameterizedTest
	@EnumSource(value = LockMode.class, names = { "EXCLUSIVE", "WRITE" })
	void syncAndAsyncGrantsOfOneKeyExcludeEachOtherAcrossApplications(LockMode mode) throws Exception {
		LockRequest now = LockRequest.of(this.key).withMode(mode).withWaitTime(Duration.ZERO);
		LockHandle sync = this.otherApplication.acquire(now);
		assertBusy(this.template.async().acquire(now));
		sync.release();

		AsyncLockHandle async = this.template.async().acquire(now).get(10, TimeUnit.SECONDS);
		assertThat(this.otherApplication.tryAcquire(now)).isEmpty();
		assertBusy(this.otherApplication.async().acquire(now));
		// The other application's session: wait for the delete before it looks once.
		async.releaseAsync().get(10, TimeUnit.SECONDS);
		Optional<LockHandle> again = this.otherApplication.tryAcquire(now);
		assertThat(again).isPresent();
		again.get().release();
	}

	@Test
	void localHandoffWithAsyncGrantsMixedInNeverOverlaps() throws Exception {
		int rounds = 40;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		AtomicInteger completed = new AtomicInteger();
		Runnable critical = () -> {
			maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
			Thread.yield();
			inside.decrementAndGet();
			completed.incrementAndGet();
		};
		LockRequest request = LockRequest.of(this.key).withWaitTime(Duration.ofSeconds(60));
		ExecutorService syncThreads = Executors.newFixedThreadPool(3);
		try {
			List<CompletableFuture<?>> all = new ArrayList<>();
			for (int thread = 0; thread < 3; thread++) {
				LockTemplate locks = (thread == 2) ? this.otherApplication : this.template;
				all.add(CompletableFuture.runAsync(() -> {
					for (int i = 0; i < rounds; i++) {
						locks.execute(request, (handle) -> {
							critical.run();
							return null;
						});
					}
				}, syncThreads));
			}
			for (int chain = 0; chain < 3; chain++) {
				LockTemplate locks = (chain == 2) ? this.otherApplication : this.template;
				CompletableFuture<Void> calls = CompletableFuture.completedFuture(null);
				for (int i = 0; i < rounds; i++) {
					calls = calls.thenCompose((previous) -> locks.async()
						.execute(request, (handle) -> CompletableFuture.runAsync(critical))
						.thenApply(LockResult::result));
				}
				all.add(calls);
			}
			CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
		}
		finally {
			syncThreads.shutdownNow();
		}
		assertThat(completed).hasValue(6 * rounds);
		assertThat(maxInside).hasValue(1);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.otherRegistry).heldLockCount()).isZero();
	}

	@ParameterizedTest
	@EnumSource(value = Kind.class, names = { "EXCLUSIVE", "NON_REENTRANT_EXCLUSIVE", "WRITE" })
	void nestedAsyncRequestForTheHeldKeyFailsAfterItsWait(Kind kind) {
		LockRequest outer = request(kind);
		LockRequest inner = outer.withWaitTime(Duration.ofMillis(300));
		assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
			CompletableFuture<LockResult<LockResult<String>>> result = this.template.async()
				.execute(outer, (handle) -> this.template.async()
					.execute(inner, (nested) -> CompletableFuture.completedFuture("nested")));
			assertThat(result).failsWithin(Duration.ofSeconds(15))
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.isInstanceOf(LockAcquisitionException.class);
			AsyncLockHandle held = this.template.async().acquire(outer).get(10, TimeUnit.SECONDS);
			assertBusy(this.template.async().acquire(inner));
			held.release();
		});
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	private LockRequest request(Kind kind) {
		LockRequest request = LockRequest.of(this.key).withWaitTime(WAIT);
		return switch (kind) {
			case EXCLUSIVE -> request;
			// The key itself and one below it.
			case MULTI -> request.withKeys(List.of(this.key + "/x", this.key));
			case NON_REENTRANT_EXCLUSIVE -> request.withReentrant(false);
			case READ -> request.withMode(LockMode.READ);
			case WRITE -> request.withMode(LockMode.WRITE);
			case PERMIT -> LockRequest.permit(this.key, 1).withWaitTime(WAIT);
		};
	}

	/** A request of the other application that the grant of this kind excludes. */
	private LockRequest conflicting(Kind kind) {
		LockRequest request = LockRequest.of(this.key).withWaitTime(Duration.ZERO);
		return switch (kind) {
			case EXCLUSIVE, MULTI -> request;
			case NON_REENTRANT_EXCLUSIVE -> request.withReentrant(false);
			case READ, WRITE -> request.withMode(LockMode.WRITE);
			case PERMIT -> LockRequest.permit(this.key, 1).withWaitTime(Duration.ZERO);
		};
	}

	private static void assertBusy(CompletableFuture<?> result) {
		assertThat(result).failsWithin(WAIT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(LockAcquisitionException.class);
	}

}
