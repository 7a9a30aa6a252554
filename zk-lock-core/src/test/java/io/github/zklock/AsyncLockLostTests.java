package io.github.zklock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for asynchronous grants lost with their ZooKeeper session, expired on a real server: with
 * interrupt-on-lost, {@link AsyncLockHandle#whenLost()} completes, the action's stage is cancelled
 * and {@code executeAsync}'s future fails with {@link LockLostException} (also, once it ends, for a
 * stage that cancelling does not stop); work that completed before the loss, whose release is
 * held up ({@link HeldUpReleases}) until the loss was signalled, keeps its result
 * ({@link LockResult#lockLostAfterWork()}); without interrupt-on-lost, the grant only reports
 * {@link LockState#LOST} and the work goes on. The registry's listeners are told in
 * both cases. A second client stands for another application that gets the key afterwards.
 */
class AsyncLockLostTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration WAIT = Duration.ofSeconds(10);

	/** Expiry is noticed on the next connection, about a second and a half here. */
	private static final Duration NOTICED = Duration.ofSeconds(20);

	private final List<LockStateEvent> events = new CopyOnWriteArrayList<>();

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockRegistry otherRegistry;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
		this.registry.addLockStateListener(this.events::add);
		this.template = new LockTemplate(this.registry, WAIT);
		this.otherRegistry = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName()
				+ testInfo.getDisplayName().replaceAll("[^A-Za-z0-9_]", "");
	}

	@AfterEach
	void close() {
		this.registry.close();
		this.otherRegistry.close();
	}

	@ParameterizedTest
	@EnumSource(value = LockMode.class)
	void lostGrantCancelsTheWorkAndFailsTheResultWithInterruptOnLost(LockMode mode) throws Exception {
		this.registry.setInterruptOnLost(true);
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicReference<LockHandle> granted = new AtomicReference<>();
		CompletableFuture<String> result = this.template.executeAsync(this.key, mode, WAIT, (handle) -> {
			granted.set(handle);
			return work;
		});
		await().atMost(WAIT).until(() -> granted.get() != null);
		AsyncLockHandle handle = (AsyncLockHandle) granted.get();

		zooKeeper.expireSession(this.client);

		assertThat(handle.whenLost().toCompletableFuture()).succeedsWithin(NOTICED);
		assertThat(result).failsWithin(WAIT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOfSatisfying(LockLostException.class,
					(ex) -> assertThat(ex.getMessage()).contains(ROOT + this.key, "the work was cancelled"));
		assertThat(work).isCancelled();
		assertThat(handle.state()).isIn(LockState.LOST, LockState.RELEASED);
		assertToldLost();
		await().atMost(WAIT).until(() -> admin(this.registry).heldLockCount() == 0);
		assertOtherApplicationCanAcquire(mode);
	}

	@ParameterizedTest
	@EnumSource(value = LockMode.class)
	void lossSignalledAfterTheWorkCompletedKeepsItsResultAndSaysSo(LockMode mode) throws Exception {
		this.registry.setInterruptOnLost(true);
		HeldUpReleases releases = new HeldUpReleases(this.registry);
		LockTemplate template = new LockTemplate(releases, WAIT);
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicReference<LockHandle> granted = new AtomicReference<>();
		CompletableFuture<LockResult<String>> result = template.async()
			.execute(LockRequest.of(this.key).withMode(mode), (handle) -> {
				granted.set(handle);
				return work;
			});
		await().atMost(WAIT).until(() -> granted.get() != null);
		AsyncLockHandle handle = (AsyncLockHandle) granted.get();

		// The work completes (its effects committed, say); its release is on its way, held up here.
		work.complete("committed");
		assertThat(releases.asked()).succeedsWithin(WAIT);
		zooKeeper.expireSession(this.client);
		assertThat(handle.whenLost().toCompletableFuture()).succeedsWithin(NOTICED);
		assertThat(result).isNotDone();
		releases.letGo();

		assertThat(result).succeedsWithin(WAIT).isEqualTo(LockResult.executedThenLost("committed"));
		assertThat(result.join().lockLostAfterWork()).isTrue();
		assertThat(work).isCompletedWithValue("committed");
		assertToldLost();
		await().atMost(WAIT).until(() -> admin(this.registry).heldLockCount() == 0);
		assertOtherApplicationCanAcquire(mode);
	}

	@Test
	void executeAsyncKeepsTheValueOfWorkThatCompletedBeforeTheLoss() throws Exception {
		this.registry.setInterruptOnLost(true);
		HeldUpReleases releases = new HeldUpReleases(this.registry);
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicReference<LockHandle> granted = new AtomicReference<>();
		CompletableFuture<String> result = new LockTemplate(releases, WAIT).executeAsync(this.key, LockMode.EXCLUSIVE,
				WAIT, (handle) -> {
					granted.set(handle);
					return work;
				});
		await().atMost(WAIT).until(() -> granted.get() != null);

		work.complete("committed");
		assertThat(releases.asked()).succeedsWithin(WAIT);
		zooKeeper.expireSession(this.client);
		assertThat(((AsyncLockHandle) granted.get()).whenLost().toCompletableFuture()).succeedsWithin(NOTICED);
		releases.letGo();

		assertThat(result).succeedsWithin(WAIT).isEqualTo("committed");
		assertOtherApplicationCanAcquire(LockMode.EXCLUSIVE);
	}

	@Test
	void workWhoseStageCannotBeCancelledFailsWithTheLossOnceItEnds() throws Exception {
		this.registry.setInterruptOnLost(true);
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicReference<LockHandle> granted = new AtomicReference<>();
		// A minimal stage: cancelling its toCompletableFuture() copy does not stop it.
		CompletableFuture<LockResult<String>> result = this.template.async()
			.execute(LockRequest.of(this.key), (handle) -> {
				granted.set(handle);
				return work.minimalCompletionStage();
			});
		await().atMost(WAIT).until(() -> granted.get() != null);

		zooKeeper.expireSession(this.client);
		assertThat(((AsyncLockHandle) granted.get()).whenLost().toCompletableFuture()).succeedsWithin(NOTICED);
		assertThat(result).isNotDone();
		work.complete("late");

		assertThat(result).failsWithin(WAIT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOfSatisfying(LockLostException.class, (ex) -> assertThat(ex.getMessage())
				.contains(ROOT + this.key, "while the asynchronous work was running", "ended after the loss without being cancelled"));
		assertOtherApplicationCanAcquire(LockMode.EXCLUSIVE);
	}

	@Test
	void lostAsyncAcquiredGrantCompletesWhenLostWithInterruptOnLost() throws Exception {
		this.registry.setInterruptOnLost(true);
		AsyncLockHandle handle = this.template.async().acquire(LockRequest.of(this.key)).get(10, TimeUnit.SECONDS);

		zooKeeper.expireSession(this.client);

		assertThat(handle.whenLost().toCompletableFuture()).succeedsWithin(NOTICED);
		assertThat(handle.state()).isEqualTo(LockState.LOST);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(handle::checkHeld);
		assertToldLost();
		// The holder still releases it; the znode died with the session.
		handle.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertOtherApplicationCanAcquire(LockMode.EXCLUSIVE);
	}

	@ParameterizedTest
	@EnumSource(value = LockMode.class)
	void withoutInterruptOnLostTheGrantReportsLostAndTheWorkGoesOn(LockMode mode) throws Exception {
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicReference<LockHandle> granted = new AtomicReference<>();
		CompletableFuture<String> result = this.template.executeAsync(this.key, mode, WAIT, (handle) -> {
			granted.set(handle);
			return work;
		});
		await().atMost(WAIT).until(() -> granted.get() != null);
		AsyncLockHandle handle = (AsyncLockHandle) granted.get();

		zooKeeper.expireSession(this.client);

		await().atMost(NOTICED).until(() -> handle.state() == LockState.LOST);
		assertThat(handle.isHeld()).isFalse();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(handle::checkHeld);
		assertToldLost();
		assertThat(handle.whenLost().toCompletableFuture()).isNotDone();
		assertThat(work).isNotDone();
		assertThat(result).isNotDone();

		work.complete("late");
		assertThat(result).succeedsWithin(WAIT).isEqualTo("late");
		assertThat(handle.whenLost().toCompletableFuture()).isNotDone();
		assertThat(admin(this.registry).heldLockCount()).isZero();
		assertOtherApplicationCanAcquire(mode);
	}

	private void assertToldLost() {
		await().atMost(WAIT)
			.untilAsserted(() -> assertThat(this.events)
				.anySatisfy((event) -> assertThat(event.state()).isEqualTo(LockState.LOST)));
		assertThat(this.events).filteredOn((event) -> event.state() == LockState.LOST)
			.extracting(LockStateEvent::path)
			.containsOnly(ROOT + this.key);
	}

	private void assertOtherApplicationCanAcquire(LockMode mode) {
		LockTarget request = new LockTarget(this.key, (mode == LockMode.READ) ? LockMode.WRITE : mode, true, 0, WAIT);
		Optional<RegistryGrant> next = this.otherRegistry.tryAcquire(request);
		assertThat(next).isPresent();
		next.get().release();
	}

}
