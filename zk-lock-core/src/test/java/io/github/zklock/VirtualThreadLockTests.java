package io.github.zklock;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Tests for locks on virtual threads (Java 21 and later; skipped on older JVMs): 1,000 virtual
 * threads calling the synchronous {@code execute} on one key (what {@code spring.threads.virtual.enabled}
 * does to annotated methods), and 1,000 concurrent {@code executeAsync} calls on one key (each
 * grant owned by a virtual thread), all waiting at once while another application holds the key,
 * complete within a bound without two holders at once. Curator
 * waits inside {@code synchronized}, which pins the carrier on Java 21 (not since Java 24); the
 * local queue lets one thread per application wait in Curator for a key, so pinning stays bounded.
 * Pinned events ({@code jdk.VirtualThreadPinned}, threshold 0) are recorded with JFR and printed in
 * a figures line ({@code VT ...}), not asserted: their number depends on the JDK.
 */
class VirtualThreadLockTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int THREADS = 1000;

	private static final Duration BOUND = Duration.ofSeconds(120);

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
		this.registry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.template = LockTemplate.builder(this.registry).defaultWaitTime(BOUND).virtualGrantThreads(true).build();
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		if (this.registry != null) {
			this.registry.close();
			this.otherRegistry.close();
		}
	}

	@Test
	void thousandVirtualThreadsExecuteOnOneKeyWithinTheBound() throws Exception {
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		AtomicInteger completed = new AtomicInteger();
		Pinning pinning = new Pinning();
		long runMs = pinning.record(() -> assertTimeoutPreemptively(BOUND, () -> {
			ExecutorService virtualThreads = newVirtualThreadPerTaskExecutor();
			try {
				LockHandle blocker = holdInOtherApplication();
				List<CompletableFuture<Void>> calls = new ArrayList<>();
				for (int i = 0; i < THREADS; i++) {
					calls.add(CompletableFuture.runAsync(() -> this.template.execute(this.key, (handle) -> {
						maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
						inside.decrementAndGet();
						return completed.incrementAndGet();
					}), virtualThreads));
				}
				awaitAllWaiting(blocker);
				CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();
			}
			finally {
				virtualThreads.shutdown();
				assertThat(virtualThreads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
			}
		}));
		pinning.report("sync-execute", runMs);

		assertThat(completed).hasValue(THREADS);
		assertThat(maxInside).hasValue(1);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.registry).describeWaitingLocks()).isEmpty();
	}

	@Test
	void thousandConcurrentAsyncCallsOnOneKeyCompleteWithinTheBound() throws Exception {
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		Map<Boolean, LongAdder> actionThreads = new ConcurrentHashMap<>();
		Pinning pinning = new Pinning();
		long runMs = pinning.record(() -> assertTimeoutPreemptively(BOUND, () -> {
			LockHandle blocker = holdInOtherApplication();
			List<CompletableFuture<Integer>> calls = new ArrayList<>();
			for (int i = 0; i < THREADS; i++) {
				int call = i;
				calls.add(this.template.executeAsync(this.key, LockMode.EXCLUSIVE, BOUND, (handle) -> {
					maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
					actionThreads.computeIfAbsent(isVirtual(Thread.currentThread()), (virtual) -> new LongAdder())
						.increment();
					inside.decrementAndGet();
					return CompletableFuture.completedFuture(call);
				}));
			}
			awaitAllWaiting(blocker);
			CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();
		}));
		pinning.report("async-execute", runMs);

		assertThat(maxInside).hasValue(1);
		assertThat(actionThreads).containsOnlyKeys(true);
		assertThat(actionThreads.get(true).sum()).isEqualTo(THREADS);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertThat(admin(this.registry).describeWaitingLocks()).isEmpty();
	}

	/** Another application holds the key, so that every virtual thread has to wait. */
	private LockHandle holdInOtherApplication() {
		return this.otherRegistry.tryAcquire(new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO))
			.orElseThrow();
	}

	/** Wait until all virtual threads wait for the key at once, then let them in. */
	private void awaitAllWaiting(LockHandle blocker) {
		await().atMost(BOUND).until(() -> admin(this.registry).describeWaitingLocks().size() == THREADS);
		blocker.release();
	}

	private static ExecutorService newVirtualThreadPerTaskExecutor() throws Exception {
		// Tests compile for Java 17.
		return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
	}

	private static boolean isVirtual(Thread thread) {
		try {
			return (boolean) Thread.class.getMethod("isVirtual").invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** Counts {@code jdk.VirtualThreadPinned} events, by the frame of the lock code that pinned. */
	private static final class Pinning {

		private final LongAdder events = new LongAdder();

		private final Map<String, LongAdder> byFrame = new ConcurrentHashMap<>();

		long record(Runnable run) throws Exception {
			try (RecordingStream stream = new RecordingStream()) {
				stream.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
				stream.onEvent("jdk.VirtualThreadPinned", this::count);
				stream.startAsync();
				long started = System.nanoTime();
				run.run();
				long runMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
				// RecordingStream.stop() (Java 20) delivers the events recorded so far.
				Method stop = RecordingStream.class.getMethod("stop");
				stop.invoke(stream);
				return runMs;
			}
		}

		private void count(RecordedEvent event) {
			this.events.increment();
			String frame = "unknown";
			if (event.getStackTrace() != null) {
				frame = event.getStackTrace()
					.getFrames()
					.stream()
					.map(RecordedFrame::getMethod)
					.filter((method) -> method.getType().getName().startsWith("org.apache.curator")
							|| method.getType().getName().startsWith("io.github.zklock"))
					.findFirst()
					.map((method) -> method.getType().getName() + "." + method.getName())
					.orElse("other");
			}
			this.byFrame.computeIfAbsent(frame, (name) -> new LongAdder()).increment();
		}

		void report(String mode, long runMs) {
			String carriers = System.getProperty("jdk.virtualThreadScheduler.parallelism",
					String.valueOf(Runtime.getRuntime().availableProcessors()));
			String frames = this.byFrame.entrySet()
				.stream()
				.sorted((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum()))
				.limit(3)
				.map((entry) -> entry.getKey() + "=" + entry.getValue().sum())
				.collect(Collectors.joining(",", "[", "]"));
			System.out.printf("VT threads=%d mode=%s run_ms=%d pinned_events=%d carriers=%s java=%d pinned_at=%s%n",
					THREADS, mode, runMs, this.events.sum(), carriers, Runtime.version().feature(), frames);
		}

	}

}
