package io.github.zklock.aop;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.util.ReflectionUtils;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockRequest;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LockMode;
import io.github.zklock.expression.LockPathExpressionEvaluator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How {@link LockOperationSource} reads and validates {@code @DistributedLock} declarations. No
 * ZooKeeper involved: this is the declaration side only.
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
			.withMessageContaining("waitTime -5");
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

}
