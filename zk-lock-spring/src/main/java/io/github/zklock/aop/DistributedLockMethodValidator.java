package io.github.zklock.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.annotation.LeaderOnly;

/**
 * Validates every {@link DistributedLock @DistributedLock}, {@link DistributedSemaphore @DistributedSemaphore}
 * and {@link LeaderOnly @LeaderOnly} method of each bean as the bean is created, so that a
 * malformed key template, an illegal static path or group, an unsupported asynchronous return type or any
 * other invalid declaration fails the application start (naming the method) instead of the first
 * call; the groups found are then known to {@link LeaderGroupsLifecycle} before the context
 * starts.
 *
 * <p>It also reads each such class's bytecode once for calls from the class to its own advised
 * methods, and logs a warning per call found: a {@code @DistributedLock} method invoked on
 * {@code this} bypasses the proxy and runs without its lock (see {@link SelfInvocations}).
 */
public class DistributedLockMethodValidator implements BeanPostProcessor {

	private static final Log logger = LogFactory.getLog(DistributedLockMethodValidator.class);

	private static final List<Class<? extends Annotation>> ANNOTATIONS = List.of(DistributedLock.class,
			DistributedSemaphore.class, LeaderOnly.class);

	private final LockOperationSource operationSource;

	private final LeaderOnlyOperationSource leaderOnlySource;

	private final Set<Class<?>> inspected = ConcurrentHashMap.newKeySet();

	/**
	 * Create a validator.
	 * @param operationSource builds and caches the lock operations it validates
	 * @param leaderOnlySource validates and records the {@code @LeaderOnly} groups
	 */
	public DistributedLockMethodValidator(LockOperationSource operationSource,
			LeaderOnlyOperationSource leaderOnlySource) {
		this.operationSource = operationSource;
		this.leaderOnlySource = leaderOnlySource;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (!AnnotationUtils.isCandidateClass(targetClass, ANNOTATIONS)) {
			return bean;
		}
		Map<Method, Boolean> annotated = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<Boolean>) (method) -> isAnnotated(method) ? Boolean.TRUE : null);
		for (Method method : annotated.keySet()) {
			this.operationSource.getOperation(method, targetClass);
			this.leaderOnlySource.getGroup(method, targetClass);
		}
		if (this.inspected.add(targetClass)) {
			for (String call : SelfInvocations.find(targetClass, annotated.keySet())) {
				logger.warn("Self-invocation: " + call + ". Called on 'this', a method of the same class bypasses "
						+ "the proxy and runs without its lock (or semaphore, or leadership check); call it "
						+ "through the bean instead (from another bean, or a reference to this bean's proxy). "
						+ "LockAssert.assertHeld() in the locked method turns a call without its lock into an exception.");
			}
		}
		return bean;
	}

	private static boolean isAnnotated(Method method) {
		return ANNOTATIONS.stream().anyMatch((type) -> AnnotatedElementUtils.hasAnnotation(method, type));
	}

}
