package io.github.zklock.aop;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ReflectionUtils;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.expression.LockPathExpressionEvaluator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How {@link LockOperationSource} reads and validates {@code @DistributedLock} declarations:
 * wait-time constants and units, composed and interface annotations, and the declarations it
 * rejects, also at the start of a plain Spring context. No ZooKeeper involved: this is the
 * declaration side only.
 */
class LockOperationSourceTests {

	private final LockOperationSource source = new LockOperationSource(new LockPathExpressionEvaluator(null));

	@Test
	void unannotatedMethodHasNoOperation() {
		assertThat(operation(Declarations.class, "plain")).isNull();
	}

	@Test
	void waitTimeConstantsAndUnitsAreConverted() {
		assertThat(operation(Declarations.class, "defaultWait").waitTime()).isNull();
		assertThat(operation(Declarations.class, "forever").waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(operation(Declarations.class, "noWait").waitTime()).isEqualTo(Duration.ZERO);
		assertThat(operation(Declarations.class, "twoSeconds").waitTime()).isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void waitForeverIsTheTemplatesWaitForeverInAnyTimeUnit() {
		assertThat(DistributedLock.WAIT_FOREVER).isEqualTo(-1).isEqualTo(LockRequest.WAIT_FOREVER.toMillis());
		assertThat(operation(Declarations.class, "foreverInSeconds").waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(operation(Declarations.class, "foreverInNanoseconds").waitTime())
			.isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(operation(Declarations.class, "foreverInDays").waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void zeroAndPositiveWaitTimesKeepTheirUnit() {
		assertThat(operation(Declarations.class, "noWaitInHours").waitTime()).isEqualTo(Duration.ZERO);
		assertThat(operation(Declarations.class, "threeMinutes").waitTime()).isEqualTo(Duration.ofMinutes(3));
		assertThat(operation(Declarations.class, "fiftyMicroseconds").waitTime()).isEqualTo(Duration.ofNanos(50_000));
	}

	@Test
	void defaultWaitTimeWrittenOutIsTheDefault() {
		assertThat(operation(Declarations.class, "explicitDefault").waitTime()).isNull();
	}

	@Test
	void operationIsBuiltOncePerMethod() {
		assertThat(operation(Declarations.class, "twoSeconds")).isSameAs(operation(Declarations.class, "twoSeconds"));
	}

	@Test
	void composedAnnotationAndInterfaceDeclarationsAreFound() {
		LockOperation composed = operation(Declarations.class, "composed");
		assertThat(composed.mode()).isEqualTo(LockMode.WRITE);
		assertThat(composed.path().getSource()).isEqualTo("/composed");

		Method interfaceMethod = ReflectionUtils.findMethod(Api.class, "call", String.class);
		LockOperation fromInterface = this.source.getOperation(interfaceMethod, ApiImpl.class);
		assertThat(fromInterface).isNotNull();
		assertThat(fromInterface.path().getSource()).isEqualTo("/api/#{#id}");
	}

	@Test
	void asynchronousReturnTypeIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "async"))
			.withMessageContaining("Invalid.async")
			.withMessageContaining("CompletableFuture");
	}

	@Test
	void flowPublisherReturnTypeIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "publisher"))
			.withMessageContaining("Invalid.publisher")
			.withMessageContaining("SubmissionPublisher");
	}

	@Test
	void nonReentrantReadIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "nonReentrantRead"))
			.withMessageContaining("Invalid.nonReentrantRead")
			.withMessageContaining("reentrant = false");
	}

	@Test
	void negativeWaitTimeOtherThanTheConstantsIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "negativeWait"))
			.withMessageContaining("Invalid.negativeWait")
			.withMessageContaining("waitTime -5");
	}

	@Test
	void formerWaitForeverValueIsRejected() {
		// -2 meant "wait forever" before WAIT_FOREVER became -1: it must not silently mean anything.
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "formerWaitForever"))
			.withMessageContaining("Invalid.formerWaitForever")
			.withMessageContaining("waitTime -2")
			.withMessageContaining("WAIT_FOREVER (-1)");
	}

	@ParameterizedTest
	@ValueSource(classes = { MinusTwo.class, MinusFive.class })
	void negativeWaitTimeFailsTheStartNamingTheMethod(Class<?> service) {
		long waitTime = ReflectionUtils.findMethod(service, "work").getAnnotation(DistributedLock.class).waitTime();
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(Advice.class);
			context.registerBean(service);
			assertThatExceptionOfType(BeanCreationException.class).isThrownBy(context::refresh)
				.havingRootCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessageContaining(service.getSimpleName() + ".work")
				.withMessageContaining("waitTime " + waitTime);
		}
	}

	@Test
	void malformedTemplateNamesTheMethod() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> operation(Invalid.class, "malformed"))
			.withMessageContaining("Invalid.malformed");
	}

	@Test
	void samePathWithKindsThatDoNotExcludeEachOtherIsRejected() {
		assertThat(operation(Conflicting.class, "exclusive")).isNotNull();
		assertThatIllegalStateException().isThrownBy(() -> operation(Conflicting.class, "write"))
			.withMessageContaining("Conflicting.write")
			.withMessageContaining("Conflicting.exclusive")
			.withMessageContaining("do not exclude each other");
		assertThatIllegalStateException().isThrownBy(() -> operation(Conflicting.class, "nonReentrant"));
		// Same kind on the same path is the normal case.
		assertThat(operation(Conflicting.class, "exclusiveToo")).isNotNull();
	}

	private LockOperation operation(Class<?> type, String name) {
		Method method = ReflectionUtils.findMethod(type, name, (Class<?>[]) null);
		assertThat(method).as(name).isNotNull();
		return this.source.getOperation(method, type);
	}

	@Retention(RetentionPolicy.RUNTIME)
	@DistributedLock(path = "/composed", mode = LockMode.WRITE)
	@interface ComposedWriteLock {

	}

	static class Declarations {

		void plain() {
		}

		@DistributedLock(path = "/a")
		void defaultWait() {
		}

		@DistributedLock(path = "/a", waitTime = DistributedLock.WAIT_FOREVER)
		void forever() {
		}

		@DistributedLock(path = "/a", waitTime = 0)
		void noWait() {
		}

		@DistributedLock(path = "/a", waitTime = 2, timeUnit = TimeUnit.SECONDS)
		void twoSeconds() {
		}

		@DistributedLock(path = "/a", waitTime = DistributedLock.WAIT_FOREVER, timeUnit = TimeUnit.SECONDS)
		void foreverInSeconds() {
		}

		@DistributedLock(path = "/a", waitTime = DistributedLock.WAIT_FOREVER, timeUnit = TimeUnit.NANOSECONDS)
		void foreverInNanoseconds() {
		}

		@DistributedLock(path = "/a", waitTime = -1, timeUnit = TimeUnit.DAYS)
		void foreverInDays() {
		}

		@DistributedLock(path = "/a", waitTime = 0, timeUnit = TimeUnit.HOURS)
		void noWaitInHours() {
		}

		@DistributedLock(path = "/a", waitTime = 3, timeUnit = TimeUnit.MINUTES)
		void threeMinutes() {
		}

		@DistributedLock(path = "/a", waitTime = 50, timeUnit = TimeUnit.MICROSECONDS)
		void fiftyMicroseconds() {
		}

		@DistributedLock(path = "/a", waitTime = DistributedLock.DEFAULT_WAIT_TIME, timeUnit = TimeUnit.SECONDS)
		void explicitDefault() {
		}

		@ComposedWriteLock
		void composed() {
		}

	}

	interface Api {

		@DistributedLock(path = "/api/#{#id}")
		String call(String id);

	}

	static class ApiImpl implements Api {

		@Override
		public String call(String id) {
			return id;
		}

	}

	static class Invalid {

		@DistributedLock(path = "/async")
		CompletableFuture<String> async() {
			return CompletableFuture.completedFuture("x");
		}

		@DistributedLock(path = "/publisher")
		java.util.concurrent.SubmissionPublisher<String> publisher() {
			return new java.util.concurrent.SubmissionPublisher<>();
		}

		@DistributedLock(path = "/read", mode = LockMode.READ, reentrant = false)
		void nonReentrantRead() {
		}

		@DistributedLock(path = "/negative", waitTime = -5)
		void negativeWait() {
		}

		@DistributedLock(path = "/negative", waitTime = -2)
		void formerWaitForever() {
		}

		@DistributedLock(path = "/stock/#{#sku")
		void malformed(String sku) {
		}

	}

	static class Conflicting {

		@DistributedLock(path = "/shared/#{#p0}")
		void exclusive(String key) {
		}

		@DistributedLock(path = "/shared/#{#p0}", mode = LockMode.WRITE)
		void write(String key) {
		}

		@DistributedLock(path = "/shared/#{#p0}", reentrant = false)
		void nonReentrant(String key) {
		}

		@DistributedLock(path = "/shared/#{#p0}", waitTime = 0)
		void exclusiveToo(String key) {
		}

	}

	/** The advice without a template: enough to validate declarations at start-up. */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Advice {

	}

	static class MinusTwo {

		@DistributedLock(path = "/minus-two", waitTime = -2, timeUnit = TimeUnit.SECONDS)
		public void work() {
		}

	}

	static class MinusFive {

		@DistributedLock(path = "/minus-five", waitTime = -5)
		public void work() {
		}

	}

}
