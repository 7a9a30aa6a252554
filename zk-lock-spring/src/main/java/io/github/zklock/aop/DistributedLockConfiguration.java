package io.github.zklock.aop;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Fallback;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.function.SingletonSupplier;

import io.github.zklock.Leadership;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.expression.LockPathExpressionEvaluator;

/**
 * The infrastructure beans of the {@code @DistributedLock} advice, imported by
 * {@link EnableDistributedLocks @EnableDistributedLocks}: the operation source (per-method cache
 * of parsed declarations, with a SpEL evaluator that resolves {@code @bean} references; an
 * application's own {@link LockOperationSource} bean takes its place), the start-up validator and
 * the advisor; and the same for {@code @LeaderOnly}, with the lifecycle that joins its groups
 * through the application's {@link Leadership} bean.
 *
 * <p>The advisor's order is {@code zk.lock.aspect-order} when the environment sets it, else the
 * annotation's {@link EnableDistributedLocks#order() order}; the {@code @LeaderOnly} advisor is
 * ordered one before it (outside). The {@link LockTemplate} and {@link Leadership} are looked up
 * on the first locked call, so that creating the advisor early (auto-proxy creators collect
 * advisors while post-processors are created) does not pull the ZooKeeper client in with it.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class DistributedLockConfiguration implements ImportAware, EnvironmentAware {

	/** The property that orders the advisor, with or without Spring Boot. */
	public static final String ASPECT_ORDER_PROPERTY = "zk.lock.aspect-order";

	private int order = EnableDistributedLocks.DEFAULT_ORDER;

	private @Nullable Environment environment;

	@Override
	public void setImportMetadata(AnnotationMetadata importMetadata) {
		AnnotationAttributes attributes = AnnotationAttributes
			.fromMap(importMetadata.getAnnotationAttributes(EnableDistributedLocks.class.getName()));
		if (attributes != null) {
			this.order = attributes.getNumber("order");
		}
	}

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	/**
	 * The default operation source, a fallback: a {@link LockOperationSource} bean of the
	 * application (a subclass that resolves keys its own way, say) is used instead.
	 * @param beanFactory for {@code @bean} references in key templates
	 * @return the operation source
	 */
	@Bean
	@Fallback
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LockOperationSource zkLockOperationSource(BeanFactory beanFactory) {
		return new LockOperationSource(new LockPathExpressionEvaluator(beanFactory));
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DistributedLockMethodValidator zkLockMethodValidator(ObjectProvider<LockOperationSource> operationSource,
			ObjectProvider<LeaderOnlyOperationSource> leaderOnlySource) {
		return new DistributedLockMethodValidator(operationSource.getObject(), leaderOnlySource.getObject());
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	DistributedLockAdvisor zkLockAdvisor(ObjectProvider<LockOperationSource> operationSource,
			ObjectProvider<LockTemplate> lockTemplate) {
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(operationSource.getObject(),
				SingletonSupplier.of(lockTemplate::getObject));
		return new DistributedLockAdvisor(interceptor, advisorOrder());
	}

	/**
	 * The default {@code @LeaderOnly} source, a fallback like the lock operation source.
	 * @return the source
	 */
	@Bean
	@Fallback
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LeaderOnlyOperationSource zkLeaderOnlyOperationSource() {
		return new LeaderOnlyOperationSource();
	}

	/**
	 * The {@code @LeaderOnly} advice, ordered one before (outside) the lock advice so that an
	 * instance that does not lead sends no lock request.
	 * @param operationSource finds a method's group
	 * @param leadership the application's leadership, looked up on the first call
	 * @return the advisor
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	DefaultPointcutAdvisor zkLeaderOnlyAdvisor(ObjectProvider<LeaderOnlyOperationSource> operationSource,
			ObjectProvider<Leadership> leadership) {
		LeaderOnlyInterceptor interceptor = new LeaderOnlyInterceptor(operationSource.getObject(),
				SingletonSupplier.of(leadership::getObject));
		DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
				new AnnotationMatchingPointcut(null, LeaderOnly.class, true), interceptor);
		int order = advisorOrder();
		advisor.setOrder((order == Integer.MIN_VALUE) ? order : order - 1);
		return advisor;
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	LeaderGroupsLifecycle zkLeaderGroupsLifecycle(ObjectProvider<LeaderOnlyOperationSource> operationSource,
			ObjectProvider<Leadership> leadership) {
		return new LeaderGroupsLifecycle(operationSource.getObject(), leadership);
	}

	private int advisorOrder() {
		Integer configured = (this.environment != null)
				? this.environment.getProperty(ASPECT_ORDER_PROPERTY, Integer.class) : null;
		return (configured != null) ? configured : this.order;
	}

}
