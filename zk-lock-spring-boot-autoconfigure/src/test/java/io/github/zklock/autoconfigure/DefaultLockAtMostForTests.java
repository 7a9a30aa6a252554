package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import io.github.zklock.LockContext;
import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code zk.lock.default-lock-at-most-for} on annotated methods, as Spring Boot wires it, on a real
 * ZooKeeper: a method without its own {@code lockAtMostFor} that is stuck loses its lock at the
 * property's ceiling (told as a {@link LockStateEvent}), and another process, with Curator's own
 * {@link InterProcessMutex} on the key, is granted within a second of it; a method with
 * {@code lockAtMostFor = DistributedLock.NO_CEILING} ({@code "none"}) keeps its lock past that
 * ceiling; a method's own ceiling wins over the property.
 */
class DefaultLockAtMostForTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration CEILING = Duration.ofSeconds(1);

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** Another process on the same server. */
	private static CuratorFramework other;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withUserConfiguration(StuckConfiguration.class)
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"zk.lock.default-lock-at-most-for=" + CEILING.toMillis() + "ms", "zk.lock.default-wait-time=10s");

	@BeforeAll
	static void otherProcess() throws InterruptedException {
		other = zooKeeper.newClient();
	}

	@Test
	void theDefaultEndsAStuckMethodsLockAndTheOtherProcessIsGrantedWithinASecondOfIt() {
		this.contextRunner.run((context) -> {
			LockEvents events = context.getBean(LockEvents.class);
			CountDownLatch unstick = new CountDownLatch(1);
			CompletableFuture<LockState> stuck = enter(context.getBean(StuckService.class)::defaulted, unstick);
			long grantedAt = System.nanoTime();

			InterProcessMutex mutex = new InterProcessMutex(other, "/locks/ceiling/defaulted");
			assertThat(mutex.acquire(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
			long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - grantedAt);
			try {
				assertThat(waitedMs).as("granted at the ceiling, within a second of it")
					.isBetween(CEILING.toMillis() - 100, CEILING.toMillis() + 1000);
				await().atMost(BOUND)
					.untilAsserted(() -> assertThat(events.received).singleElement().satisfies((event) -> {
						assertThat(event.state()).isEqualTo(LockState.LOST);
						assertThat(event.path()).isEqualTo("/locks/ceiling/defaulted");
					}));
			}
			finally {
				unstick.countDown();
				mutex.release();
			}
			// The method was not stopped: it returns, without its lock.
			assertThat(stuck).succeedsWithin(BOUND).isEqualTo(LockState.LOST);
		});
	}

	@Test
	void aMethodWithLockAtMostForZeroKeepsItsLockPastTheDefault() {
		this.contextRunner.run((context) -> {
			LockEvents events = context.getBean(LockEvents.class);
			CountDownLatch unstick = new CountDownLatch(1);
			CompletableFuture<LockState> stuck = enter(context.getBean(StuckService.class)::optedOut, unstick);

			InterProcessMutex mutex = new InterProcessMutex(other, "/locks/ceiling/opted-out");
			try {
				// Waits past the default ceiling plus the second the test above allows for it.
				assertThat(mutex.acquire(CEILING.toMillis() + 1500, TimeUnit.MILLISECONDS)).isFalse();
				assertThat(events.received).isEmpty();
			}
			finally {
				unstick.countDown();
			}
			assertThat(stuck).succeedsWithin(BOUND).isEqualTo(LockState.HELD);
			assertThat(mutex.acquire(BOUND.toSeconds(), TimeUnit.SECONDS)).as("released on return").isTrue();
			mutex.release();
		});
	}

	@Test
	void aMethodsOwnLockAtMostForWinsOverTheDefault() {
		this.contextRunner.run((context) -> {
			StuckService service = context.getBean(StuckService.class);
			Instant before = Instant.now();
			Optional<Instant> deadline = service.ownCeiling();
			assertThat(deadline).hasValueSatisfying((value) -> assertThat(value)
				.isBetween(before.plusSeconds(20).minusMillis(50), Instant.now().plusSeconds(20).plusMillis(50)));
		});
	}

	/**
	 * Call a stuck method on another thread and return once it runs under its lock.
	 * @param method the method, given the latch it counts down once entered and the one that
	 * unsticks it
	 * @return what the method returns: its grant's state when unstuck
	 */
	private static CompletableFuture<LockState> enter(
			BiFunction<CountDownLatch, CountDownLatch, LockState> method, CountDownLatch unstick)
			throws InterruptedException {
		CountDownLatch entered = new CountDownLatch(1);
		CompletableFuture<LockState> call = CompletableFuture.supplyAsync(() -> method.apply(entered, unstick));
		assertThat(entered.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("entered the method").isTrue();
		return call;
	}

	@Configuration(proxyBeanMethods = false)
	static class StuckConfiguration {

		@Bean
		StuckService stuckService() {
			return new StuckService();
		}

		@Bean
		LockEvents lockEvents() {
			return new LockEvents();
		}

	}

	static class LockEvents {

		final List<LockStateEvent> received = new CopyOnWriteArrayList<>();

		@EventListener
		void on(LockStateEvent event) {
			this.received.add(event);
		}

	}

	static class StuckService {

		/** No lockAtMostFor: {@code zk.lock.default-lock-at-most-for} applies. */
		@DistributedLock(path = "/ceiling/defaulted")
		public LockState defaulted(CountDownLatch entered, CountDownLatch unstick) {
			return stuck(entered, unstick);
		}

		@DistributedLock(path = "/ceiling/opted-out", lockAtMostFor = DistributedLock.NO_CEILING)
		public LockState optedOut(CountDownLatch entered, CountDownLatch unstick) {
			return stuck(entered, unstick);
		}

		@DistributedLock(path = "/ceiling/own", lockAtMostFor = "20s")
		public Optional<Instant> ownCeiling() {
			return LockContext.require().deadline();
		}

		/** Stuck until the test lets go, 10 s at most; then say what became of the grant. */
		private static LockState stuck(CountDownLatch entered, CountDownLatch unstick) {
			entered.countDown();
			try {
				unstick.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return LockContext.require().state();
		}

	}

}
