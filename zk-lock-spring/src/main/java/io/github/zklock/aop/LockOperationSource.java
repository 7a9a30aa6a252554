package io.github.zklock.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.EmbeddedValueResolverAware;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.annotation.DurationFormat;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.expression.LockPathTemplate;
import io.github.zklock.spi.RequestRules;

/**
 * Finds and validates {@link DistributedLock @DistributedLock} and
 * {@link DistributedSemaphore @DistributedSemaphore} on methods, building one
 * {@link LockOperation} per method and target class and caching it: the key templates are parsed
 * there, once; the annotation becomes a prototype {@link LockRequest}, whose constructor checks
 * every rule between the attributes (reported here naming the method); the invoker is chosen for
 * the return type. {@code ${...}} placeholders in {@code waitTime}, {@code lockAtLeastFor} and
 * {@code lockAtMostFor} are resolved with the container's embedded value resolver (set by the
 * container; without one they are taken as written).
 *
 * <p>Thread-safe.
 */
public class LockOperationSource implements EmbeddedValueResolverAware {

	private static final String LOCK = "@DistributedLock";

	private static final String SEMAPHORE = "@DistributedSemaphore";

	private static final String MONO = "reactor.core.publisher.Mono";

	private static final String FLUX = "reactor.core.publisher.Flux";

	private static final String FLOW = "kotlinx.coroutines.flow.Flow";

	/** What Spring's AOP needs to run a suspending function as a publisher, and what adapts a Flow. */
	private static final String COROUTINES_REACTOR = "kotlinx.coroutines.reactor.MonoKt";

	private final Map<MethodClassKey, Optional<LockOperation>> operations = new ConcurrentHashMap<>(64);

	private final Map<String, LockOperation> operationsByPath = new ConcurrentHashMap<>(64);

	private final LockPathExpressionEvaluator evaluator;

	private @Nullable StringValueResolver valueResolver;

	/**
	 * Create a source.
	 * @param evaluator parses and resolves key templates
	 */
	public LockOperationSource(LockPathExpressionEvaluator evaluator) {
		this.evaluator = evaluator;
	}

	@Override
	public void setEmbeddedValueResolver(StringValueResolver resolver) {
		this.valueResolver = resolver;
	}

	/**
	 * Return the lock operation of a method, or {@code null} if it is not annotated.
	 * @param method the invoked method (may be an interface method)
	 * @param targetClass the target class, or {@code null} if unknown
	 * @return the operation, or {@code null}
	 * @throws InvalidLockPathException if a key template is malformed or not a legal path, or
	 * {@code @DistributedLock} names no key
	 * @throws IllegalStateException if the declaration is otherwise invalid: both annotations on
	 * one method, an asynchronous or reactive return type other than exactly {@code CompletionStage},
	 * {@code CompletableFuture}, Reactor's {@code Mono} or {@code Flux}, a malformed duration, a rule
	 * of {@link LockRequest} broken (a negative wait time other than {@code WAIT_FOREVER},
	 * {@code reentrant = false} on READ or WRITE, fewer than one permit, a negative
	 * {@code lockAtLeastFor} or one on READ or WRITE, a zero or negative {@code lockAtMostFor} (none
	 * is written {@code "none"}) or one shorter than a positive {@code lockAtLeastFor}),
	 * {@code onBusy = SKIP} with a primitive return type other than {@code void}, or a key template
	 * already used by another method with a kind that would not exclude this one (EXCLUSIVE vs
	 * READ/WRITE vs semaphore, reentrant vs not, semaphores with different permits)
	 */
	public @Nullable LockOperation getOperation(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey key = new MethodClassKey(method, targetClass);
		Optional<LockOperation> operation = this.operations.get(key);
		if (operation == null) {
			operation = Optional.ofNullable(buildOperation(method, targetClass));
			this.operations.put(key, operation);
		}
		return operation.orElse(null);
	}

	/**
	 * Resolve one key of a call.
	 * @param operation the method's operation
	 * @param path one of the operation's {@linkplain LockOperation#keyTemplates() key templates}
	 * @param args the call's arguments
	 * @param target the target object, may be {@code null}
	 * @return the key below the root path
	 * @throws InvalidLockPathException if a template value is {@code null}, empty or fails
	 */
	public String resolvePath(LockOperation operation, LockPathTemplate path, @Nullable Object[] args,
			@Nullable Object target) {
		return this.evaluator.resolve(path, operation.method(), args, target);
	}

	private @Nullable LockOperation buildOperation(Method method, @Nullable Class<?> targetClass) {
		Method specificMethod = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock lock = findAnnotation(specificMethod, method, DistributedLock.class);
		DistributedSemaphore semaphore = findAnnotation(specificMethod, method, DistributedSemaphore.class);
		if (lock == null && semaphore == null) {
			return null;
		}
		String where = ClassUtils.getQualifiedMethodName(specificMethod, targetClass);
		if (lock != null && semaphore != null) {
			throw new IllegalStateException(where + " carries both " + LOCK + " and " + SEMAPHORE
					+ ": a method runs under a lock or a permit of a semaphore, not both. Keep one of them, or "
					+ "move the other to a method it calls");
		}
		LockOperation operation = (lock != null) ? lockOperation(lock, specificMethod, where)
				: semaphoreOperation(semaphore, specificMethod, where);
		rejectConflictingKind(operation, where);
		return operation;
	}

	/**
	 * Find an annotation on the most specific method, else on the invoked one (an interface
	 * method), merged from composed annotations.
	 */
	static <A extends Annotation> @Nullable A findAnnotation(Method specificMethod, Method method, Class<A> type) {
		A annotation = AnnotatedElementUtils.findMergedAnnotation(specificMethod, type);
		if (annotation == null && specificMethod != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, type);
		}
		return annotation;
	}

	private LockOperation lockOperation(DistributedLock annotation, Method method, String where) {
		rejectUnsupportedAsyncReturnType(method, LOCK, where);
		rejectSkipOfPrimitive(method, annotation.onBusy(), LOCK, where);
		if (annotation.path().length == 0) {
			throw new InvalidLockPathException(LOCK + " on " + where + ": no key given; path names one key, or "
					+ "several for a multi-lock, such as path = \"/orders/#{#orderId}\"");
		}
		List<LockPathTemplate> keys = new ArrayList<>(annotation.path().length);
		for (String template : annotation.path()) {
			keys.add(parse(template, LOCK, where));
		}
		Duration lockAtLeastFor = duration("lockAtLeastFor", annotation.lockAtLeastFor(), LOCK, where);
		Duration lockAtMostFor = lockAtMostFor(annotation.lockAtMostFor(), LOCK, where);
		LockRequest prototype = request(LOCK, where, () -> LockRequest.of(sources(keys))
			.withMode(annotation.mode())
			// As written: LockRequest makes an EXCLUSIVE lock kept after the call non-reentrant, and
			// refuses what READ and WRITE cannot do.
			.withReentrant(annotation.reentrant())
			.withWaitTime(waitTime(annotation.waitTime(), LOCK, where))
			.withOnBusy(annotation.onBusy())
			.withLockAtLeastFor((lockAtLeastFor != null) ? lockAtLeastFor : Duration.ZERO)
			// Not given (null): the template's default applies to each call.
			.withLockAtMostFor(lockAtMostFor)
			// Named after the templates: resolved values would make a metric per key.
			.withName(String.join(",", sources(keys))));
		return new LockOperation(method, keys, prototype, invoker(method, LOCK, where), this);
	}

	private LockOperation semaphoreOperation(DistributedSemaphore annotation, Method method, String where) {
		rejectUnsupportedAsyncReturnType(method, SEMAPHORE, where);
		if (annotation.permits() < 1) {
			throw new IllegalStateException(SEMAPHORE + " on " + where + ": permits = " + annotation.permits()
					+ " lets nobody in; a semaphore needs at least 1 permit");
		}
		rejectSkipOfPrimitive(method, annotation.onBusy(), SEMAPHORE, where);
		LockPathTemplate key = parse(annotation.path(), SEMAPHORE, where);
		Duration lockAtMostFor = lockAtMostFor(annotation.lockAtMostFor(), SEMAPHORE, where);
		LockRequest prototype = request(SEMAPHORE, where, () -> LockRequest.permit(key.getSource(), annotation.permits())
			.withWaitTime(waitTime(annotation.waitTime(), SEMAPHORE, where))
			.withOnBusy(annotation.onBusy())
			.withLockAtMostFor(lockAtMostFor));
		return new LockOperation(method, List.of(key), prototype, invoker(method, SEMAPHORE, where), this);
	}

	/** Build the prototype request, reporting a broken rule of {@link LockRequest} with the method. */
	private static LockRequest request(String annotation, String where, Supplier<LockRequest> request) {
		try {
			return request.get();
		}
		catch (InvalidLockPathException ex) {
			throw new InvalidLockPathException(annotation + " on " + where + ": " + ex.getMessage(), ex);
		}
		catch (IllegalArgumentException ex) {
			// The message says it all; the start-up failure is this exception, naming the method.
			throw new IllegalStateException(annotation + " on " + where + ": " + ex.getMessage());
		}
	}

	private static List<String> sources(List<LockPathTemplate> keys) {
		return keys.stream().map(LockPathTemplate::getSource).toList();
	}

	/**
	 * Parse the wait time, named as written when {@link LockRequest}'s rule refuses it: the one
	 * check of a wait time, with the annotation's words.
	 */
	private @Nullable Duration waitTime(String value, String annotation, String where) {
		Duration waitTime = duration("waitTime", value, annotation, where);
		if (waitTime != null) {
			try {
				RequestRules.checkWaitTime(waitTime, "waitTime '" + value + "'");
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(annotation + " on " + where + ": " + ex.getMessage()
						+ ", written \"-1ms\" on the annotation (DistributedLock.WAIT_FOREVER); leave it out for "
						+ "zk.lock.default-wait-time");
			}
		}
		return waitTime;
	}

	/**
	 * Parse the ceiling: {@link DistributedLock#NO_CEILING} ({@code "none"}) for
	 * {@link LockRequest#NO_CEILING}, else a duration named as written when {@link RequestRules}'
	 * rule refuses it (zero, which would read as one attempt elsewhere, and negative values).
	 */
	private @Nullable Duration lockAtMostFor(String value, String annotation, String where) {
		String resolved = resolve(value);
		if (resolved != null && DistributedLock.NO_CEILING.equalsIgnoreCase(resolved.trim())) {
			return LockRequest.NO_CEILING;
		}
		Duration lockAtMostFor = duration("lockAtMostFor", value, annotation, where);
		if (lockAtMostFor != null) {
			try {
				RequestRules.checkLockAtMostFor(lockAtMostFor, "lockAtMostFor '" + value + "'");
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(annotation + " on " + where + ": " + ex.getMessage()
						+ ", written \"none\" on the annotation (" + annotation.substring(1) + ".NO_CEILING); leave it "
						+ "out for zk.lock.default-lock-at-most-for");
			}
		}
		return lockAtMostFor;
	}

	/**
	 * Parse a duration attribute: empty for "not given", else ISO-8601, the simple style or a
	 * number of milliseconds, after {@code ${...}} placeholders are resolved.
	 */
	private @Nullable Duration duration(String attribute, String value, String annotation, String where) {
		String resolved = resolve(value);
		if (!StringUtils.hasText(resolved)) {
			return null;
		}
		try {
			return DurationFormatterUtils.detectAndParse(resolved.trim(), DurationFormat.Unit.MILLIS);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(annotation + " on " + where + ": " + attribute + " '" + value + "'"
					+ (resolved.equals(value) ? "" : " ('" + resolved + "')") + " is not a duration; use ISO-8601 "
					+ "(PT2S), the simple style (2s, 500ms) or a number of milliseconds", ex);
		}
	}

	/** Resolve {@code ${...}} placeholders in an attribute, when there is a resolver. */
	private @Nullable String resolve(String value) {
		if (this.valueResolver != null && StringUtils.hasText(value)) {
			return this.valueResolver.resolveStringValue(value);
		}
		return value;
	}

	/**
	 * The strategy for the method's return type, chosen once: a skipped call returns an empty
	 * {@code Optional} where the method (or its stage) has one, else {@code null}. A Kotlin
	 * {@code suspend} function is run by Spring's AOP as a publisher (a {@code Mono}, or a
	 * {@code Flux} when it returns a {@code Flow}) whose result the proxy awaits: the Reactor
	 * invoker holds the grant until that publisher ends. A {@code Flow} return type is adapted to a
	 * {@code Flux} and back.
	 */
	private static LockInvoker invoker(Method method, String annotation, String where) {
		Class<?> returnType = method.getReturnType();
		if (KotlinDetector.isSuspendingFunction(method)) {
			requireCoroutinesReactor(method, annotation, where, "a suspend function");
			boolean flow = new MethodParameter(method, -1).getParameterType().getName().equals(FLOW);
			return new ReactorLockInvoker(!flow, null);
		}
		if (returnType == CompletionStage.class || returnType == CompletableFuture.class) {
			Class<?> value = ResolvableType.forMethodReturnType(method).as(CompletionStage.class).getGeneric(0).resolve();
			return new CompletionStageLockInvoker((value == Optional.class) ? Optional.empty() : null);
		}
		if (isReactorType(returnType)) {
			// Only here is a Reactor class loaded: the module works without Reactor.
			return new ReactorLockInvoker(returnType.getName().equals(MONO), null);
		}
		if (returnType.getName().equals(FLOW)) {
			requireCoroutinesReactor(method, annotation, where, "a Flow");
			return new ReactorLockInvoker(false, ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType));
		}
		return new BlockingLockInvoker((returnType == Optional.class) ? Optional.empty() : null);
	}

	private static void requireCoroutinesReactor(Method method, String annotation, String where, String what) {
		if (!ClassUtils.isPresent(COROUTINES_REACTOR, method.getDeclaringClass().getClassLoader())
				|| !ClassUtils.isPresent(MONO, method.getDeclaringClass().getClassLoader())
				|| !KotlinDetector.isKotlinReflectPresent()) {
			throw new IllegalStateException(annotation + " on " + where + ": " + what + " is held under the lock "
					+ "through Spring's coroutine support, which runs it as a Reactor publisher; add "
					+ "org.jetbrains.kotlinx:kotlinx-coroutines-reactor and org.jetbrains.kotlin:kotlin-reflect to the class path");
		}
	}

	private LockPathTemplate parse(String template, String annotation, String where) {
		try {
			return this.evaluator.parse(template);
		}
		catch (InvalidLockPathException ex) {
			throw new InvalidLockPathException(annotation + " on " + where + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Each kind keeps its own znodes below the path, so an EXCLUSIVE and a WRITE lock (or a
	 * reentrant and a non-reentrant one, or a lock and a semaphore) on one path would not exclude
	 * each other; semaphores naming different permits would fail at every call of the second.
	 */
	private void rejectConflictingKind(LockOperation operation, String where) {
		for (LockPathTemplate path : operation.keyTemplates()) {
			LockOperation first = this.operationsByPath.putIfAbsent(path.getSource(), operation);
			if (first == null || recipeKind(first.prototype()).equals(recipeKind(operation.prototype()))) {
				continue;
			}
			String conflict = annotationName(operation) + " on " + where + " uses '" + path + "' as "
					+ describeKind(operation.prototype()) + ", but " + ClassUtils.getQualifiedMethodName(first.method())
					+ " uses the same path as " + describeKind(first.prototype()) + "; ";
			if (operation.prototype().isPermit() && first.prototype().isPermit()) {
				throw new IllegalStateException(conflict + "every participant of a semaphore must name the same "
						+ "number of permits for a key (the first stores its count with the key)");
			}
			throw new IllegalStateException(conflict + "the two kinds do not exclude each other. Use one kind per "
					+ "path (READ/WRITE for readers and writers)");
		}
	}

	/** Which recipe, and so which znodes, a request's keys use. */
	private static String recipeKind(LockRequest request) {
		if (request.isPermit()) {
			return "SEMAPHORE (" + request.permits() + " permits)";
		}
		if (request.mode() != LockMode.EXCLUSIVE) {
			return "READ/WRITE";
		}
		return request.reentrant() ? "EXCLUSIVE" : "EXCLUSIVE (reentrant = false)";
	}

	private static String describeKind(LockRequest request) {
		return request.lockAtLeastFor().isZero() ? recipeKind(request)
				: "EXCLUSIVE (reentrant = false, as lockAtLeastFor makes it)";
	}

	private static String annotationName(LockOperation operation) {
		return operation.prototype().isPermit() ? SEMAPHORE : LOCK;
	}

	private static void rejectSkipOfPrimitive(Method method, OnBusy onBusy, String annotation, String where) {
		Class<?> returnType = method.getReturnType();
		if (onBusy == OnBusy.SKIP && returnType.isPrimitive() && returnType != void.class) {
			throw new IllegalStateException(annotation + " on " + where + ": onBusy = SKIP returns null when the "
					+ "call is skipped, which the return type " + returnType.getName() + " cannot hold. Return a "
					+ "wrapper type, Optional or void, or use onBusy = FAIL");
		}
	}

	/**
	 * Whether a return type is Reactor's {@code Mono} or {@code Flux}, compared by name: Reactor is
	 * an optional dependency, and a method can only declare these types when it is present.
	 */
	static boolean isReactorType(Class<?> type) {
		return type.getName().equals(MONO) || type.getName().equals(FLUX);
	}

	private static boolean isReactiveStreamsPublisher(Class<?> type) {
		// By name: Reactive Streams is not a dependency, and the registry above only knows the
		// libraries that are present.
		return ClassUtils.getAllInterfacesForClassAsSet(type)
			.stream()
			.anyMatch((candidate) -> candidate.getName().equals("org.reactivestreams.Publisher"));
	}

	/**
	 * Accept the asynchronous return types the interceptor can hold a grant for (exactly
	 * {@code CompletionStage}, {@code CompletableFuture}, Reactor's {@code Mono} and {@code Flux},
	 * Kotlin's {@code Flow}, and {@code suspend} functions);
	 * reject every other asynchronous type, whose completion the grant could not follow.
	 */
	private static void rejectUnsupportedAsyncReturnType(Method method, String annotation, String where) {
		Class<?> returnType = method.getReturnType();
		if (returnType == CompletionStage.class || returnType == CompletableFuture.class
				|| isReactorType(returnType) || returnType.getName().equals(FLOW)
				|| KotlinDetector.isSuspendingFunction(method)) {
			return;
		}
		String prefix = annotation + " on " + where + ": return type " + returnType.getName();
		String release = annotation.equals(SEMAPHORE) ? "the permit" : "the lock";
		if (CompletionStage.class.isAssignableFrom(returnType)) {
			throw new IllegalStateException(prefix + " is not supported: " + release + " is held until the "
					+ "returned stage completes for methods declared to return exactly CompletionStage or "
					+ "CompletableFuture, not a subtype, whose cancellation and completion the advice cannot rely "
					+ "on. Declare CompletionStage or CompletableFuture");
		}
		if (Future.class.isAssignableFrom(returnType)) {
			throw new IllegalStateException(prefix + " is a Future that cannot say when it completes, so "
					+ release + " could not be held until then. Declare CompletableFuture or CompletionStage");
		}
		if (Flow.Publisher.class.isAssignableFrom(returnType) || isReactiveStreamsPublisher(returnType)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
			throw new IllegalStateException(prefix + " is a reactive type other than Reactor's Mono and Flux and "
					+ "Kotlin's Flow; " + release + " follows the subscriptions of those only (acquired on "
					+ "subscription, released on complete, error or cancel). Declare Mono or Flux (reactor-core on "
					+ "the class path) and adapt the publisher with Mono.from or Flux.from");
		}
	}

}
