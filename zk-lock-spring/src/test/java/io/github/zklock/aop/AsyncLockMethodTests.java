package io.github.zklock.aop;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock} and {@code @DistributedSemaphore} on methods returning
 * {@code CompletableFuture} or {@code CompletionStage}, in a plain Spring context on a real
 * ZooKeeper, watched by "another application" (its own client and registry): the grant is held
 * from before the method runs until the stage it returns completes (normally, exceptionally, by
 * cancellation), then released, leaving no znode; what the method throws, checked or not, fails
 * the future; a {@code null} stage completes with {@code null}; invalid key values throw at call
 * time; {@code onBusy = SKIP} completes with {@code null} or an empty {@code Optional}; READ and
 * WRITE, permits and several keys; a nested call on the key its caller holds fails after its wait
 * instead of hanging; the synchronous part sees {@link LockContext} and runs on the template's
 * async executor; a lost grant fails the future with {@link LockLostException} with
 * interrupt-on-lost; two applications with 50 concurrent calls each never overlap.
 */
class AsyncLockMethodTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static AnnotationConfigApplicationContext application;

	private OtherApplication other;

	@BeforeAll
	static void start() throws InterruptedException {
		application = LockApplications.start(zooKeeper, (context) -> {
		}, AsyncService.class, NestedCaller.class);
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
	void lockIsHeldUntilTheReturnedFutureCompletes() throws Exception {
		AsyncService service = service();
		CompletableFuture<String> result = service.hold("held");
		CompletableFuture<String> work = service.nextWork();
		assertThat(this.other.canTake("/async/held", LockMode.EXCLUSIVE)).isFalse();
		assertThat(result).isNotDone();
		work.complete("done");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		// The caller's future completes after the release.
		assertThat(this.other.canTake("/async/held", LockMode.EXCLUSIVE)).isTrue();
		this.other.assertNoZnodes("/locks/async/held");
	}

	@Test
	void failedFutureReleasesAndFailsTheCallersFuture() throws Exception {
		AsyncService service = service();
		CompletionStage<String> result = service.holdStage("failing");
		service.nextWork().completeExceptionally(new IllegalStateException("boom"));
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> result.toCompletableFuture().get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(IllegalStateException.class)
			.withMessageContaining("boom");
		assertThat(this.other.canTake("/async/failing", LockMode.EXCLUSIVE)).isTrue();
		this.other.assertNoZnodes("/locks/async/failing");
	}

	@Test
	void exceptionThrownByTheMethodFailsTheFutureAndReleases() throws Exception {
		CompletableFuture<String> result = service().throwChecked("throwing");
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(IOException.class)
			.withMessageContaining("checked throwing");
		assertThat(this.other.canTake("/async/throwing", LockMode.EXCLUSIVE)).isTrue();
		this.other.assertNoZnodes("/locks/async/throwing");
	}

	@Test
	void nullStageCompletesWithNullAfterTheRelease() throws Exception {
		assertThat(service().returnNull("null").get(10, TimeUnit.SECONDS)).isNull();
		assertThat(this.other.canTake("/async/null", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void invalidKeyValueThrowsAtCallTimeWithoutInvokingTheMethod() {
		AsyncService service = service();
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> service.hold(null));
		assertThat(service.invocations()).isZero();
	}

	@Test
	void cancellingTheCallersFutureCancelsTheWorkAndReleases() throws Exception {
		AsyncService service = service();
		CompletableFuture<String> result = service.hold("cancelled");
		CompletableFuture<String> work = service.nextWork();
		result.cancel(true);
		await().atMost(Duration.ofSeconds(10)).until(work::isCancelled);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.other.canTake("/async/cancelled", LockMode.EXCLUSIVE));
		this.other.assertNoZnodes("/locks/async/cancelled");
	}

	@Test
	void busyLockSkipsTheMethodWithNullOrEmptyOptional() throws Exception {
		AsyncService service = service();
		LockHandle held = this.other.take("/async/busy");
		try {
			assertThat(service.skip("busy").get(10, TimeUnit.SECONDS)).isNull();
			assertThat(service.skipOptional("busy").get(10, TimeUnit.SECONDS)).isEmpty();
			assertThat(service.invocations()).isZero();
		}
		finally {
			held.release();
		}
		assertThat(service.skip("busy").get(10, TimeUnit.SECONDS)).isEqualTo("ran busy");
		assertThat(service.skipOptional("busy").get(10, TimeUnit.SECONDS)).contains("ran busy");
	}

	@Test
	void busyLockFailsTheFutureAfterTheWaitTime() {
		AsyncService service = service();
		LockHandle held = this.other.take("/async/taken");
		try {
			CompletableFuture<String> result = service.holdBriefly("taken");
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockAcquisitionException.class);
			assertThat(service.invocations()).isZero();
		}
		finally {
			held.release();
		}
	}

	@Test
	void readersShareTheKeyAndAWriterExcludesThem() throws Exception {
		AsyncService service = service();
		CompletableFuture<String> firstRead = service.read("rw");
		CompletableFuture<String> firstWork = service.nextWork();
		CompletableFuture<String> secondRead = service.read("rw");
		CompletableFuture<String> secondWork = service.nextWork();
		assertThat(this.other.canTake("/rw/rw", LockMode.READ)).isTrue();
		assertThat(this.other.canTake("/rw/rw", LockMode.WRITE)).isFalse();
		firstWork.complete("one");
		secondWork.complete("two");
		assertThat(firstRead.get(10, TimeUnit.SECONDS)).isEqualTo("one");
		assertThat(secondRead.get(10, TimeUnit.SECONDS)).isEqualTo("two");

		CompletableFuture<String> write = service.write("rw");
		CompletableFuture<String> writeWork = service.nextWork();
		assertThat(this.other.canTake("/rw/rw", LockMode.READ)).isFalse();
		writeWork.complete("written");
		assertThat(write.get(10, TimeUnit.SECONDS)).isEqualTo("written");
		assertThat(this.other.canTake("/rw/rw", LockMode.WRITE)).isTrue();
	}

	@Test
	void semaphoreHoldsItsPermitsUntilTheFuturesComplete() throws Exception {
		AsyncService service = service();
		CompletableFuture<String> first = service.permit("partner");
		CompletableFuture<String> firstWork = service.nextWork();
		CompletableFuture<String> second = service.permit("partner");
		CompletableFuture<String> secondWork = service.nextWork();
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> service.permit("partner").get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(LockAcquisitionException.class);
		firstWork.complete("one");
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("one");
		CompletableFuture<String> third = service.permit("partner");
		service.nextWork().complete("three");
		secondWork.complete("two");
		assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo("three");
		assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("two");
		this.other.assertNoZnodes("/locks/permits/partner");
	}

	@Test
	void everyKeyOfAMultiLockIsHeldUntilTheFutureCompletes() throws Exception {
		AsyncService service = service();
		CompletableFuture<String> result = service.both("multi-b", "multi-a");
		CompletableFuture<String> work = service.nextWork();
		assertThat(this.other.canTake("/async/multi-a", LockMode.EXCLUSIVE)).isFalse();
		assertThat(this.other.canTake("/async/multi-b", LockMode.EXCLUSIVE)).isFalse();
		work.complete("both");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("both");
		assertThat(this.other.canTake("/async/multi-a", LockMode.EXCLUSIVE)).isTrue();
		assertThat(this.other.canTake("/async/multi-b", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void nestedCallOnTheKeyItsCallerHoldsFailsAfterItsWaitInsteadOfHanging() {
		NestedCaller caller = application.getBean(NestedCaller.class);
		CompletableFuture<String> result = caller.outer("nested");
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(LockAcquisitionException.class);
		assertThat(this.other.canTake("/nested/nested", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void synchronousPartSeesTheGrantInLockContextWithItsFencingToken() throws Exception {
		AsyncService service = service();
		long first = service.token("token").get(10, TimeUnit.SECONDS);
		long second = service.token("token").get(10, TimeUnit.SECONDS);
		assertThat(first).isPositive();
		assertThat(second).isGreaterThan(first);
		assertThat(service.threads()).allMatch((name) -> name.startsWith("zk-lock-grant-"));
	}

	@Test
	void methodRunsOnTheTemplatesAsyncExecutor() throws Exception {
		ExecutorService executor = Executors.newSingleThreadExecutor((task) -> new Thread(task, "app-task"));
		AnnotationConfigApplicationContext withExecutor = LockApplications.start(zooKeeper,
				(context) -> context.registerBean("lockAsyncExecutor", Executor.class, () -> executor),
				AsyncService.class, NestedCaller.class);
		try {
			AsyncService service = withExecutor.getBean(AsyncService.class);
			assertThat(service.token("executor").get(10, TimeUnit.SECONDS)).isPositive();
			assertThat(service.threads()).containsExactly("app-task");
		}
		finally {
			withExecutor.close();
			executor.shutdownNow();
		}
	}

	@Test
	void lostGrantFailsTheFutureWithLockLostException() throws Exception {
		CuratorLockRegistry registry = application.getBean(CuratorLockRegistry.class);
		CuratorFramework client = application.getBean(CuratorFramework.class);
		registry.setInterruptOnLost(true);
		try {
			AsyncService service = service();
			CompletableFuture<String> result = service.hold("lost");
			CompletableFuture<String> work = service.nextWork();
			zooKeeper.expireSession(client);
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(20, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockLostException.class)
				.withMessageContaining("/locks/async/lost");
			assertThat(work).isCancelled();
		}
		finally {
			registry.setInterruptOnLost(false);
			await().atMost(Duration.ofSeconds(10)).until(() -> client.getZookeeperClient().isConnected());
		}
		assertThat(this.other.canTake("/async/lost", LockMode.EXCLUSIVE)).isTrue();
	}

	@Test
	void twoApplicationsWithFiftyConcurrentCallsEachNeverOverlap() throws Exception {
		AnnotationConfigApplicationContext second = LockApplications.start(zooKeeper, (context) -> {
		}, AsyncService.class, NestedCaller.class);
		try {
			AsyncService.inside.set(0);
			AsyncService.mostInside.set(0);
			List<CompletableFuture<Integer>> calls = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				calls.add(service().contended(i));
				calls.add(second.getBean(AsyncService.class).contended(i));
			}
			CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
			assertThat(AsyncService.mostInside).hasValue(1);
			assertThat(AsyncService.inside).hasValue(0);
			assertThat(calls).allMatch((call) -> !call.isCompletedExceptionally());
		}
		finally {
			second.close();
		}
		this.other.assertNoZnodes("/locks/contended");
	}

	private static AsyncService service() {
		return application.getBean(AsyncService.class);
	}

	static class AsyncService {

		static final AtomicInteger inside = new AtomicInteger();

		static final AtomicInteger mostInside = new AtomicInteger();

		final AtomicInteger invocations = new AtomicInteger();

		final BlockingQueue<CompletableFuture<String>> work = new LinkedBlockingQueue<>();

		final List<String> threads = new CopyOnWriteArrayList<>();

		public int invocations() {
			return this.invocations.get();
		}

		public List<String> threads() {
			return List.copyOf(this.threads);
		}

		public void reset() {
			this.invocations.set(0);
			this.work.clear();
			this.threads.clear();
		}

		/** The work of the next invocation, failing the test when the method is not invoked in time. */
		public CompletableFuture<String> nextWork() throws InterruptedException {
			CompletableFuture<String> next = this.work.poll(10, TimeUnit.SECONDS);
			assertThat(next).as("work of an invocation").isNotNull();
			return next;
		}

		private CompletableFuture<String> newWork() {
			this.invocations.incrementAndGet();
			CompletableFuture<String> next = new CompletableFuture<>();
			this.work.add(next);
			return next;
		}

		@DistributedLock(path = "/async/#{#key}")
		public CompletableFuture<String> hold(String key) {
			return newWork();
		}

		@DistributedLock(path = "/async/#{#key}")
		public CompletionStage<String> holdStage(String key) {
			return newWork();
		}

		@DistributedLock(path = "/async/#{#key}", waitTime = "200ms")
		public CompletableFuture<String> holdBriefly(String key) {
			return newWork();
		}

		@DistributedLock(path = "/async/#{#key}")
		public CompletableFuture<String> throwChecked(String key) throws IOException {
			this.invocations.incrementAndGet();
			throw new IOException("checked " + key);
		}

		@DistributedLock(path = "/async/#{#key}")
		public CompletableFuture<String> returnNull(String key) {
			return null;
		}

		@DistributedLock(path = "/async/#{#key}", waitTime = "0", onBusy = OnBusy.SKIP)
		public CompletableFuture<String> skip(String key) {
			this.invocations.incrementAndGet();
			return CompletableFuture.completedFuture("ran " + key);
		}

		@DistributedLock(path = "/async/#{#key}", waitTime = "0", onBusy = OnBusy.SKIP)
		public CompletableFuture<Optional<String>> skipOptional(String key) {
			this.invocations.incrementAndGet();
			return CompletableFuture.completedFuture(Optional.of("ran " + key));
		}

		@DistributedLock(path = "/rw/#{#key}", mode = LockMode.READ)
		public CompletableFuture<String> read(String key) {
			return newWork();
		}

		@DistributedLock(path = "/rw/#{#key}", mode = LockMode.WRITE)
		public CompletableFuture<String> write(String key) {
			return newWork();
		}

		@DistributedSemaphore(path = "/permits/#{#key}", permits = 2, waitTime = "200ms")
		public CompletableFuture<String> permit(String key) {
			return newWork();
		}

		@DistributedLock(path = { "/async/#{#first}", "/async/#{#second}" })
		public CompletableFuture<String> both(String first, String second) {
			return newWork();
		}

		@DistributedLock(path = "/async/#{#key}")
		public CompletableFuture<Long> token(String key) {
			this.threads.add(Thread.currentThread().getName());
			return CompletableFuture.completedFuture(LockContext.require().fencingToken());
		}

		@DistributedLock(path = "/contended", waitTime = "60s")
		public CompletableFuture<Integer> contended(int call) {
			mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
			// The work ends on another thread, a little later, as real asynchronous work would.
			return CompletableFuture.supplyAsync(() -> {
				inside.decrementAndGet();
				return call;
			}, CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS));
		}

	}

	static class NestedCaller {

		/** Calls {@link #inner} through the proxy, on the key it holds. */
		@DistributedLock(path = "/nested/#{#key}")
		public CompletableFuture<String> outer(String key) {
			return application.getBean(NestedCaller.class).inner(key);
		}

		@DistributedLock(path = "/nested/#{#key}", waitTime = "300ms")
		public CompletableFuture<String> inner(String key) {
			return CompletableFuture.completedFuture("inner ran " + key);
		}

	}

}
