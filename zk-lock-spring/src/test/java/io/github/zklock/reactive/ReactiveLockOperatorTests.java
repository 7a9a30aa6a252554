package io.github.zklock.reactive;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.OnBusy;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link ReactiveLockOperator} used directly, on a real ZooKeeper server: nothing is
 * acquired on assembly, each subscription is a grant of its own with the handle in the Reactor
 * context, released on complete, error and cancel; a busy lock is an empty publisher for
 * {@link OnBusy#SKIP} and {@link LockAcquisitionException} otherwise; cancelling while waiting
 * gives the wait up and leaves no znode; a grant lost while the publisher runs (its session
 * expired, with interrupt-on-lost) cancels the subscription and errors with
 * {@link LockLostException}. A second registry on its own client stands for another application.
 */
class ReactiveLockOperatorTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** Expiry is noticed on the next connection, about a second and a half here. */
	private static final Duration NOTICED = Duration.ofSeconds(20);

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private ReactiveLockOperator locks;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate otherApplication;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
		this.locks = ReactiveLockOperator.create(new LockTemplate(this.registry, BOUND));
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.otherApplication = new LockTemplate(this.otherRegistry, Duration.ZERO);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.registry.close();
		this.otherRegistry.close();
	}

	@Test
	void monoIsLockedPerSubscriptionWithTheGrantInTheContext() {
		AtomicInteger subscriptions = new AtomicInteger();
		Mono<Long> locked = this.locks.lock(LockRequest.of(this.key), Mono.defer(() -> {
			subscriptions.incrementAndGet();
			return ReactiveLockContext.current().map((handle) -> {
				assertThat(handle.isHeld()).isTrue();
				assertThat(this.otherApplication.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
				return handle.fencingToken();
			});
		}));
		// Assembled only: no request, no grant.
		assertThat(subscriptions).hasValue(0);
		assertThat(admin().heldLockCount()).isZero();

		Long first = locked.block(BOUND);
		Long second = locked.block(BOUND);
		assertThat(subscriptions).hasValue(2);
		assertThat(first).isPositive();
		assertThat(second).isGreaterThan(first);
		assertThat(admin().heldLockCount()).isZero();
		assertOtherApplicationCanLock();
	}

	@Test
	void fluxIsReleasedOnCompleteErrorAndCancel() {
		Flux<Integer> three = this.locks.lock(LockRequest.of(this.key), Flux.just(1, 2, 3));
		assertThat(three.collectList().block(BOUND)).containsExactly(1, 2, 3);
		assertReleased();

		IllegalStateException failure = new IllegalStateException("work failed");
		Flux<Integer> failing = this.locks.lock(LockRequest.of(this.key), Flux.error(failure));
		assertThatThrownBy(() -> failing.blockLast(BOUND)).isSameAs(failure);
		assertReleased();

		Disposable endless = this.locks.lock(LockRequest.of(this.key), Flux.<Integer>never()).subscribe();
		await().atMost(BOUND).until(() -> admin().heldLockCount() == 1);
		endless.dispose();
		assertReleased();
	}

	@Test
	void executeBuildsThePublisherFromTheGrant() {
		List<String> paths = this.locks
			.execute(LockRequest.of(List.of(this.key + "/b", this.key + "/a")),
					(handle) -> Flux.fromIterable(handle.parts()).map(LockHandle::path))
			.collectList()
			.block(BOUND);
		assertThat(paths).containsExactly("/locks" + this.key + "/a", "/locks" + this.key + "/b");
		assertReleased();
	}

	@Test
	void busyLockIsEmptyWhenSkippingAndAnErrorOtherwise() {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			LockRequest now = LockRequest.of(this.key).withWaitTime(Duration.ZERO);
			AtomicInteger ran = new AtomicInteger();
			Mono<String> work = Mono.fromCallable(() -> {
				ran.incrementAndGet();
				return "ran";
			});
			assertThat(this.locks.lock(now.withOnBusy(OnBusy.SKIP), work).blockOptional(BOUND)).isEmpty();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.locks.lock(now, work).block(BOUND));
			assertThat(ran).hasValue(0);
		}
		finally {
			held.release();
		}
		assertThat(admin().heldLockCount()).isZero();
	}

	@Test
	void cancellingWhileWaitingGivesTheWaitUp() throws Exception {
		LockHandle held = this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		Disposable waiting = this.locks.lock(LockRequest.of(this.key), Mono.just("ran")).subscribe();
		await().atMost(BOUND).until(() -> !admin().describeWaitingLocks().isEmpty());

		waiting.dispose();
		await().atMost(BOUND).until(() -> admin().describeWaitingLocks().isEmpty());
		held.release();
		await().atMost(BOUND).until(() -> ZooKeeperExtension.ephemeralZnodes(this.client, "/locks" + this.key).isEmpty());
		assertThat(admin().heldLockCount()).isZero();
		assertOtherApplicationCanLock();
	}

	@Test
	void lossWhileThePublisherRunsCancelsItsSubscriptionAndErrors() throws Exception {
		this.registry.setInterruptOnLost(true);
		CompletableFuture<LockHandle> granted = new CompletableFuture<>();
		AtomicBoolean cancelled = new AtomicBoolean();
		Mono<String> endless = ReactiveLockContext.current()
			.doOnNext(granted::complete)
			.then(Mono.<String>never())
			.doOnCancel(() -> cancelled.set(true));
		CompletableFuture<String> result = this.locks.lock(LockRequest.of(this.key), endless).toFuture();
		assertThat(granted).succeedsWithin(BOUND);

		zooKeeper.expireSession(this.client);

		assertThat(result).failsWithin(NOTICED)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOfSatisfying(LockLostException.class, (ex) -> assertThat(ex.getMessage())
				.contains("/locks" + this.key, "while the reactive work was running", "the subscription was cancelled"));
		assertThat(cancelled).isTrue();
		assertReleased();
	}

	private CuratorLockAdmin admin() {
		return new CuratorLockAdmin(this.registry);
	}

	private void assertReleased() {
		await().atMost(BOUND).until(() -> admin().heldLockCount() == 0);
		assertOtherApplicationCanLock();
	}

	private void assertOtherApplicationCanLock() {
		this.otherApplication.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO).release();
	}

}
