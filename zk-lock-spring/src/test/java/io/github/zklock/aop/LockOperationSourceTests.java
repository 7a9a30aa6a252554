package io.github.zklock.aop;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Publisher;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ReflectionUtils;
import reactor.core.publisher.ConnectableFlux;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.expression.LockPathTemplate;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How {@link LockOperationSource} reads and validates {@code @DistributedLock} and
 * {@code @DistributedSemaphore} declarations: wait-time constants and units, several keys,
 * {@code onBusy}, permits, composed and interface annotations, and the declarations it rejects
 * (naming the method), also at the start of a plain Spring context: among them the asynchronous
 * return types the advice cannot follow (a plain {@code Future}, a {@code CompletableFuture}
 * subclass, publishers other than Reactor's {@code Mono} and {@code Flux}), while exactly
 * {@code CompletionStage}, {@code CompletableFuture}, {@code Mono} and {@code Flux} are accepted. No ZooKeeper involved: this is
 * the declaration side only.
 */
class LockOperationSourceTests {

	private final LockOperationSource source = new LockOperationSource(new LockPathExpressionEvaluator(null));

	@BeforeEach
	void placeholders() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", Map.of("lock.wait", "750ms")));
		this.source.setEmbeddedValueResolver(environment::resolvePlaceholders);
	}

	@Test
	void unannotatedMethodHasNoOperation() {
		assertThat(operation(Declarations.class, "plain")).isNull();
	}

	@Test
	void waitTimeStringsAreParsedInEveryStyle() {
		assertThat(operation(Declarations.class, "defaultWait").prototype().waitTime()).isNull();
		assertThat(operation(Declarations.class, "forever").prototype().waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(operation(Declarations.class, "noWait").prototype().waitTime()).isEqualTo(Duration.ZERO);
		assertThat(operation(Declarations.class, "twoSeconds").prototype().waitTime()).isEqualTo(Duration.ofSeconds(2));
		assertThat(operation(Declarations.class, "isoTwoSeconds").prototype().waitTime()).isEqualTo(Duration.ofSeconds(2));
		assertThat(operation(Declarations.class, "plainMilliseconds").prototype().waitTime())
			.isEqualTo(Duration.ofMillis(500));
		assertThat(operation(Declarations.class, "placeholder").prototype().waitTime()).isEqualTo(Duration.ofMillis(750));
	}

	@Test
	void waitForeverIsTheTemplatesWaitForeverWhateverTheSpelling() {
		assertThat(DistributedLock.WAIT_FOREVER).isEqualTo("-1ms");
		assertThat(operation(Declarations.class, "foreverAsANumber").prototype().waitTime())
			.isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(operation(Declarations.class, "foreverInIso").prototype().waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void zeroAndPositiveWaitTimesKeepTheirUnit() {
		assertThat(operation(Declarations.class, "noWaitInHours").prototype().waitTime()).isEqualTo(Duration.ZERO);
		assertThat(operation(Declarations.class, "threeMinutes").prototype().waitTime()).isEqualTo(Duration.ofMinutes(3));
		assertThat(operation(Declarations.class, "fiftyMicroseconds").prototype().waitTime()).isEqualTo(Duration.ofNanos(50_000));
	}

	@Test
	void defaultWaitTimeWrittenOutIsTheDefault() {
		assertThat(operation(Declarations.class, "explicitDefault").prototype().waitTime()).isNull();
	}

	@Test
	void malformedDurationsAreRejectedNamingTheMethodAndTheAttribute() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "malformedWait"))
			.withMessageContaining("Invalid.malformedWait")
			.withMessageContaining("waitTime 'two seconds'")
			.withMessageContaining("is not a duration");
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "malformedLockAtLeastFor"))
			.withMessageContaining("Invalid.malformedLockAtLeastFor")
			.withMessageContaining("lockAtLeastFor '1 minute'");
	}

	@Test
	void prototypeCarriesTheDeclarationAndIsNamedAfterTheKeyTemplates() {
		LockRequest transfer = operation(Declarations.class, "transfer").prototype();
		assertThat(transfer.keys()).containsExactly("/account/#{#from}", "/account/#{#to}");
		assertThat(transfer.name()).isEqualTo("/account/#{#from},/account/#{#to}");
		assertThat(transfer.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(transfer.reentrant()).isTrue();
		assertThat(transfer.onBusy()).isEqualTo(OnBusy.FAIL);
		LockRequest job = operation(Declarations.class, "keptJob").prototype();
		assertThat(job.reentrant()).as("kept after the call: not bound to the thread").isFalse();
		assertThat(job.lockAtLeastFor()).isEqualTo(Duration.ofMinutes(1));
		assertThat(job.waitTime()).isZero();
		assertThat(job.onBusy()).isEqualTo(OnBusy.SKIP);
		assertThat(job.name()).isEqualTo("/jobs/report");
	}

	@ParameterizedTest
	@CsvSource({ "defaultWait, BlockingLockInvoker", "skipWithEmpty, BlockingLockInvoker",
			"completionStage, CompletionStageLockInvoker", "completableFuture, CompletionStageLockInvoker",
			"mono, ReactorLockInvoker", "flux, ReactorLockInvoker", "monoPermit, ReactorLockInvoker" })
	void invokerIsChosenOnceForTheReturnType(String method, String invoker) {
		Class<?> type = method.equals("defaultWait") || method.equals("skipWithEmpty") ? Declarations.class
				: Asynchronous.class;
		LockOperation operation = operation(type, method);
		assertThat(operation.invoker().getClass().getSimpleName()).isEqualTo(invoker);
		assertThat(operation(type, method).invoker()).isSameAs(operation.invoker());
	}

	@Test
	void operationIsBuiltOncePerMethod() {
		assertThat(operation(Declarations.class, "twoSeconds")).isSameAs(operation(Declarations.class, "twoSeconds"));
	}

	@Test
	void composedAnnotationAndInterfaceDeclarationsAreFound() {
		LockOperation composed = operation(Declarations.class, "composed");
		assertThat(composed.prototype().mode()).isEqualTo(LockMode.WRITE);
		assertThat(composed.keyTemplates()).extracting(LockPathTemplate::getSource).containsExactly("/composed");

		Method interfaceMethod = ReflectionUtils.findMethod(Api.class, "call", String.class);
		LockOperation fromInterface = this.source.getOperation(interfaceMethod, ApiImpl.class);
		assertThat(fromInterface).isNotNull();
		assertThat(fromInterface.keyTemplates()).extracting(LockPathTemplate::getSource).containsExactly("/api/#{#id}");
	}

	@ParameterizedTest
	@ValueSource(strings = { "completionStage", "completableFuture", "mono", "flux", "monoPermit", "fluxPermit" })
	void completionStageCompletableFutureMonoAndFluxAreAccepted(String method) {
		assertThat(operation(Asynchronous.class, method)).isNotNull();
	}

	@Test
	void futureThatIsNotACompletionStageIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "future"))
			.withMessageContaining("Invalid.future")
			.withMessageContaining("java.util.concurrent.Future is a Future that cannot say when it completes")
			.withMessageContaining("Declare CompletableFuture or CompletionStage");
	}

	@Test
	void subclassOfCompletableFutureIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "futureSubclass"))
			.withMessageContaining("Invalid.futureSubclass")
			.withMessageContaining("OwnFuture is not supported")
			.withMessageContaining("exactly CompletionStage or CompletableFuture, not a subtype");
	}

	@Test
	void flowPublisherReturnTypeIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "publisher"))
			.withMessageContaining("Invalid.publisher")
			.withMessageContaining("SubmissionPublisher is a reactive type other than Reactor's Mono and Flux")
			.withMessageContaining("Declare Mono or Flux");
	}

	@Test
	void reactiveStreamsPublisherOtherThanMonoAndFluxIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "reactiveStreamsPublisher"))
			.withMessageContaining("Invalid.reactiveStreamsPublisher")
			.withMessageContaining("org.reactivestreams.Publisher is a reactive type other than Reactor's Mono");
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "connectableFlux"))
			.withMessageContaining("Invalid.connectableFlux")
			.withMessageContaining("ConnectableFlux is a reactive type other than Reactor's Mono and Flux");
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
			.withMessageContaining("waitTime '-5'")
			.withMessageContaining("-1ms");
	}

	@Test
	void formerWaitForeverValueIsRejected() {
		// -2 meant "wait forever" before WAIT_FOREVER became -1: it must not silently mean anything.
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "formerWaitForever"))
			.withMessageContaining("Invalid.formerWaitForever")
			.withMessageContaining("waitTime '-2'")
			.withMessageContaining("DistributedLock.WAIT_FOREVER");
	}

	@ParameterizedTest
	@ValueSource(classes = { MinusTwo.class, MinusFive.class })
	void negativeWaitTimeFailsTheStartNamingTheMethod(Class<?> service) {
		String waitTime = ReflectionUtils.findMethod(service, "work").getAnnotation(DistributedLock.class).waitTime();
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(Advice.class);
			context.registerBean(service);
			assertThatExceptionOfType(BeanCreationException.class).isThrownBy(context::refresh)
				.havingRootCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessageContaining(service.getSimpleName() + ".work")
				.withMessageContaining("waitTime '" + waitTime + "'");
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

	@Test
	void severalKeysAreParsedInTheirDeclaredOrder() {
		LockOperation transfer = operation(Declarations.class, "transfer");
		assertThat(transfer.keyTemplates()).extracting(LockPathTemplate::getSource)
			.containsExactly("/account/#{#from}", "/account/#{#to}");
		assertThat(transfer.prototype().isMultiLock()).isTrue();
		assertThat(transfer.prototype().isPermit()).isFalse();
		assertThat(operation(Declarations.class, "defaultWait").prototype().isMultiLock()).isFalse();
	}

	@Test
	void onBusyFailsUnlessSkipIsAsked() {
		assertThat(operation(Declarations.class, "defaultWait").prototype().onBusy()).isEqualTo(OnBusy.FAIL);
		assertThat(operation(Declarations.class, "skipWithNull").prototype().onBusy()).isEqualTo(OnBusy.SKIP);
		assertThat(operation(Declarations.class, "skipWithEmpty").prototype().onBusy()).isEqualTo(OnBusy.SKIP);
		assertThat(operation(Declarations.class, "skipVoid").prototype().onBusy()).isEqualTo(OnBusy.SKIP);
	}

	@Test
	void semaphoreIsANonReentrantExclusivePermitOfOneKey() {
		LockOperation semaphore = operation(Declarations.class, "semaphore");
		assertThat(semaphore.keyTemplates()).extracting(LockPathTemplate::getSource).containsExactly("/partner/#{#id}");
		assertThat(semaphore.prototype().isPermit()).isTrue();
		assertThat(semaphore.prototype().permits()).isEqualTo(3);
		assertThat(semaphore.prototype().mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(semaphore.prototype().reentrant()).isFalse();
		assertThat(semaphore.prototype().waitTime()).isEqualTo(Duration.ofSeconds(2));
		assertThat(semaphore.prototype().onBusy()).isEqualTo(OnBusy.SKIP);
		assertThat(operation(Declarations.class, "semaphoreDefaults").prototype().waitTime()).isNull();
		assertThat(operation(Declarations.class, "semaphoreDefaults").prototype().onBusy()).isEqualTo(OnBusy.FAIL);
		assertThat(operation(Declarations.class, "semaphoreForever").prototype().waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void emptyKeyArrayIsRejected() {
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> operation(Invalid.class, "noKey"))
			.withMessageContaining("Invalid.noKey")
			.withMessageContaining("no key");
	}

	@Test
	void everyKeyOfAMultiLockIsValidated() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> operation(Invalid.class, "malformedSecondKey"))
			.withMessageContaining("Invalid.malformedSecondKey")
			.withMessageContaining("/bad/#{#b");
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> operation(Invalid.class, "illegalSecondKey"))
			.withMessageContaining("Invalid.illegalSecondKey")
			.withMessageContaining("/a//b");
	}

	@Test
	void skipWithAPrimitiveReturnTypeIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "skipReturningInt"))
			.withMessageContaining("@DistributedLock on")
			.withMessageContaining("Invalid.skipReturningInt")
			.withMessageContaining("SKIP")
			.withMessageContaining("int");
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "skipPermitReturningLong"))
			.withMessageContaining("@DistributedSemaphore on")
			.withMessageContaining("Invalid.skipPermitReturningLong")
			.withMessageContaining("long");
		// FAIL never returns "nothing": primitives are fine there.
		assertThat(operation(Declarations.class, "failReturningInt")).isNotNull();
	}

	@Test
	void semaphoreWithoutPermitsIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "zeroPermits"))
			.withMessageContaining("@DistributedSemaphore on")
			.withMessageContaining("Invalid.zeroPermits")
			.withMessageContaining("permits = 0");
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "negativePermits"))
			.withMessageContaining("Invalid.negativePermits")
			.withMessageContaining("permits = -2");
	}

	@Test
	void methodWithBothAnnotationsIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "lockAndSemaphore"))
			.withMessageContaining("Invalid.lockAndSemaphore")
			.withMessageContaining("both @DistributedLock and @DistributedSemaphore");
	}

	@Test
	void semaphoreWithAsynchronousReturnTypeOrNegativeWaitTimeIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "asyncPermit"))
			.withMessageContaining("@DistributedSemaphore on")
			.withMessageContaining("Invalid.asyncPermit")
			.withMessageContaining("Future that cannot say when it completes, so the permit");
		assertThatIllegalStateException().isThrownBy(() -> operation(Invalid.class, "negativePermitWait"))
			.withMessageContaining("Invalid.negativePermitWait")
			.withMessageContaining("waitTime '-3'");
	}

	@Test
	void semaphoresNamingDifferentPermitsForOneTemplateAreRejected() {
		assertThat(operation(Conflicting.class, "twoPermits")).isNotNull();
		assertThatIllegalStateException().isThrownBy(() -> operation(Conflicting.class, "threePermits"))
			.withMessageContaining("Conflicting.threePermits")
			.withMessageContaining("Conflicting.twoPermits")
			.withMessageContaining("SEMAPHORE (3 permits)")
			.withMessageContaining("SEMAPHORE (2 permits)")
			.withMessageContaining("same number of permits");
		assertThat(operation(Conflicting.class, "twoPermitsToo")).isNotNull();
	}

	@Test
	void semaphoreAndLockOnOneTemplateAreRejectedEitherWay() {
		assertThat(operation(Conflicting.class, "twoPermits")).isNotNull();
		assertThatIllegalStateException().isThrownBy(() -> operation(Conflicting.class, "lockOnSemaphorePath"))
			.withMessageContaining("Conflicting.lockOnSemaphorePath")
			.withMessageContaining("Conflicting.twoPermits")
			.withMessageContaining("do not exclude each other");
		assertThat(operation(Conflicting.class, "exclusive")).isNotNull();
		assertThatIllegalStateException().isThrownBy(() -> operation(Conflicting.class, "semaphoreOnLockPath"))
			.withMessageContaining("@DistributedSemaphore on")
			.withMessageContaining("Conflicting.semaphoreOnLockPath")
			.withMessageContaining("Conflicting.exclusive")
			.withMessageContaining("do not exclude each other");
	}

	@Test
	void everyKeyOfAMultiLockIsCheckedForConflictingKinds() {
		assertThat(operation(Conflicting.class, "multi")).isNotNull();
		assertThatIllegalStateException().isThrownBy(() -> operation(Conflicting.class, "readOnSecondKeyOfMulti"))
			.withMessageContaining("Conflicting.readOnSecondKeyOfMulti")
			.withMessageContaining("Conflicting.multi")
			.withMessageContaining("/second/#{#p1}");
		assertThat(operation(Conflicting.class, "exclusiveOnSecondKeyOfMulti")).isNotNull();
	}

	@ParameterizedTest
	@ValueSource(classes = { NoKey.class, ZeroPermits.class, LockAndSemaphore.class, SkipReturningBoolean.class,
			SkipPermitReturningInt.class, AsyncPermit.class, FutureSubclassWork.class, FlowPublisherWork.class })
	void invalidDeclarationFailsTheStartNamingTheMethod(Class<?> service) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(Advice.class);
			context.registerBean(service);
			assertThatExceptionOfType(BeanCreationException.class).isThrownBy(context::refresh)
				.havingRootCause()
				.withMessageContaining(service.getSimpleName() + ".work");
		}
	}

	@ParameterizedTest
	@ValueSource(classes = { SemaphoreOfThree.class, LockOnSemaphoreKey.class })
	void conflictingDeclarationsOfTwoBeansFailTheStartNamingBothMethods(Class<?> second) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(Advice.class);
			context.registerBean(SemaphoreOfTwo.class);
			context.registerBean(second);
			assertThatExceptionOfType(BeanCreationException.class).isThrownBy(context::refresh)
				.havingRootCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessageContaining("SemaphoreOfTwo.work")
				.withMessageContaining(second.getSimpleName() + ".work");
		}
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

		@DistributedLock(path = "/a", waitTime = "0")
		void noWait() {
		}

		@DistributedLock(path = "/a", waitTime = "2s")
		void twoSeconds() {
		}

		@DistributedLock(path = "/a", waitTime = "PT2S")
		void isoTwoSeconds() {
		}

		@DistributedLock(path = "/a", waitTime = "500")
		void plainMilliseconds() {
		}

		@DistributedLock(path = "/a", waitTime = "${lock.wait}")
		void placeholder() {
		}

		@DistributedLock(path = "/a", waitTime = "-1")
		void foreverAsANumber() {
		}

		@DistributedLock(path = "/a", waitTime = "PT-0.001S")
		void foreverInIso() {
		}

		@DistributedLock(path = "/jobs/report", waitTime = "0", onBusy = OnBusy.SKIP, lockAtLeastFor = "1m")
		void keptJob() {
		}

		@DistributedLock(path = "/a", waitTime = "0h")
		void noWaitInHours() {
		}

		@DistributedLock(path = "/a", waitTime = "3m")
		void threeMinutes() {
		}

		@DistributedLock(path = "/a", waitTime = "50us")
		void fiftyMicroseconds() {
		}

		@DistributedLock(path = "/a", waitTime = "")
		void explicitDefault() {
		}

		@ComposedWriteLock
		void composed() {
		}

		@DistributedLock(path = { "/account/#{#from}", "/account/#{#to}" })
		void transfer(String from, String to) {
		}

		@DistributedLock(path = "/skip", onBusy = OnBusy.SKIP)
		Integer skipWithNull() {
			return 1;
		}

		@DistributedLock(path = "/skip", onBusy = OnBusy.SKIP)
		Optional<String> skipWithEmpty() {
			return Optional.of("x");
		}

		@DistributedLock(path = "/skip", onBusy = OnBusy.SKIP)
		void skipVoid() {
		}

		@DistributedLock(path = "/fail")
		int failReturningInt() {
			return 1;
		}

		@DistributedSemaphore(path = "/partner/#{#id}", permits = 3, waitTime = "2s", onBusy = OnBusy.SKIP)
		void semaphore(String id) {
		}

		@DistributedSemaphore(path = "/partner/#{#id}", permits = 3)
		void semaphoreDefaults(String id) {
		}

		@DistributedSemaphore(path = "/partner/#{#id}", permits = 3, waitTime = DistributedLock.WAIT_FOREVER)
		void semaphoreForever(String id) {
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

	static class Asynchronous {

		@DistributedLock(path = "/async/stage")
		CompletionStage<String> completionStage() {
			return CompletableFuture.completedFuture("x");
		}

		@DistributedLock(path = "/async/future")
		CompletableFuture<String> completableFuture() {
			return CompletableFuture.completedFuture("x");
		}

		@DistributedLock(path = "/async/mono", mode = LockMode.READ)
		Mono<String> mono() {
			return Mono.just("x");
		}

		@DistributedLock(path = { "/async/flux/a", "/async/flux/b" }, onBusy = OnBusy.SKIP)
		Flux<String> flux() {
			return Flux.just("x");
		}

		@DistributedSemaphore(path = "/async/mono-permit", permits = 2)
		Mono<String> monoPermit() {
			return Mono.just("x");
		}

		@DistributedSemaphore(path = "/async/flux-permit", permits = 2)
		Flux<String> fluxPermit() {
			return Flux.just("x");
		}

	}

	@SuppressWarnings("serial")
	static class OwnFuture<T> extends CompletableFuture<T> {

	}

	static class Invalid {

		@DistributedLock(path = "/future")
		Future<String> future() {
			return CompletableFuture.completedFuture("x");
		}

		@DistributedLock(path = "/future-subclass")
		OwnFuture<String> futureSubclass() {
			return new OwnFuture<>();
		}

		@DistributedLock(path = "/reactive-streams")
		Publisher<String> reactiveStreamsPublisher() {
			return Flux.just("x");
		}

		@DistributedLock(path = "/connectable")
		ConnectableFlux<String> connectableFlux() {
			return Flux.just("x").publish();
		}

		@DistributedLock(path = "/publisher")
		java.util.concurrent.SubmissionPublisher<String> publisher() {
			return new java.util.concurrent.SubmissionPublisher<>();
		}

		@DistributedLock(path = "/read", mode = LockMode.READ, reentrant = false)
		void nonReentrantRead() {
		}

		@DistributedLock(path = "/negative", waitTime = "-5")
		void negativeWait() {
		}

		@DistributedLock(path = "/negative", waitTime = "-2")
		void formerWaitForever() {
		}

		@DistributedLock(path = "/malformed-wait", waitTime = "two seconds")
		void malformedWait() {
		}

		@DistributedLock(path = "/malformed-kept", reentrant = false, lockAtLeastFor = "1 minute")
		void malformedLockAtLeastFor() {
		}

		@DistributedLock(path = "/stock/#{#sku")
		void malformed(String sku) {
		}

		@DistributedLock(path = {})
		void noKey() {
		}

		@DistributedLock(path = { "/ok/#{#a}", "/bad/#{#b" })
		void malformedSecondKey(String a, String b) {
		}

		@DistributedLock(path = { "/ok", "/a//b" })
		void illegalSecondKey() {
		}

		@DistributedLock(path = "/skip", onBusy = OnBusy.SKIP)
		int skipReturningInt() {
			return 1;
		}

		@DistributedSemaphore(path = "/skip-permit", permits = 1, onBusy = OnBusy.SKIP)
		long skipPermitReturningLong() {
			return 1;
		}

		@DistributedSemaphore(path = "/zero", permits = 0)
		void zeroPermits() {
		}

		@DistributedSemaphore(path = "/negative-permits", permits = -2)
		void negativePermits() {
		}

		@DistributedLock(path = "/both")
		@DistributedSemaphore(path = "/both", permits = 2)
		void lockAndSemaphore() {
		}

		@DistributedSemaphore(path = "/async-permit", permits = 2)
		Future<String> asyncPermit() {
			return CompletableFuture.completedFuture("x");
		}

		@DistributedSemaphore(path = "/negative-permit-wait", permits = 2, waitTime = "-3")
		void negativePermitWait() {
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

		@DistributedLock(path = "/shared/#{#p0}", waitTime = "0")
		void exclusiveToo(String key) {
		}

		@DistributedSemaphore(path = "/shared/#{#p0}", permits = 2)
		void semaphoreOnLockPath(String key) {
		}

		@DistributedSemaphore(path = "/limited/#{#p0}", permits = 2)
		void twoPermits(String key) {
		}

		@DistributedSemaphore(path = "/limited/#{#p0}", permits = 3)
		void threePermits(String key) {
		}

		@DistributedSemaphore(path = "/limited/#{#p0}", permits = 2, waitTime = "0")
		void twoPermitsToo(String key) {
		}

		@DistributedLock(path = "/limited/#{#p0}")
		void lockOnSemaphorePath(String key) {
		}

		@DistributedLock(path = { "/first/#{#p0}", "/second/#{#p1}" })
		void multi(String first, String second) {
		}

		@DistributedLock(path = "/second/#{#p1}", mode = LockMode.READ)
		void readOnSecondKeyOfMulti(String first, String second) {
		}

		@DistributedLock(path = "/second/#{#p1}", waitTime = "0")
		void exclusiveOnSecondKeyOfMulti(String first, String second) {
		}

	}

	/** The advice without a template: enough to validate declarations at start-up. */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Advice {

	}

	static class MinusTwo {

		@DistributedLock(path = "/minus-two", waitTime = "-2s")
		public void work() {
		}

	}

	static class MinusFive {

		@DistributedLock(path = "/minus-five", waitTime = "-5")
		public void work() {
		}

	}

	static class NoKey {

		@DistributedLock(path = {})
		public void work() {
		}

	}

	static class ZeroPermits {

		@DistributedSemaphore(path = "/zero-permits", permits = 0)
		public void work() {
		}

	}

	static class LockAndSemaphore {

		@DistributedLock(path = "/lock-and-semaphore")
		@DistributedSemaphore(path = "/lock-and-semaphore", permits = 2)
		public void work() {
		}

	}

	static class SkipReturningBoolean {

		@DistributedLock(path = "/skip-boolean", onBusy = OnBusy.SKIP)
		public boolean work() {
			return true;
		}

	}

	static class SkipPermitReturningInt {

		@DistributedSemaphore(path = "/skip-permit-int", permits = 2, onBusy = OnBusy.SKIP)
		public int work() {
			return 1;
		}

	}

	static class AsyncPermit {

		@DistributedSemaphore(path = "/async-permit", permits = 2)
		public Future<String> work() {
			return CompletableFuture.completedFuture("x");
		}

	}

	static class FutureSubclassWork {

		@DistributedLock(path = "/future-subclass-work")
		public OwnFuture<String> work() {
			return new OwnFuture<>();
		}

	}

	static class FlowPublisherWork {

		@DistributedLock(path = "/flow-publisher-work")
		public java.util.concurrent.Flow.Publisher<String> work() {
			return new java.util.concurrent.SubmissionPublisher<>();
		}

	}

	static class SemaphoreOfTwo {

		@DistributedSemaphore(path = "/start/#{#p0}", permits = 2)
		public void work(String key) {
		}

	}

	static class SemaphoreOfThree {

		@DistributedSemaphore(path = "/start/#{#p0}", permits = 3)
		public void work(String key) {
		}

	}

	static class LockOnSemaphoreKey {

		@DistributedLock(path = "/start/#{#p0}")
		public void work(String key) {
		}

	}

}
