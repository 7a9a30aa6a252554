package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.actuate.ZkLocksEndpoint;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.actuate.ZkLocksEndpointAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Asynchronous grants in a Boot application on a real ZooKeeper: the template invokes
 * asynchronous work on Boot's {@code applicationTaskExecutor} (virtual threads with
 * {@code spring.threads.virtual.enabled=true}), never leaks a grant over 10,000 asynchronous calls
 * (the {@code zklocks} endpoint empty, no znode left), and 1,000 virtual threads waiting for one key
 * all get it in turn (Java 21 and later).
 */
class AsyncLockAutoConfigurationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class,
				ZkLocksEndpointAutoConfiguration.class, TaskExecutionAutoConfiguration.class))
		.withUserConfiguration(StockConfiguration.class)
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"management.endpoints.web.exposure.include=zklocks");

	@Test
	void asyncWorkRunsOnTheApplicationTaskExecutor() {
		this.contextRunner.run((context) -> {
			LockTemplate template = context.getBean(LockTemplate.class);
			// Boot's applicationTaskExecutor names its threads task-N; the grant threads are pooled
			// platform threads without spring.threads.virtual.enabled.
			assertThat(template
				.executeAsync("/async/executor-virtual", LockMode.EXCLUSIVE, null,
						(handle) -> CompletableFuture.completedFuture(isVirtual(Thread.currentThread())))
				.get(10, TimeUnit.SECONDS)).isFalse();
			String thread = template
				.executeAsync("/async/executor", LockMode.EXCLUSIVE, null,
						(handle) -> CompletableFuture.completedFuture(Thread.currentThread().getName()))
				.get(10, TimeUnit.SECONDS);
			assertThat(thread).startsWith("task-");
		});
	}

	@Test
	void withoutATaskExecutorAsyncWorkRunsOnTheGrantsThread() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
			.run((context) -> {
				LockTemplate template = context.getBean(LockTemplate.class);
				String thread = template
					.executeAsync("/async/own-thread", LockMode.EXCLUSIVE, null,
							(handle) -> CompletableFuture.completedFuture(Thread.currentThread().getName()))
					.get(10, TimeUnit.SECONDS);
				assertThat(thread).startsWith("zk-lock-grant-");
			});
	}

	@Test
	void virtualThreadsRunAsyncWorkAndOwnAsyncGrantsWhenEnabled() {
		assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
		this.contextRunner.withPropertyValues("spring.threads.virtual.enabled=true").run((context) -> {
			LockTemplate template = context.getBean(LockTemplate.class);
			boolean virtual = template
				.executeAsync("/async/virtual", LockMode.EXCLUSIVE, null,
						(handle) -> CompletableFuture.completedFuture(isVirtual(Thread.currentThread())))
				.get(10, TimeUnit.SECONDS);
			assertThat(virtual).isTrue();
		});
	}

	@Test
	void tenThousandAsyncCallsLeaveNoGrantNoWaiterAndNoZnode() {
		this.contextRunner.run((context) -> {
			LockTemplate template = context.getBean(LockTemplate.class);
			ZkLocksEndpoint endpoint = context.getBean(ZkLocksEndpoint.class);
			CuratorFramework client = context.getBean(CuratorFramework.class);
			int calls = 10_000;
			Semaphore inFlight = new Semaphore(16);
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			List<CompletableFuture<Integer>> results = new ArrayList<>(calls);
			long start = System.nanoTime();
			for (int i = 0; i < calls; i++) {
				assertThat(inFlight.tryAcquire(60, TimeUnit.SECONDS)).isTrue();
				int call = i;
				CompletableFuture<Integer> result = template.executeAsync("/async/leak", LockMode.EXCLUSIVE,
						Duration.ofSeconds(60), (handle) -> {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							inside.decrementAndGet();
							return CompletableFuture.completedFuture(call);
						});
				result.whenComplete((value, ex) -> inFlight.release());
				results.add(result);
			}
			CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
			long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			System.out.println("ASYNC calls=" + calls + " in_flight=16 run_ms=" + elapsedMs);
			assertThat(results).allSatisfy((result) -> assertThat(result).isCompleted());
			assertThat(overlaps).hasValue(0);
			ZkLocksEndpoint.ApplicationLocks locks = endpoint.locks();
			assertThat(locks.held()).isEmpty();
			assertThat(locks.waiting()).isEmpty();
			assertThat(client.getChildren().forPath("/locks/async/leak")).isEmpty();
		});
	}

	@ParameterizedTest(name = "local hand-off {0}")
	@ValueSource(booleans = { true, false })
	void oneThousandVirtualThreadsWaitingForOneKeyAllGetItInTurn(boolean localHandoff) {
		assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
		this.contextRunner
			.withPropertyValues("spring.threads.virtual.enabled=true", "zk.lock.local-handoff.enabled=" + localHandoff)
			.run((context) -> {
			Executor executor = context.getBean("applicationTaskExecutor", Executor.class);
			Stock stock = context.getBean(Stock.class);
			int threads = 1000;
			List<CompletableFuture<Boolean>> calls = new ArrayList<>(threads);
			long start = System.nanoTime();
			for (int i = 0; i < threads; i++) {
				calls.add(CompletableFuture.supplyAsync(stock::take, executor));
			}
			CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
			long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			System.out.println("VT spring threads=" + threads + " local_handoff=" + localHandoff + " run_ms="
					+ elapsedMs + " carriers=" + Runtime.getRuntime().availableProcessors());
			assertThat(calls).allSatisfy((call) -> assertThat(call.get()).isTrue());
			assertThat(stock.taken()).isEqualTo(threads);
			assertThat(stock.overlaps()).isZero();
		});
	}

	private static boolean isVirtual(Thread thread) {
		try {
			return (boolean) Thread.class.getMethod("isVirtual").invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			return false;
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class StockConfiguration {

		@Bean
		Stock stock() {
			return new Stock();
		}

	}

	static class Stock {

		private final AtomicInteger taken = new AtomicInteger();

		private final AtomicInteger overlaps = new AtomicInteger();

		private final AtomicInteger inside = new AtomicInteger();

		@DistributedLock(path = "/async/vt-stock", waitTime = "120s")
		public boolean take() {
			boolean alone = this.inside.incrementAndGet() == 1;
			if (!alone) {
				this.overlaps.incrementAndGet();
			}
			boolean virtual = isVirtual(Thread.currentThread());
			this.taken.incrementAndGet();
			this.inside.decrementAndGet();
			return virtual;
		}

		public int taken() {
			return this.taken.get();
		}

		public int overlaps() {
			return this.overlaps.get();
		}

	}

}
