package io.github.zklock;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LockTemplate} on a real {@link CuratorLockRegistry} and ZooKeeper server, without
 * Spring: which wait time reaches the registry, release and exception handling around the callback,
 * {@link LockContext}, the failure of a busy {@code acquire}, and the {@code zk.lock.acquire} /
 * {@code zk.lock.held} observations. A second registry on its own client stands for another
 * process holding the lock; the template's registry is wrapped to record the requests it is given.
 */
class LockTemplateTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration DEFAULT_WAIT_TIME = Duration.ofSeconds(10);

	private static final Duration SHORT = Duration.ofMillis(200);

	/** The class of the registry's own grants. */
	private static final String REGISTRY_GRANT = "io.github.zklock.curator.CuratorLockHandle";

	private static final String TEMPLATE_GRANT = "io.github.zklock.engine.Grant";

	private CuratorLockRegistry registry;

	private RecordingRegistry recording;

	private CuratorLockRegistry otherProcess;

	private LockTemplate template;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.registry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.recording = new RecordingRegistry(this.registry);
		this.otherProcess = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100);
		this.template = new LockTemplate(this.recording, DEFAULT_WAIT_TIME);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.registry.close();
		this.otherProcess.close();
	}

	@Test
	void exposesItsRegistryAndDefaultWaitTime() {
		assertThat(this.template.getRegistry()).isSameAs(this.recording);
		assertThat(this.template.getDefaultWaitTime()).isEqualTo(DEFAULT_WAIT_TIME);
	}

	@Test
	void defaultWaitTimeIsUsedWhenTheRequestGivesNone() {
		LockTemplate shortWait = new LockTemplate(this.recording, SHORT);
		LockHandle held = holdInOtherProcess();

		long started = System.nanoTime();
		assertThat(shortWait.tryAcquire(this.key, LockMode.EXCLUSIVE, null)).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(SHORT);
		assertThat(this.recording.last().waitTime()).isEqualTo(SHORT);

		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> shortWait.acquire(LockRequest.of(this.key)))
			.satisfies((ex) -> assertThat(ex.getWaitTime()).isEqualTo(SHORT));
		AtomicBoolean ran = new AtomicBoolean();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> shortWait.execute(this.key, (handle) -> ran.getAndSet(true)));
		assertThat(ran).as("callback ran").isFalse();
		assertThat(this.recording.requests).extracting(LockTarget::waitTime).containsOnly(SHORT);
		held.release();
	}

	@Test
	void zeroAndPositiveWaitTimesAreUsedAsGiven() {
		LockHandle held = holdInOtherProcess();

		long started = System.nanoTime();
		assertThat(this.template.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
		assertThat(this.recording.last().waitTime()).isZero();

		started = System.nanoTime();
		assertThat(this.template.tryAcquire(LockRequest.of(this.key).withWaitTime(SHORT))).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(SHORT)
			.isLessThan(Duration.ofSeconds(5));
		assertThat(this.recording.last().waitTime()).isEqualTo(SHORT);
		held.release();
	}

	@Test
	void waitForeverIsUsedAsGivenAndOutlastsTheDefault() throws Exception {
		LockTemplate shortDefault = new LockTemplate(this.recording, SHORT);
		LockHandle held = holdInOtherProcess();
		CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(
				() -> shortDefault.execute(this.key, LockMode.EXCLUSIVE, LockRequest.WAIT_FOREVER, (handle) -> true),
				(task) -> new Thread(task).start());
		// Still waiting at several times the default wait time.
		await().during(SHORT.multipliedBy(3)).atMost(Duration.ofSeconds(5)).until(() -> !waiter.isDone());

		held.release();
		assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.recording.last().waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void defaultWaitForeverIsUsedWhenTheRequestGivesNone() {
		LockTemplate waitForever = new LockTemplate(this.recording, LockRequest.WAIT_FOREVER);
		assertThat(waitForever.getDefaultWaitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
		String result = waitForever.execute(this.key, (handle) -> "done");
		assertThat(result).isEqualTo("done");
		assertThat(this.recording.last().waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void negativeDefaultWaitTimeIsRejected() {
		for (Duration negative : List.of(Duration.ofMillis(-5), Duration.ofMillis(-2), Duration.ofNanos(-1))) {
			assertThatIllegalArgumentException().as("%s", negative)
				.isThrownBy(() -> new LockTemplate(this.registry, negative))
				.withMessageContaining("default wait time")
				.withMessageContaining(negative.toString());
		}
		assertThat(new LockTemplate(this.registry, Duration.ZERO).getDefaultWaitTime()).isZero();
		assertThatNullPointerException().isThrownBy(() -> new LockTemplate(this.registry, null));
		assertThatNullPointerException().isThrownBy(() -> new LockTemplate(null, DEFAULT_WAIT_TIME));
	}

	@Test
	void executeReleasesAfterTheCallbackAndReturnsItsResult() {
		AtomicReference<LockHandle> seen = new AtomicReference<>();
		Integer result = this.template.execute(this.key, (handle) -> {
			seen.set(handle);
			assertThat(handle.isHeld()).isTrue();
			assertThat(handle.path()).isEqualTo("/locks" + this.key);
			return 42;
		});
		assertThat(result).isEqualTo(42);
		assertReleased(seen.get());
	}

	@Test
	void executePropagatesUncheckedExceptionsAndErrorsUnchangedAndReleases() {
		AtomicReference<LockHandle> seen = new AtomicReference<>();
		IllegalStateException failure = new IllegalStateException("business failure");
		assertThatThrownBy(() -> this.template.execute(this.key, LockMode.WRITE, Duration.ZERO, (handle) -> {
			seen.set(handle);
			throw failure;
		})).isSameAs(failure);
		assertReleased(seen.get());

		Error error = new Error("simulated error");
		assertThatThrownBy(() -> this.template.execute(this.key, (handle) -> {
			seen.set(handle);
			throw error;
		})).isSameAs(error);
		assertReleased(seen.get());
	}

	@Test
	void executeWrapsCheckedExceptionsAndReleases() {
		AtomicReference<LockHandle> seen = new AtomicReference<>();
		IOException failure = new IOException("checked failure");
		assertThatExceptionOfType(UndeclaredThrowableException.class)
			.isThrownBy(() -> this.template.execute(this.key, (handle) -> {
				seen.set(handle);
				throw failure;
			}))
			.satisfies((ex) -> assertThat(ex.getUndeclaredThrowable()).isSameAs(failure))
			.withCause(failure);
		assertReleased(seen.get());
	}

	@Test
	void lockContextGivesTheGrantsOfTheRunningCallbacks() {
		assertNoLockContext();
		String outerResult = this.template.execute(this.key, (outer) -> {
			assertThat(LockContext.current()).containsSame(outer);
			assertThat(LockContext.require()).isSameAs(outer);
			assertThat(LockContext.held()).containsExactly(outer);
			String inner = this.template.execute(this.key + "/inner", LockMode.READ, Duration.ZERO, (nested) -> {
				assertThat(LockContext.current()).containsSame(nested);
				assertThat(LockContext.held()).containsExactly(outer, nested);
				// Re-entering the outer key nests a third grant.
				return this.template.execute(this.key, (reentered) -> {
					assertThat(LockContext.require()).isSameAs(reentered);
					assertThat(LockContext.held()).containsExactly(outer, nested, reentered);
					return "inner";
				});
			});
			assertThat(LockContext.current()).containsSame(outer);
			assertThat(LockContext.held()).containsExactly(outer);
			return inner;
		});
		assertThat(outerResult).isEqualTo("inner");
		assertNoLockContext();
	}

	@Test
	void lockContextIsEmptyAgainAfterAFailedCallback() {
		assertThatIllegalStateException().isThrownBy(() -> this.template.execute(this.key, (handle) -> {
			assertThat(LockContext.held()).containsExactly(handle);
			throw new IllegalStateException("failed");
		}));
		assertNoLockContext();
	}

	@Test
	void acquiredGrantsAreNotInTheLockContext() {
		LockHandle handle = this.template.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(handle.isHeld()).isTrue();
		assertNoLockContext();
		handle.release();
		assertReleased(handle);
	}

	@Test
	void tryAcquireGrantsUntilReleasedAndIsEmptyWhenBusy() {
		LockHandle handle = this.template.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO).orElseThrow();
		assertThat(this.otherProcess.tryAcquire(new LockTarget(this.key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO)))
			.isEmpty();
		handle.release();
		assertReleased(handle);

		LockHandle held = holdInOtherProcess();
		assertThat(this.template.tryAcquire(LockRequest.of(this.key).withWaitTime(Duration.ZERO))).isEmpty();
		held.release();
	}

	@Test
	void acquireFailsNamingTheZnodePathWhenBusy() {
		LockHandle held = holdInOtherProcess(LockMode.WRITE);
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.acquire(this.key, LockMode.WRITE, Duration.ZERO))
			.withMessageContaining("'/locks" + this.key + "'")
			.satisfies((ex) -> {
				assertThat(ex.getPath()).isEqualTo("/locks" + this.key);
				assertThat(ex.getMode()).isEqualTo(LockMode.WRITE);
				assertThat(ex.getWaitTime()).isZero();
			});
		held.release();
	}

	@Test
	void observesAGrantedAcquisitionAndTheHoldUntilRelease() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockRequest request = LockRequest.of(this.key).withMode(LockMode.WRITE).withWaitTime(Duration.ZERO).withName("/stock/{sku}");
		this.template.execute(request, (handle) -> {
			// The hold is the current observation while the callback runs.
			Observation current = observations.getCurrentObservation();
			assertThat(current).isNotNull();
			assertThat(current.getContext().getName()).isEqualTo("zk.lock.held");
			assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held").that().isNotStopped();
			return null;
		});
		assertThat(observations).hasNumberOfObservationsEqualTo(2)
			.hasObservationWithNameEqualTo("zk.lock.acquire")
			.that()
			.hasBeenStarted()
			.hasBeenStopped()
			.doesNotHaveError()
			.hasLowCardinalityKeyValue("outcome", "acquired")
			.hasLowCardinalityKeyValue("name", "/stock/{sku}")
			.hasLowCardinalityKeyValue("mode", "WRITE")
			.hasHighCardinalityKeyValue("path", this.key);
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held")
			.that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("name", "/stock/{sku}")
			.hasLowCardinalityKeyValue("mode", "WRITE")
			.hasLowCardinalityKeyValue("outcome", "released")
			.hasHighCardinalityKeyValue("path", "/locks" + this.key);
		assertThat(observations.getCurrentObservation()).isNull();
	}

	@Test
	void observesATimeoutWithoutAHold() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockHandle held = holdInOtherProcess();
		assertThat(this.template.tryAcquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO));
		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2)
			.hasNumberOfObservationsWithNameEqualTo("zk.lock.held", 0)
			.forAllObservationsWithNameEqualTo("zk.lock.acquire",
					(observation) -> observation.doesNotHaveError()
						.hasLowCardinalityKeyValue("outcome", "timeout")
						.hasLowCardinalityKeyValue("name", this.key)
						.hasLowCardinalityKeyValue("mode", "EXCLUSIVE"));
		held.release();
	}

	@Test
	void observesAFailedAcquisitionAsAnError() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> this.template.tryAcquire("no-slash", LockMode.READ, Duration.ZERO));
		assertThat(observations).hasNumberOfObservationsEqualTo(1)
			.hasObservationWithNameEqualTo("zk.lock.acquire")
			.that()
			.hasBeenStopped()
			.hasError()
			.hasLowCardinalityKeyValue("outcome", "error")
			.hasLowCardinalityKeyValue("mode", "READ")
			.assertThatError()
			.isInstanceOf(InvalidLockPathException.class);
	}

	@Test
	void holdObservationStopsOnTheFirstReleaseOnly() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockHandle handle = this.template.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held").that().hasBeenStarted().isNotStopped();
		assertThat(handle.path()).isEqualTo("/locks" + this.key);
		assertThat(handle.fencingToken()).isPositive();

		handle.release();
		assertThat(observations).hasObservationWithNameEqualTo("zk.lock.held").that().hasBeenStopped();
		// The registry rejects an observation stopped twice: a second release must not stop it again.
		handle.release();
		handle.close();
		assertReleased(handle);
		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.held", 1);
	}

	@Test
	void everyGrantIsOneHandleOverTheRegistrysGrantWhateverTheOptions() {
		LockHandle handle = this.template.acquire(this.key, LockMode.EXCLUSIVE, Duration.ZERO);
		assertThat(handle.getClass().getName()).isEqualTo(TEMPLATE_GRANT);
		assertThat(admin(this.registry).heldLocks()).singleElement()
			.satisfies((held) -> assertThat(held.getClass().getName()).isEqualTo(REGISTRY_GRANT));
		handle.release();

		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockHandle observed = this.template.acquire(LockRequest.of(this.key)
			.withWaitTime(Duration.ZERO)
			.withLockAtLeastFor(Duration.ofMillis(1)));
		// Observed and kept: still one handle, the options being its fields.
		assertThat(observed.getClass().getName()).isEqualTo(TEMPLATE_GRANT);
		observed.release();
		await().atMost(Duration.ofSeconds(10)).until(() -> admin(this.registry).heldLockCount() == 0);
	}

	@Test
	void executeSkipsABusyLockWhenTheRequestSaysSoAndTellsTheSkipFromANullResult() {
		LockRequest request = LockRequest.of(this.key).withWaitTime(Duration.ZERO).withOnBusy(OnBusy.SKIP);
		LockResult<String> ran = this.template.execute(request, (handle) -> null);
		assertThat(ran.wasExecuted()).isTrue();
		assertThat(ran.result()).isNull();
		assertThat(ran.orElse("busy")).isNull();

		LockHandle held = holdInOtherProcess();
		AtomicBoolean called = new AtomicBoolean();
		LockResult<String> skipped = this.template.execute(request, (handle) -> {
			called.set(true);
			return "ran";
		});
		assertThat(skipped).isEqualTo(LockResult.skipped());
		assertThat(skipped.wasExecuted()).isFalse();
		assertThat(skipped.orElse("busy")).isEqualTo("busy");
		assertThat(skipped.orElseGet(() -> "supplied")).isEqualTo("supplied");
		assertThatIllegalStateException().isThrownBy(skipped::result).withMessageContaining("skipped");
		assertThat(called).as("callback ran").isFalse();
		assertNoLockContext();

		// Failing when busy (the default) throws instead, naming the busy lock.
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.template.execute(request.withOnBusy(OnBusy.FAIL), (handle) -> "ran"))
			.withMessageContaining("'/locks" + this.key + "'");
		// acquire and tryAcquire do not skip: an exception, and an empty result.
		assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> this.template.acquire(request));
		assertThat(this.template.tryAcquire(request)).isEmpty();
		held.release();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	@Test
	void observesABusySkipAsSkipped() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.template = observed(observations);
		LockHandle held = holdInOtherProcess();
		LockRequest skip = LockRequest.of(this.key).withWaitTime(Duration.ZERO).withOnBusy(OnBusy.SKIP).withName("/job");
		assertThat(this.template.execute(skip, (handle) -> 1).wasExecuted()).isFalse();
		// The request's policy is what is observed, whatever the verb.
		assertThat(this.template.tryAcquire(skip)).isEmpty();
		assertThat(observations).hasNumberOfObservationsWithNameEqualTo("zk.lock.acquire", 2)
			.hasNumberOfObservationsWithNameEqualTo("zk.lock.held", 0)
			.forAllObservationsWithNameEqualTo("zk.lock.acquire",
					(observation) -> observation.doesNotHaveError()
						.hasLowCardinalityKeyValue("outcome", "skipped")
						.hasLowCardinalityKeyValue("name", "/job"));
		held.release();
	}

	@Test
	void builderSetsTheDefaultWaitTimeAndRejectsABadOne() {
		LockTemplate built = LockTemplate.builder(this.recording).defaultWaitTime(SHORT).build();
		assertThat(built.getDefaultWaitTime()).isEqualTo(SHORT);
		assertThat(built.getRegistry()).isSameAs(this.recording);
		assertThat(LockTemplate.builder(this.recording).build().getDefaultWaitTime())
			.as("without one, wait until granted, as Curator's acquire()")
			.isEqualTo(LockRequest.WAIT_FOREVER);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockTemplate.builder(this.recording).defaultWaitTime(Duration.ofMillis(-2)))
			.withMessageContaining("default wait time");
		assertThatNullPointerException().isThrownBy(() -> LockTemplate.builder(null));
	}

	private LockTemplate observed(ObservationRegistry observations) {
		return LockTemplate.builder(this.recording)
			.defaultWaitTime(DEFAULT_WAIT_TIME)
			.observationRegistry(observations)
			.build();
	}

	private LockHandle holdInOtherProcess() {
		return holdInOtherProcess(LockMode.EXCLUSIVE);
	}

	private LockHandle holdInOtherProcess(LockMode mode) {
		return this.otherProcess.tryAcquire(new LockTarget(this.key, mode, true, 0, Duration.ZERO))
			.orElseThrow(() -> new AssertionError("not granted to the other process: " + mode + " " + this.key));
	}

	private void assertReleased(LockHandle handle) {
		assertThat(handle).isNotNull();
		assertThat(handle.state()).isEqualTo(LockState.RELEASED);
		assertThat(admin(this.registry).heldLockCount()).isZero();
		// Free at once for another process asking for a mode the grant excluded.
		holdInOtherProcess((handle.mode() == LockMode.READ) ? LockMode.WRITE : handle.mode()).release();
	}

	private static void assertNoLockContext() {
		assertThat(LockContext.current()).isEmpty();
		assertThat(LockContext.held()).isEmpty();
		assertThatIllegalStateException().isThrownBy(LockContext::require).withMessageContaining("No lock is held");
	}

	/** Passes every target on to a real registry and keeps it, to show which wait time arrived. */
	private static final class RecordingRegistry implements LockRegistry {

		private final LockRegistry delegate;

		private final List<LockTarget> requests = new CopyOnWriteArrayList<>();

		RecordingRegistry(LockRegistry delegate) {
			this.delegate = delegate;
		}

		@Override
		public Optional<RegistryGrant> tryAcquire(LockTarget target) {
			this.requests.add(target);
			return this.delegate.tryAcquire(target);
		}

		@Override
		public String lockPath(String key) {
			return this.delegate.lockPath(key);
		}

		LockTarget last() {
			assertThat(this.requests).isNotEmpty();
			return this.requests.get(this.requests.size() - 1);
		}

	}

}
