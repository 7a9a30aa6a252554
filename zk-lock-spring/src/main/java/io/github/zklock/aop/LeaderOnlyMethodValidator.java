package io.github.zklock.aop;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

import io.github.zklock.annotation.LeaderOnly;

/**
 * Validates every {@link LeaderOnly @LeaderOnly} method of each bean as the bean is created, so
 * that an invalid group or return type fails the application start (naming the method), and so
 * that every group is known to {@link LeaderGroupsLifecycle} before the context starts.
 */
public class LeaderOnlyMethodValidator implements BeanPostProcessor {

	private final LeaderOnlyOperationSource operationSource;

	/**
	 * Create a validator.
	 * @param operationSource validates and records the groups
	 */
	public LeaderOnlyMethodValidator(LeaderOnlyOperationSource operationSource) {
		this.operationSource = operationSource;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (!AnnotationUtils.isCandidateClass(targetClass, LeaderOnly.class)) {
			return bean;
		}
		MethodIntrospector
			.selectMethods(targetClass,
					(MethodIntrospector.MetadataLookup<Boolean>) (method) -> AnnotatedElementUtils.hasAnnotation(method,
							LeaderOnly.class) ? Boolean.TRUE : null)
			.keySet()
			.forEach((method) -> this.operationSource.getGroup(method, targetClass));
		return bean;
	}

}
