package io.github.zklock.expression;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;

/**
 * Parses {@code @DistributedLock} path templates and resolves them per call
 * against the method's arguments: by parameter name ({@code #sku}, needs {@code -parameters}),
 * by position ({@code #p0}, {@code #a0}), the root object ({@code #root.method},
 * {@code #root.args}, {@code #root.target}) and, when a bean factory is given, beans
 * ({@code @stockService.prefix}).
 *
 * <p>Thread-safe.
 */
public class LockPathExpressionEvaluator extends CachedExpressionEvaluator {

	private final @Nullable BeanFactoryResolver beanResolver;

	/**
	 * Create an evaluator.
	 * @param beanFactory the bean factory for {@code @bean} references, or {@code null} for none
	 */
	public LockPathExpressionEvaluator(@Nullable BeanFactory beanFactory) {
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	/**
	 * Parse a template. Callers cache the result per method (see
	 * {@code io.github.zklock.aop.LockOperationSource}).
	 * @param template the template text
	 * @return the parsed template
	 * @throws io.github.zklock.InvalidLockPathException if the template is malformed
	 */
	public LockPathTemplate parse(String template) {
		return LockPathTemplate.parse(template, getParser());
	}

	/**
	 * Resolve a template for one call.
	 * @param template the parsed template
	 * @param method the invoked method (its most specific implementation, for parameter names)
	 * @param args the call's arguments
	 * @param target the target object, may be {@code null}
	 * @return the lock path
	 * @throws io.github.zklock.InvalidLockPathException if a value is {@code null}, empty or
	 * cannot be evaluated
	 */
	public String resolve(LockPathTemplate template, Method method, @Nullable Object[] args, @Nullable Object target) {
		if (template.isLiteral()) {
			return template.getSource();
		}
		LockPathRootObject root = new LockPathRootObject(method, args, target);
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args,
				getParameterNameDiscoverer());
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		return template.resolve(context);
	}

	/**
	 * The root object of a path expression.
	 *
	 * @param method the invoked method
	 * @param args the arguments
	 * @param target the target object, may be {@code null}
	 */
	public record LockPathRootObject(Method method, @Nullable Object[] args, @Nullable Object target) {
	}

}
