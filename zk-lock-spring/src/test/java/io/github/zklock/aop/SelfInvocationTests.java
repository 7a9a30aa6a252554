package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import io.github.zklock.LockAssert;
import io.github.zklock.LockContext;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for self-invocation: a {@code @DistributedLock} method called on {@code this} from its own
 * class runs without the lock (the proxy is bypassed), {@link LockAssert#assertHeld()} in it
 * catches that at run time, and the application start logs a warning naming each such call found
 * in the bytecode (calls from subclasses and lambdas included, recursion and calls through the
 * bean left out).
 */
class SelfInvocationTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ListAppender<ILoggingEvent> log = new ListAppender<>();

	private Logger validatorLogger;

	@BeforeEach
	void captureWarnings() {
		this.validatorLogger = (Logger) LoggerFactory.getLogger(DistributedLockMethodValidator.class);
		this.log.start();
		this.validatorLogger.addAppender(this.log);
	}

	@AfterEach
	void stopCapturing() {
		this.validatorLogger.detachAppender(this.log);
	}

	@Test
	void selfInvokedMethodRunsWithoutTheLockAndLockAssertCatchesIt() throws Exception {
		try (AnnotationConfigApplicationContext context = LockApplications.start(zooKeeper, (beans) -> {
		}, Stock.class)) {
			Stock stock = context.getBean(Stock.class);
			assertThat(stock.take("apple")).as("through the proxy").isTrue();
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> stock.takeTwice("apple"))
				.withMessageContaining("bypasses the proxy");
			assertThat(stock.lockedWhenSelfInvoked("apple")).as("LockContext seen by a self-invoked method").isFalse();
		}
	}

	@Test
	void startLogsAWarningPerSelfInvocation() throws Exception {
		try (AnnotationConfigApplicationContext context = LockApplications.start(zooKeeper, (beans) -> {
		}, Stock.class, Caller.class)) {
			List<String> warnings = this.log.list.stream()
				.filter((event) -> event.getLevel() == Level.WARN)
				.map(ILoggingEvent::getFormattedMessage)
				.toList();
			assertThat(warnings).anySatisfy((warning) -> assertThat(warning)
				.startsWith("Self-invocation: Stock.takeTwice(String) calls Stock.take(String)"));
			assertThat(warnings).anySatisfy((warning) -> assertThat(warning)
				.startsWith("Self-invocation: Stock.lockedWhenSelfInvoked(String) calls Stock.check(String)"));
			assertThat(warnings).as("one warning per call, none for the bean calling another bean")
				.hasSize(2)
				.noneMatch((warning) -> warning.contains("Caller."));
		}
	}

	@Test
	void findsCallsFromSuperclassesAndLambdasButNotRecursion() {
		List<Method> advised = List.of(method(Base.class, "locked"), method(Base.class, "recursive"),
				method(Derived.class, "permit"));
		assertThat(SelfInvocations.find(Derived.class, advised)).containsExactlyInAnyOrder(
				"Base.fromBase() calls Base.locked(int)", "Derived.fromLambda (a lambda in it) calls Derived.permit()");
	}

	@Test
	void findsNothingInAClassThatOnlyCallsOtherBeans() {
		assertThat(SelfInvocations.find(Caller.class, List.of(method(Caller.class, "order")))).isEmpty();
	}

	private static Method method(Class<?> type, String name) {
		return Arrays.stream(type.getDeclaredMethods())
			.filter((candidate) -> candidate.getName().equals(name))
			.findFirst()
			.orElseThrow();
	}

	static class Stock {

		@DistributedLock(path = "/self/#{#sku}")
		public boolean take(String sku) {
			LockAssert.assertHeld();
			return true;
		}

		public boolean takeTwice(String sku) {
			return take(sku) && take(sku);
		}

		@DistributedLock(path = "/self/check/#{#sku}")
		public boolean check(String sku) {
			return LockContext.current().isPresent();
		}

		public boolean lockedWhenSelfInvoked(String sku) {
			return check(sku);
		}

	}

	static class Caller {

		private final Stock stock;

		Caller(Stock stock) {
			this.stock = stock;
		}

		@DistributedLock(path = "/self/order")
		public boolean order() {
			return this.stock.take("pear");
		}

	}

	static class Base {

		@DistributedLock(path = "/self/base")
		public int locked(int n) {
			return n;
		}

		@DistributedLock(path = "/self/recursive")
		public int recursive(int n) {
			return (n <= 0) ? 0 : recursive(n - 1);
		}

		public int fromBase() {
			return locked(1);
		}

	}

	static class Derived extends Base {

		@DistributedSemaphore(path = "/self/permit", permits = 2)
		public int permit() {
			return 2;
		}

		public Runnable fromLambda() {
			return () -> permit();
		}

	}

}
