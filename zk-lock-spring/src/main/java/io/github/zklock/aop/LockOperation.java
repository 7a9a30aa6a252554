package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.expression.LockPathTemplate;

/**
 * A validated {@code @DistributedLock} or {@code @DistributedSemaphore} declaration, built once
 * per method by {@link LockOperationSource}: the key templates, the prototype
 * {@link LockRequest} that every call of the method fills with its resolved keys (so the
 * request's rules were checked at start-up), and the invoker chosen for the method's return type.
 * A call is one {@link #invoke} of it.
 *
 * <p>Immutable and thread-safe.
 */
public final class LockOperation {

	private final Method method;

	private final List<LockPathTemplate> keyTemplates;

	private final LockRequest prototype;

	private final LockInvoker invoker;

	private final LockOperationSource source;

	LockOperation(Method method, List<LockPathTemplate> keyTemplates, LockRequest prototype, LockInvoker invoker,
			LockOperationSource source) {
		this.method = Objects.requireNonNull(method, "method must not be null");
		this.keyTemplates = List.copyOf(keyTemplates);
		this.prototype = Objects.requireNonNull(prototype, "prototype must not be null");
		this.invoker = Objects.requireNonNull(invoker, "invoker must not be null");
		this.source = source;
	}

	/**
	 * Return the most specific method, whose parameter names the key templates use.
	 * @return the method
	 */
	public Method method() {
		return this.method;
	}

	/**
	 * Return the parsed key templates, in declaration order: one for a lock or a semaphore,
	 * several for a multi-lock.
	 * @return the key templates
	 */
	public List<LockPathTemplate> keyTemplates() {
		return this.keyTemplates;
	}

	/**
	 * Return the request every call makes, with the key templates' sources as its keys and its
	 * name (the low-cardinality name in metrics).
	 * @return the prototype request
	 */
	public LockRequest prototype() {
		return this.prototype;
	}

	/** The strategy for the method's return type. */
	LockInvoker invoker() {
		return this.invoker;
	}

	/**
	 * Return the request of one call: the prototype with the call's keys, every key resolved
	 * before any ZooKeeper request.
	 * @param args the call's arguments
	 * @param target the target object, may be {@code null}
	 * @return the request
	 * @throws io.github.zklock.InvalidLockPathException if a template value is {@code null}, empty
	 * or fails
	 */
	public LockRequest request(@Nullable Object[] args, @Nullable Object target) {
		if (this.keyTemplates.size() == 1) {
			return this.prototype.withKeys(List.of(this.source.resolvePath(this, this.keyTemplates.get(0), args, target)));
		}
		List<String> keys = new ArrayList<>(this.keyTemplates.size());
		for (LockPathTemplate template : this.keyTemplates) {
			keys.add(this.source.resolvePath(this, template, args, target));
		}
		return this.prototype.withKeys(keys);
	}

	/**
	 * Run a call of the method under its lock.
	 * @param template the template that grants
	 * @param invocation the call
	 * @param target the target object, may be {@code null}
	 * @return what the call returns: the method's result, the skipped value, or for an
	 * asynchronous or reactive method a stage or publisher that locks
	 * @throws Throwable what the method throws (a blocking method), or the lock's exceptions
	 */
	@Nullable Object invoke(LockTemplate template, MethodInvocation invocation, @Nullable Object target)
			throws Throwable {
		return this.invoker.invoke(template, request(invocation.getArguments(), target), invocation);
	}

	@Override
	public String toString() {
		return "LockOperation[" + this.method.getName() + ": " + this.prototype + "]";
	}

}
