package io.github.zklock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Tests for many asynchronous grants of one key on a real ZooKeeper server: 10,000
 * {@code executeAsync} calls, several in flight at a time, leave no grant, waiter or lock znode
 * behind; two applications making 50 concurrent calls each never hold the key at the same time
 * and every call completes. Prints a figures line per test ({@code ASYNC ...}).
 */
class AsyncLockLoadTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration WAIT = Duration.ofSeconds(60);

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate otherApplication;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
		this.template = new LockTemplate(this.registry, WAIT);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.otherApplication = new LockTemplate(this.otherRegistry, WAIT);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.registry.close();
		this.otherRegistry.close();
	}

	@ParameterizedTest(name = "virtual grant threads {0}")
	@ValueSource(booleans = { false, true })
	void tenThousandAsyncCallsLeaveNoGrantBehind(boolean virtualGrantThreads) throws Exception {
		assumeTrue(!virtualGrantThreads || Runtime.version().feature() >= 21, "virtual threads need Java 21");
		this.template = LockTemplate.builder(this.registry).defaultWaitTime(WAIT).virtualGrantThreads(virtualGrantThreads).build();
		int calls = 10_000;
		int inFlight = 8;
		Semaphore slots = new Semaphore(inFlight);
		AtomicInteger completed = new AtomicInteger();
		ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
		long started = System.nanoTime();
		for (int i = 0; i < calls; i++) {
			assertThat(slots.tryAcquire(60, TimeUnit.SECONDS)).as("a slot within 60 s at call %d", i).isTrue();
			int call = i;
			this.template
				.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> CompletableFuture.completedFuture(call))
				.whenComplete((value, ex) -> {
					if (ex != null) {
						failures.add(ex);
					}
					else {
						completed.incrementAndGet();
					}
					slots.release();
				});
		}
		assertThat(slots.tryAcquire(inFlight, 60, TimeUnit.SECONDS)).isTrue();
		long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
		System.out.printf("ASYNC calls=%d in_flight=%d run_ms=%d per_call_us=%d java=%d virtual_grants=%s%n", calls,
				inFlight, elapsedMs, elapsedMs * 1000 / calls, Runtime.version().feature(), virtualGrantThreads);

		assertThat(failures).isEmpty();
		assertThat(completed).hasValue(calls);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.registry).heldLocks()).isEmpty();
		assertThat(admin(this.registry).describeWaitingLocks()).isEmpty();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, ROOT + this.key)).isEmpty();
	}

	@Test
	void twoApplicationsMakingFiftyConcurrentCallsEachNeverOverlap() throws Exception {
		int callsPerApplication = 50;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		Executor later = CompletableFuture.delayedExecutor(2, TimeUnit.MILLISECONDS);
		List<CompletableFuture<Integer>> results = new ArrayList<>();
		long started = System.nanoTime();
		for (int i = 0; i < callsPerApplication; i++) {
			for (LockTemplate application : List.of(this.template, this.otherApplication)) {
				int call = i;
				results.add(application.executeAsync(this.key, LockMode.EXCLUSIVE, WAIT, (handle) -> {
					maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
					// The work ends on another thread, after the action returned.
					return CompletableFuture.supplyAsync(() -> {
						inside.decrementAndGet();
						return call;
					}, later);
				}));
			}
		}
		CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
		long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
		System.out.printf("ASYNC applications=2 calls=%d run_ms=%d max_inside=%d%n", results.size(), elapsedMs,
				maxInside.get());

		assertThat(results).allSatisfy((result) -> assertThat(result).isCompletedWithValueMatching((v) -> v >= 0));
		assertThat(maxInside).hasValue(1);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.otherRegistry).heldLockCount()).isZero();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, ROOT + this.key)).isEmpty();
	}

}
