package io.github.zklock.aop;

import java.util.Optional;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

import io.github.zklock.Leadership;
import io.github.zklock.annotation.LeaderOnly;

/**
 * Runs a {@link LeaderOnly @LeaderOnly} method only while {@link Leadership#isLeader(String)}
 * says this instance leads its group; otherwise returns {@code null} ({@code Optional.empty()} for
 * an {@code Optional} return type) without invoking it, logging the skip at debug level. The
 * check sends no ZooKeeper request: it reads the leadership state kept by the latch.
 */
public class LeaderOnlyInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(LeaderOnlyInterceptor.class);

	private final LeaderOnlyOperationSource operationSource;

	private final Supplier<Leadership> leadership;

	/**
	 * Create an interceptor.
	 * @param operationSource finds the group of a method
	 * @param leadership supplies the leadership, looked up on first call
	 */
	public LeaderOnlyInterceptor(LeaderOnlyOperationSource operationSource, Supplier<Leadership> leadership) {
		this.operationSource = operationSource;
		this.leadership = leadership;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		String group = this.operationSource.getGroup(invocation.getMethod(), targetClass);
		if (group == null || this.leadership.get().isLeader(group)) {
			return invocation.proceed();
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Skipped " + ClassUtils.getQualifiedMethodName(invocation.getMethod(), targetClass)
					+ ": this instance does not lead group '" + group + "'");
		}
		return (invocation.getMethod().getReturnType() == Optional.class) ? Optional.empty() : null;
	}

}
