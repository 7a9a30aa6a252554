package io.github.zklock.aop;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.reactive.ReactiveLockContext;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock} and {@code @DistributedSemaphore} on methods returning Reactor's
 * {@code Mono} or {@code Flux}, in a plain Spring context on a real ZooKeeper, watched by "another
 * application": nothing is requested on assembly; each subscription acquires its own grant,
 * invokes the method and holds the grant until complete, error or cancel; disposing while the
 * grant is held or while it is awaited leaves no znode; {@code Mono.error} and an exception thrown
 * by the method release; {@code onBusy = SKIP} completes empty; a {@code Flux} emits all its items
 * under one grant; the handle and its fencing token are in the Reactor context
 * ({@link ReactiveLockContext}); READ and WRITE, permits and several keys; a nested publisher on
 * the key its caller holds errors after its wait instead of hanging; a lost grant errors with
 * {@link LockLostException} with interrupt-on-lost; two applications with 50 concurrent
 * subscriptions each never overlap.
 */
class ReactiveLockMethodTests {

	private static final Duration BOUND = Duration.ofSeconds(10);

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static AnnotationConfigApplicationContext application;

	private OtherApplication other;

	@BeforeAll
	static void start() throws InterruptedException {
		application = LockApplications.start(zooKeeper, (context) -> {
		}, ReactiveService.class);
	}

	@AfterAll
	static void stop() {
		application.close();
	}

	@BeforeEach
	void connectOtherApplication() throws InterruptedException {
		this.other = new OtherApplication(zooKeeper);
		service().reset();
	}

	@AfterEach
	void closeOtherApplication() {
		this.other.close();
	}

	@Test
	void monoAcquiresOnSubscriptionNotOnAssemblyAndHoldsUntilItCompletes() throws Exception {
		ReactiveService service = service();
		Mono<String> assembled = service.hold("assembled");
		assertThat(service.invocations()).isZero();
		assertThat(this.other.canTake("/reactive/assembled", LockMode.EXCLUSIVE)).isTrue();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.other.client(), "/locks/reactive")).isEmpty();

		CompletableFuture<String> result = assembled.toFuture();
		CompletableFuture<String> work = service.nextWork();
		assertThat(this.other.canTake("/reactive/assembled", LockMode.EXCLUSIVE)).isFalse();
		work.complete("done");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		assertThat(this.other.canTake("/reactive/assembled", LockMode.EXCLUSIVE)).isTrue();
		this.other.assertNoZnodes("/locks/reactive/assembled");
	}

	@Test
	void eachSubscriptionIsItsOwnGrantWithItsFencingTokenInTheReactorContext() {
		ReactiveService service = service();
		Mono<Long> token = service.token("token");
		Long first = token.block(BOUND);
		Long second = token.block(BOUND);
		assertThat(first).isPositive();
		assertThat(second).isGreaterThan(first);
		assertThat(service.invocations()).isEqualTo(2);
		assertThat(ReactiveLockContext.current().blockOptional(BOUND)).isEmpty();
	}

	@Test
	void handleInTheReactorContextIsTheAsyncGrant() {
		Seen seen = service().held("context").block(BOUND);
		assertThat(seen.heldThen()).isTrue();
		assertThat(seen.handles()).singleElement().isInstanceOf(AsyncLockHandle.class).satisfies((handle) -> {
			assertThat(handle.path()).isEqualTo("/locks/reactive/context");
			assertThat(handle.isHeld()).as("held after the Mono completed").isFalse();
		});
	}

	@Test
	void disposingWhileHoldingCancelsTheWorkAndReleases() throws Exception {
		ReactiveService service = service();
		Disposable subscription = service.hold("disposed").subscribe();
		CompletableFuture<String> work = service.nextWork();
		assertThat(this.other.canTake("/reactive/disposed", LockMode.EXCLUSIVE)).isFalse();
		subscription.dispose();
		await().atMost(BOUND).until(work::isCancelled);
		this.other.assertNoZnodes("/locks/reactive/disposed");
		assertThat(this.other.canTake("/reactive/disposed", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void disposingWhileWaitingGivesUpTheWaitAndLeavesNoZnode() throws Exception {
		ReactiveService service = service();
		LockHandle held = this.other.take("/reactive/waiting");
		try {
			Disposable subscription = service.hold("waiting").subscribe();
			// The other application's grant and this one's waiter.
			await().atMost(BOUND)
				.until(() -> ZooKeeperExtension.ephemeralZnodes(this.other.client(), "/locks/reactive/waiting").size() == 2);
			subscription.dispose();
			await().atMost(BOUND)
				.until(() -> ZooKeeperExtension.ephemeralZnodes(this.other.client(), "/locks/reactive/waiting").size() == 1);
		}
		finally {
			held.release();
		}
		this.other.assertNoZnodes("/locks/reactive/waiting");
		assertThat(this.other.canTake("/reactive/waiting", LockMode.EXCLUSIVE)).isTrue();
		assertThat(service.invocations()).isZero();
	}

	@Test
	void errorOfTheMonoReleases() {
		ReactiveService service = service();
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> service.fail("error").block(BOUND))
			.withMessage("boom error");
		assertThat(this.other.canTake("/reactive/error", LockMode.EXCLUSIVE)).isTrue();
		this.other.assertNoZnodes("/locks/reactive/error");
	}

	@Test
	void exceptionThrownByTheMethodErrorsTheSubscriptionAndReleases() throws Exception {
		ReactiveService service = service();
		Mono<String> assembled = service.throwChecked("throwing");
		assertThat(service.invocations()).isZero();
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> assembled.toFuture().get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(IOException.class)
			.withMessageContaining("checked throwing");
		assertThat(this.other.canTake("/reactive/throwing", LockMode.EXCLUSIVE)).isTrue();
		this.other.assertNoZnodes("/locks/reactive/throwing");
	}

	@Test
	void busyLockSkipsMonoAndFluxWithNothing() {
		ReactiveService service = service();
		LockHandle held = this.other.take("/reactive/busy");
		try {
			assertThat(service.skipMono("busy").blockOptional(BOUND)).isEmpty();
			assertThat(service.skipFlux("busy").collectList().block(BOUND)).isEmpty();
			assertThat(service.invocations()).isZero();
		}
		finally {
			held.release();
		}
		assertThat(service.skipMono("busy").block(BOUND)).isEqualTo("ran busy");
		assertThat(service.skipFlux("busy").collectList().block(BOUND)).containsExactly("ran busy", "again busy");
		this.other.assertNoZnodes("/locks/reactive/busy");
	}

	@Test
	void busyLockErrorsAfterTheWaitTime() {
		ReactiveService service = service();
		LockHandle held = this.other.take("/reactive/taken");
		try {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> service.holdBriefly("taken").block(BOUND));
			assertThat(service.invocations()).isZero();
		}
		finally {
			held.release();
		}
	}

	@Test
	void fluxEmitsEveryItemUnderOneGrant() {
		List<String> items = service().items("flux", this.other::canTake).collectList().block(BOUND);
		assertThat(items).hasSize(3);
		// One token for all items, and the other application never got the key meanwhile.
		assertThat(items).extracting((item) -> item.substring(item.indexOf(' '))).containsOnly(" false");
		assertThat(items.stream().map((item) -> item.substring(0, item.indexOf(' '))).distinct()).hasSize(1);
		assertThat(this.other.canTake("/reactive/flux", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void readersShareTheKeyAndAWriterExcludesThem() throws Exception {
		ReactiveService service = service();
		CompletableFuture<String> firstRead = service.read("rw").toFuture();
		CompletableFuture<String> firstWork = service.nextWork();
		CompletableFuture<String> secondRead = service.read("rw").toFuture();
		CompletableFuture<String> secondWork = service.nextWork();
		assertThat(this.other.canTake("/reactive-rw/rw", LockMode.READ)).isTrue();
		assertThat(this.other.canTake("/reactive-rw/rw", LockMode.WRITE)).isFalse();
		firstWork.complete("one");
		secondWork.complete("two");
		assertThat(firstRead.get(10, TimeUnit.SECONDS)).isEqualTo("one");
		assertThat(secondRead.get(10, TimeUnit.SECONDS)).isEqualTo("two");

		CompletableFuture<String> write = service.write("rw").toFuture();
		CompletableFuture<String> writeWork = service.nextWork();
		assertThat(this.other.canTake("/reactive-rw/rw", LockMode.READ)).isFalse();
		writeWork.complete("written");
		assertThat(write.get(10, TimeUnit.SECONDS)).isEqualTo("written");
		assertThat(this.other.canTake("/reactive-rw/rw", LockMode.WRITE)).isTrue();
	}

	@Test
	void semaphoreLetsInAsManySubscriptionsAsItHasPermits() throws Exception {
		ReactiveService service = service();
		CompletableFuture<String> first = service.permit("partner").toFuture();
		CompletableFuture<String> firstWork = service.nextWork();
		CompletableFuture<String> second = service.permit("partner").toFuture();
		CompletableFuture<String> secondWork = service.nextWork();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> service.permit("partner").block(BOUND));
		firstWork.complete("one");
		secondWork.complete("two");
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("one");
		assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("two");
		this.other.assertNoZnodes("/locks/reactive-permits/partner");
	}

	@Test
	void everyKeyOfAMultiLockIsHeldUntilTheFluxCompletes() throws Exception {
		ReactiveService service = service();
		CompletableFuture<List<String>> result = service.both("multi-b", "multi-a").collectList().toFuture();
		CompletableFuture<String> work = service.nextWork();
		assertThat(this.other.canTake("/reactive/multi-a", LockMode.EXCLUSIVE)).isFalse();
		assertThat(this.other.canTake("/reactive/multi-b", LockMode.EXCLUSIVE)).isFalse();
		work.complete("both");
		assertThat(result.get(10, TimeUnit.SECONDS)).containsExactly("both");
		assertThat(this.other.canTake("/reactive/multi-a", LockMode.EXCLUSIVE)).isTrue();
		assertThat(this.other.canTake("/reactive/multi-b", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void nestedPublisherOnTheKeyItsCallerHoldsErrorsAfterItsWaitInsteadOfHanging() {
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> service().outer("nested").block(BOUND));
		assertThat(this.other.canTake("/reactive-nested/nested", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void lostGrantErrorsWithLockLostException() throws Exception {
		CuratorLockRegistry registry = application.getBean(CuratorLockRegistry.class);
		CuratorFramework client = application.getBean(CuratorFramework.class);
		registry.setInterruptOnLost(true);
		try {
			ReactiveService service = service();
			CompletableFuture<String> result = service.hold("lost").toFuture();
			CompletableFuture<String> work = service.nextWork();
			zooKeeper.expireSession(client);
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(20, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockLostException.class)
				.withMessageContaining("/locks/reactive/lost");
			await().atMost(BOUND).until(work::isCancelled);
		}
		finally {
			registry.setInterruptOnLost(false);
			await().atMost(BOUND).until(() -> client.getZookeeperClient().isConnected());
		}
		assertThat(this.other.canTake("/reactive/lost", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void twoApplicationsWithFiftyConcurrentSubscriptionsEachNeverOverlap() throws Exception {
		AnnotationConfigApplicationContext second = LockApplications.start(zooKeeper, (context) -> {
		}, ReactiveService.class);
		try {
			ReactiveService.inside.set(0);
			ReactiveService.mostInside.set(0);
			List<Mono<Integer>> calls = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				calls.add(service().contended(i));
				calls.add(second.getBean(ReactiveService.class).contended(i));
			}
			List<Integer> done = Flux.merge(calls).collectList().block(Duration.ofSeconds(60));
			assertThat(done).hasSize(100);
			assertThat(ReactiveService.mostInside).hasValue(1);
			assertThat(ReactiveService.inside).hasValue(0);
		}
		finally {
			second.close();
		}
		this.other.assertNoZnodes("/locks/reactive-contended");
	}

	private static ReactiveService service() {
		return application.getBean(ReactiveService.class);
	}

	/** The grants a Mono saw in its Reactor context, and whether the first was held then. */
	record Seen(List<LockHandle> handles, boolean heldThen) {

	}

	/** What the Flux asks the other application while it emits. */
	interface Probe {

		boolean canTake(String key, LockMode mode);

	}

	static class ReactiveService {

		static final AtomicInteger inside = new AtomicInteger();

		static final AtomicInteger mostInside = new AtomicInteger();

		private final AtomicInteger invocations = new AtomicInteger();

		private final BlockingQueue<CompletableFuture<String>> work = new LinkedBlockingQueue<>();

		public int invocations() {
			return this.invocations.get();
		}

		public void reset() {
			this.invocations.set(0);
			this.work.clear();
		}

		/** The work of the next invocation, failing the test when the method is not invoked in time. */
		public CompletableFuture<String> nextWork() throws InterruptedException {
			CompletableFuture<String> next = this.work.poll(10, TimeUnit.SECONDS);
			assertThat(next).as("work of an invocation").isNotNull();
			return next;
		}

		/** A Mono of new work; cancelling the Mono cancels the work. */
		private Mono<String> newWork() {
			this.invocations.incrementAndGet();
			CompletableFuture<String> next = new CompletableFuture<>();
			this.work.add(next);
			return Mono.fromFuture(next);
		}

		@DistributedLock(path = "/reactive/#{#key}")
		public Mono<String> hold(String key) {
			return newWork();
		}

		@DistributedLock(path = "/reactive/#{#key}", waitTime = "200ms")
		public Mono<String> holdBriefly(String key) {
			return newWork();
		}

		@DistributedLock(path = "/reactive/#{#key}")
		public Mono<Long> token(String key) {
			this.invocations.incrementAndGet();
			return ReactiveLockContext.current().map(LockHandle::fencingToken);
		}

		@DistributedLock(path = "/reactive/#{#key}")
		public Mono<Seen> held(String key) {
			return ReactiveLockContext.held().map((handles) -> new Seen(handles, handles.get(0).isHeld()));
		}

		@DistributedLock(path = "/reactive/#{#key}")
		public Mono<String> fail(String key) {
			return Mono.error(new IllegalStateException("boom " + key));
		}

		@DistributedLock(path = "/reactive/#{#key}")
		public Mono<String> throwChecked(String key) throws IOException {
			this.invocations.incrementAndGet();
			throw new IOException("checked " + key);
		}

		@DistributedLock(path = "/reactive/#{#key}", waitTime = "0", onBusy = OnBusy.SKIP)
		public Mono<String> skipMono(String key) {
			this.invocations.incrementAndGet();
			return Mono.just("ran " + key);
		}

		@DistributedLock(path = "/reactive/#{#key}", waitTime = "0", onBusy = OnBusy.SKIP)
		public Flux<String> skipFlux(String key) {
			this.invocations.incrementAndGet();
			return Flux.just("ran " + key, "again " + key);
		}

		@DistributedLock(path = "/reactive/#{#key}")
		public Flux<String> items(String key, Probe probe) {
			return ReactiveLockContext.current()
				.flatMapMany((handle) -> Flux.range(1, 3)
					.map((item) -> handle.fencingToken() + " " + probe.canTake("/reactive/" + key, LockMode.EXCLUSIVE)));
		}

		@DistributedLock(path = "/reactive-rw/#{#key}", mode = LockMode.READ)
		public Mono<String> read(String key) {
			return newWork();
		}

		@DistributedLock(path = "/reactive-rw/#{#key}", mode = LockMode.WRITE)
		public Mono<String> write(String key) {
			return newWork();
		}

		@DistributedSemaphore(path = "/reactive-permits/#{#key}", permits = 2, waitTime = "200ms")
		public Mono<String> permit(String key) {
			return newWork();
		}

		@DistributedLock(path = { "/reactive/#{#first}", "/reactive/#{#second}" })
		public Flux<String> both(String first, String second) {
			return newWork().flux();
		}

		/** Subscribes to {@link #inner} through the proxy, on the key it holds. */
		@DistributedLock(path = "/reactive-nested/#{#key}")
		public Mono<String> outer(String key) {
			return application.getBean(ReactiveService.class).inner(key);
		}

		@DistributedLock(path = "/reactive-nested/#{#key}", waitTime = "300ms")
		public Mono<String> inner(String key) {
			return Mono.just("inner ran " + key);
		}

		@DistributedLock(path = "/reactive-contended", waitTime = "60s")
		public Mono<Integer> contended(int call) {
			return Mono.fromCallable(() -> mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max))
				.delayElement(Duration.ofMillis(1))
				.map((most) -> {
					inside.decrementAndGet();
					return call;
				});
		}

	}

}
