package io.github.zklock.aop;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @DistributedLock(onBusy = SKIP)}, one key and several, through the advisor of
 * {@code @EnableDistributedLocks} in a plain Spring context on a real ZooKeeper: a lock busy
 * elsewhere for the whole wait time returns {@code null}, {@code Optional.empty()} or nothing
 * without invoking the method, leaves no key held (the free keys of a multi-lock are free at
 * once) and is observed as {@code skipped}; a free lock runs the method; {@code FAIL} stays the
 * default.
 */
class OnBusySkipTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static AnnotationConfigApplicationContext application;

	private CuratorLockRegistry otherProcess;

	@BeforeAll
	static void start() throws InterruptedException {
		application = LockApplications.start(zooKeeper, (context) -> {
		}, Jobs.class);
	}

	@AfterAll
	static void stop() {
		application.close();
	}

	@BeforeEach
	void connectOtherProcess() throws InterruptedException {
		this.otherProcess = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		jobs().resetInvocations();
	}

	@AfterEach
	void closeOtherProcess() {
		this.otherProcess.close();
	}

	@Test
	void busyLockSkipsTheMethodWithNullEmptyOrNothing() {
		Jobs jobs = jobs();
		LockHandle held = otherProcessTakes("/job/single");
		try {
			assertThat(jobs.run("single")).isNull();
			assertThat(jobs.runOptional("single")).isEmpty();
			jobs.runVoid("single");
			assertThat(jobs.invocations()).isZero();
			assertNothingHeld();
		}
		finally {
			held.release();
		}
		assertThat(jobs.run("single")).isEqualTo("ran single");
		assertThat(jobs.runOptional("single")).contains("ran single");
		jobs.runVoid("single");
		assertThat(jobs.invocations()).isEqualTo(3);
	}

	@Test
	void skipComesAfterTheWholeWaitTime() {
		Jobs jobs = jobs();
		LockHandle held = otherProcessTakes("/job/patient");
		try {
			long started = System.nanoTime();
			assertThat(jobs.runAfterWaiting("patient")).isNull();
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
			assertThat(jobs.invocations()).isZero();
		}
		finally {
			held.release();
		}
	}

	@Test
	void busyKeyOfAMultiLockSkipsTheMethodAndLeavesTheOtherKeyFree() {
		Jobs jobs = jobs();
		// multi-a sorts first: it is granted, then multi-b is not, so multi-a must be given back.
		LockHandle held = otherProcessTakes("/job/multi-b");
		try {
			assertThat(jobs.runBoth("multi-a", "multi-b")).isNull();
			assertThat(jobs.runBothOptional("multi-a", "multi-b")).isEmpty();
			jobs.runBothVoid("multi-a", "multi-b");
			assertThat(jobs.invocations()).isZero();
			assertNothingHeld();
			otherProcessTakes("/job/multi-a").release();
		}
		finally {
			held.release();
		}
		assertThat(jobs.runBoth("multi-a", "multi-b")).isEqualTo("ran multi-a and multi-b");
		assertThat(jobs.runBothOptional("multi-b", "multi-a")).contains("ran multi-b and multi-a");
		jobs.runBothVoid("multi-a", "multi-b");
		assertThat(jobs.invocations()).isEqualTo(3);
	}

	@Test
	void skippedCallIsObservedAsSkipped() {
		Jobs jobs = jobs();
		AcquireObservations observations = AcquireObservations.observe(application);
		LockHandle held = otherProcessTakes("/job/observed");
		try {
			jobs.run("observed");
		}
		finally {
			held.release();
		}
		jobs.run("observed");
		assertThat(observations.recorded()).containsExactly("/job/#{#name} skipped", "/job/#{#name} acquired");
	}

	@Test
	void failIsTheDefault() {
		Jobs jobs = jobs();
		LockHandle held = otherProcessTakes("/job/failing");
		try {
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> jobs.runOrFail("failing"));
			assertThat(jobs.invocations()).isZero();
		}
		finally {
			held.release();
		}
	}

	private static Jobs jobs() {
		return application.getBean(Jobs.class);
	}

	private void assertNothingHeld() {
		assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
		assertThat(LockContext.current()).isEmpty();
	}

	/** Take a lock in the other application at once, failing the test if it is busy. */
	private LockHandle otherProcessTakes(String key) {
		return this.otherProcess.tryAcquire(new LockTarget(key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO))
			.orElseThrow();
	}

	static class Jobs {

		final AtomicInteger invocations = new AtomicInteger();

		@DistributedLock(path = "/job/#{#name}", waitTime = "0", onBusy = OnBusy.SKIP)
		public String run(String name) {
			this.invocations.incrementAndGet();
			return "ran " + name;
		}

		@DistributedLock(path = "/job/#{#name}", waitTime = "0", onBusy = OnBusy.SKIP)
		public Optional<String> runOptional(String name) {
			this.invocations.incrementAndGet();
			return Optional.of("ran " + name);
		}

		@DistributedLock(path = "/job/#{#name}", waitTime = "0", onBusy = OnBusy.SKIP)
		public void runVoid(String name) {
			this.invocations.incrementAndGet();
		}

		@DistributedLock(path = "/job/#{#name}", waitTime = "300", onBusy = OnBusy.SKIP)
		public Integer runAfterWaiting(String name) {
			return this.invocations.incrementAndGet();
		}

		@DistributedLock(path = "/job/#{#name}", waitTime = "0")
		public void runOrFail(String name) {
			this.invocations.incrementAndGet();
		}

		@DistributedLock(path = { "/job/#{#first}", "/job/#{#second}" }, waitTime = "0", onBusy = OnBusy.SKIP)
		public String runBoth(String first, String second) {
			this.invocations.incrementAndGet();
			return "ran " + first + " and " + second;
		}

		@DistributedLock(path = { "/job/#{#first}", "/job/#{#second}" }, waitTime = "0", onBusy = OnBusy.SKIP)
		public Optional<String> runBothOptional(String first, String second) {
			this.invocations.incrementAndGet();
			return Optional.of("ran " + first + " and " + second);
		}

		@DistributedLock(path = { "/job/#{#first}", "/job/#{#second}" }, waitTime = "0", onBusy = OnBusy.SKIP)
		public void runBothVoid(String first, String second) {
			this.invocations.incrementAndGet();
		}

		// Accessors, not the field: the bean is a CGLIB proxy whose own fields stay empty.
		public int invocations() {
			return this.invocations.get();
		}

		public void resetInvocations() {
			this.invocations.set(0);
		}

	}

}
