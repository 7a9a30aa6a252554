package io.github.zklock.aop;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.LockUpgradeException;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@code @DistributedLock} methods through the advisor of {@code @EnableDistributedLocks}, in a
 * plain Spring context, on a real ZooKeeper: mutual exclusion between threads and with another
 * process, bounded waits, reentrancy, READ/WRITE, exceptions and {@link LockContext}.
 */
class DistributedLockAspectTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static AnnotationConfigApplicationContext context;

	private CuratorLockRegistry otherProcess;

	@BeforeAll
	static void start() {
		context = new AnnotationConfigApplicationContext(Services.class, LockBeans.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@BeforeEach
	void connectOtherProcess() throws InterruptedException {
		// Another application: its own client (closed by the extension after the test).
		this.otherProcess = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
	}

	@AfterEach
	void closeOtherProcess() {
		this.otherProcess.close();
	}

	@Test
	void eightThreadsNeverRunTheMethodTogether() throws Exception {
		Counter counter = context.getBean(Counter.class);
		int threads = 8;
		int callsPerThread = 25;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> calls = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				calls.add(executor.submit(() -> {
					for (int i = 0; i < callsPerThread; i++) {
						counter.increment();
					}
				}));
			}
			for (Future<?> call : calls) {
				call.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(counter.value()).isEqualTo(threads * callsPerThread);
		assertThat(counter.maxInside()).isEqualTo(1);
	}

	@Test
	void methodIsNotInvokedWhenTheLockIsBusy() {
		Guarded guarded = context.getBean(Guarded.class);
		LockHandle held = otherProcessTakes("/guarded", LockMode.EXCLUSIVE);
		try {
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(guarded::tryOnce)
				.withMessageContaining("/locks/guarded");
			assertThat(guarded.invocations()).isZero();
		}
		finally {
			held.release();
		}
		guarded.tryOnce();
		assertThat(guarded.invocations()).isOne();
	}

	@Test
	void boundedWaitTimesOutAfterItsWaitTime() {
		Guarded guarded = context.getBean(Guarded.class);
		LockHandle held = otherProcessTakes("/guarded", LockMode.EXCLUSIVE);
		try {
			long started = System.nanoTime();
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(guarded::waitHalfASecond);
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
		}
		finally {
			held.release();
		}
	}

	@Test
	void businessExceptionPropagatesUnchangedAfterRelease() {
		Guarded guarded = context.getBean(Guarded.class);
		IOException failure = new IOException("disk full");
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> guarded.fail(failure)).isSameAs(failure);
		// Released: another process gets it at once.
		otherProcessTakes("/guarded", LockMode.EXCLUSIVE).release();
	}

	@Test
	void nestedAnnotatedCallsOnTheSamePathReenter() {
		Outer outer = context.getBean(Outer.class);
		assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThat(outer.reentrant()).isEqualTo("inner"));
	}

	@Test
	void nonReentrantNestedCallFailsAfterItsWaitTime() {
		Outer outer = context.getBean(Outer.class);
		Inner inner = context.getBean(Inner.class);
		assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
			long started = System.nanoTime();
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(outer::nonReentrant);
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		});
		assertThat(inner.nonReentrantInvocations()).isZero();
	}

	@Test
	void readMethodsRunConcurrentlyAndWriteExcludesThem() throws Exception {
		Catalog catalog = context.getBean(Catalog.class);
		CyclicBarrier bothInside = new CyclicBarrier(2);
		ExecutorService executor = Executors.newFixedThreadPool(2);
		try {
			// Each reader waits inside the lock for the other: only possible if READ is shared.
			Future<Boolean> first = executor.submit(() -> catalog.read(() -> bothInside.await(10, TimeUnit.SECONDS)));
			Future<Boolean> second = executor.submit(() -> catalog.read(() -> bothInside.await(10, TimeUnit.SECONDS)));
			assertThat(first.get(20, TimeUnit.SECONDS)).isTrue();
			assertThat(second.get(20, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			executor.shutdownNow();
		}
		LockHandle write = otherProcessTakes("/catalog", LockMode.WRITE);
		try {
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(catalog::readOnce);
		}
		finally {
			write.release();
		}
	}

	@Test
	void writeHolderMayCallReadMethodButReadHolderCannotCallWriteMethod() {
		Catalog catalog = context.getBean(Catalog.class);
		assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
			assertThat(catalog.writeThenRead()).isTrue();
			assertThatExceptionOfType(LockUpgradeException.class).isThrownBy(catalog::readThenWrite);
		});
		// Nothing left behind: another process can write.
		otherProcessTakes("/catalog", LockMode.WRITE).release();
	}

	@Test
	void methodSeesTheHandleOfItsLock() {
		Guarded guarded = context.getBean(Guarded.class);
		assertThat(LockContext.current()).isEmpty();
		LockHandle seen = guarded.currentHandle();
		assertThat(seen.path()).isEqualTo("/locks/guarded");
		assertThat(seen.mode()).isEqualTo(LockMode.EXCLUSIVE);
		// Released with the call, and gone from the context.
		assertThat(seen.isHeld()).isFalse();
		assertThat(LockContext.current()).isEmpty();
		assertThatIllegalStateException().isThrownBy(LockContext::require);
	}

	/** Take a lock in the other application at once, failing the test if it is busy. */
	private LockHandle otherProcessTakes(String key, LockMode mode) {
		return this.otherProcess.tryAcquire(new LockTarget(key, mode, true, 0, Duration.ZERO)).orElseThrow();
	}

	/**
	 * What a plain Spring application defines: a client, the registry and the template, whose
	 * default wait time is what {@code zk.lock.default-wait-time=10s} set in the Boot version.
	 */
	@Configuration(proxyBeanMethods = false)
	static class LockBeans {

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			// Made before the first test: the extension closes it after the class.
			return zooKeeper.newClient();
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, Duration.ofSeconds(10));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Services {

		@Bean
		Counter counter() {
			return new Counter();
		}

		@Bean
		Guarded guarded() {
			return new Guarded();
		}

		@Bean
		Inner inner() {
			return new Inner();
		}

		@Bean
		Outer outer(Inner inner) {
			return new Outer(inner);
		}

		@Bean
		Catalog catalog() {
			return new Catalog();
		}

	}

	static class Counter {

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger maxInside = new AtomicInteger();

		int value;

		@DistributedLock(path = "/counter")
		public void increment() {
			this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
			int read = this.value;
			Thread.yield();
			this.value = read + 1;
			this.inside.decrementAndGet();
		}

		// Accessors, not fields: the bean is a CGLIB proxy whose own fields stay empty.
		public int value() {
			return this.value;
		}

		public int maxInside() {
			return this.maxInside.get();
		}

	}

	static class Guarded {

		final AtomicInteger invocations = new AtomicInteger();

		@DistributedLock(path = "/guarded", waitTime = "0")
		public void tryOnce() {
			this.invocations.incrementAndGet();
		}

		@DistributedLock(path = "/guarded", waitTime = "500")
		public void waitHalfASecond() {
			this.invocations.incrementAndGet();
		}

		@DistributedLock(path = "/guarded")
		public void fail(IOException failure) throws IOException {
			throw failure;
		}

		public int invocations() {
			return this.invocations.get();
		}

		@DistributedLock(path = "/guarded")
		public LockHandle currentHandle() {
			LockHandle handle = LockContext.require();
			assertThat(handle.isHeld()).isTrue();
			assertThat(handle.fencingToken()).isPositive();
			return handle;
		}

	}

	static class Outer {

		private final Inner inner;

		Outer(Inner inner) {
			this.inner = inner;
		}

		@DistributedLock(path = "/nested", waitTime = "0")
		public String reentrant() {
			return this.inner.reentrant();
		}

		@DistributedLock(path = "/nested-mutex", reentrant = false, waitTime = "0")
		public String nonReentrant() {
			return this.inner.nonReentrant();
		}

	}

	static class Inner {

		final AtomicInteger nonReentrantInvocations = new AtomicInteger();

		@DistributedLock(path = "/nested", waitTime = "0")
		public String reentrant() {
			return "inner";
		}

		@DistributedLock(path = "/nested-mutex", reentrant = false, waitTime = "300")
		public String nonReentrant() {
			this.nonReentrantInvocations.incrementAndGet();
			return "inner";
		}

		public int nonReentrantInvocations() {
			return this.nonReentrantInvocations.get();
		}

	}

	static class Catalog {

		@DistributedLock(path = "/catalog", mode = LockMode.READ)
		public boolean read(java.util.concurrent.Callable<?> inside) throws Exception {
			inside.call();
			return true;
		}

		@DistributedLock(path = "/catalog", mode = LockMode.READ, waitTime = "0")
		public boolean readOnce() {
			return true;
		}

		@DistributedLock(path = "/catalog", mode = LockMode.WRITE, waitTime = "0")
		public boolean write() {
			return true;
		}

		@DistributedLock(path = "/catalog", mode = LockMode.WRITE, waitTime = "0")
		public boolean writeThenRead() {
			return self().readOnce();
		}

		@DistributedLock(path = "/catalog", mode = LockMode.READ, waitTime = "0")
		public boolean readThenWrite() {
			return self().write();
		}

		private Catalog self() {
			return context.getBean(Catalog.class);
		}

	}

}
