package io.github.zklock.aop;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.Pointcuts;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;

/**
 * Applies {@link DistributedLockInterceptor} to methods annotated with
 * {@link DistributedLock @DistributedLock} or {@link DistributedSemaphore @DistributedSemaphore}
 * (directly, through a composed annotation, or on an interface method). Its order decides where
 * the lock sits among other advice: it must be lower (outer) than the transaction advisor's so
 * that the lock outlives the transaction.
 */
public class DistributedLockAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient Pointcut pointcut = Pointcuts.union(
			new AnnotationMatchingPointcut(null, DistributedLock.class, true),
			new AnnotationMatchingPointcut(null, DistributedSemaphore.class, true));

	private final transient Advice advice;

	/**
	 * Create an advisor.
	 * @param interceptor the advice to apply
	 * @param order the advisor order; lower runs outside higher
	 */
	public DistributedLockAdvisor(DistributedLockInterceptor interceptor, int order) {
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
