package io.github.zklock.aop;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;

import io.github.zklock.annotation.LeaderOnly;

/**
 * Applies {@link LeaderOnlyInterceptor} to methods annotated with {@link LeaderOnly @LeaderOnly}
 * (directly, through a composed annotation, or on an interface method). Ordered just outside the
 * lock advisor, so that an instance that does not lead sends no lock request.
 */
public class LeaderOnlyAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient Pointcut pointcut = new AnnotationMatchingPointcut(null, LeaderOnly.class, true);

	private final transient Advice advice;

	/**
	 * Create an advisor.
	 * @param interceptor the advice to apply
	 * @param order the advisor order; lower runs outside higher
	 */
	public LeaderOnlyAdvisor(LeaderOnlyInterceptor interceptor, int order) {
		this.advice = interceptor;
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.advice;
	}

}
