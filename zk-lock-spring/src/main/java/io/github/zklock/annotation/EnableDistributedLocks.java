package io.github.zklock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

import io.github.zklock.aop.DistributedLockConfigurationSelector;

/**
 * Turns on the {@link DistributedLock @DistributedLock} (and
 * {@link DistributedSemaphore @DistributedSemaphore}) advice in a Spring application without
 * Spring Boot, as {@code @EnableTransactionManagement} does for {@code @Transactional}. Put it on
 * a {@code @Configuration} class that also defines (or imports) a {@link io.github.zklock.LockTemplate}
 * bean; the advice looks the template up on the first locked call.
 *
 * <pre class="code">
 * &#64;Configuration
 * &#64;EnableDistributedLocks
 * class LockConfiguration {
 *
 * 	&#64;Bean(initMethod = "start", destroyMethod = "close")
 * 	CuratorFramework curator() {
 * 		return CuratorFrameworkFactory.newClient("zk1:2181,zk2:2181", new ExponentialBackoffRetry(1000, 3));
 * 	}
 *
 * 	&#64;Bean(destroyMethod = "close")
 * 	CuratorLockRegistry lockRegistry(CuratorFramework curator) {
 * 		return new CuratorLockRegistry(curator, "/locks", 10_000);
 * 	}
 *
 * 	&#64;Bean
 * 	LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
 * 		return new LockTemplate(lockRegistry, Duration.ofSeconds(5));
 * 	}
 *
 * }
 * </pre>
 *
 * <p>It registers: an auto-proxy creator (unless one exists), the advisor with its per-method
 * operation cache and SpEL key evaluator, a start-up validator that fails the context on a
 * malformed {@code @DistributedLock} or {@code @DistributedSemaphore} (naming the method), and,
 * with spring-tx on the class path, a post-processor that adds the
 * {@link io.github.zklock.transaction.LockCommitGuard commit guard} to every
 * {@code ConfigurableTransactionManager} bean. The Spring Boot starter applies it for
 * you; do not add it there unless you want to set {@link #proxyTargetClass()}.
 *
 * @see DistributedLock
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(DistributedLockConfigurationSelector.class)
public @interface EnableDistributedLocks {

	/**
	 * Order of the advisor when neither {@link #order()} nor {@code zk.lock.aspect-order} says
	 * otherwise: outside (lower than) the transaction advisor's default,
	 * {@link Ordered#LOWEST_PRECEDENCE}, so that the lock outlives the transaction.
	 */
	int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * Whether to proxy target classes (CGLIB) rather than their interfaces. {@code true} applies
	 * to every bean the application's auto-proxy creator proxies, as with
	 * {@code @EnableTransactionManagement(proxyTargetClass = true)}.
	 * @return whether to proxy target classes
	 */
	boolean proxyTargetClass() default false;

	/**
	 * Order of the advisor among other advice on the same method: lower runs outside higher. Keep
	 * it lower than the transaction advisor's so that the lock is held until the transaction has
	 * completed. The property {@code zk.lock.aspect-order}, when set in the environment, takes
	 * precedence, so that one property orders the advice with or without Spring Boot.
	 * @return the advisor order
	 */
	int order() default DEFAULT_ORDER;

}
