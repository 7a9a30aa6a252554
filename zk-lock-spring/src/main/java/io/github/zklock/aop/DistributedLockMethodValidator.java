package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.util.Map;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;

/**
 * Validates every {@link DistributedLock @DistributedLock} and
 * {@link DistributedSemaphore @DistributedSemaphore} method of each bean as the bean is created,
 * so that a malformed key template, an illegal static path, an asynchronous return type or any
 * other invalid declaration fails the application start (naming the method) instead of the first
 * call.
 */
public class DistributedLockMethodValidator implements BeanPostProcessor {

	private final LockOperationSource operationSource;

	/**
	 * Create a validator.
	 * @param operationSource builds and caches the operations it validates
	 */
	public DistributedLockMethodValidator(LockOperationSource operationSource) {
		this.operationSource = operationSource;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (!AnnotationUtils.isCandidateClass(targetClass, DistributedLock.class)
				&& !AnnotationUtils.isCandidateClass(targetClass, DistributedSemaphore.class)) {
			return bean;
		}
		Map<Method, Boolean> annotated = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<Boolean>) (method) -> isAnnotated(method) ? Boolean.TRUE : null);
		annotated.keySet().forEach((method) -> this.operationSource.getOperation(method, targetClass));
		return bean;
	}

	private static boolean isAnnotated(Method method) {
		return AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class)
				|| AnnotatedElementUtils.hasAnnotation(method, DistributedSemaphore.class);
	}

}
