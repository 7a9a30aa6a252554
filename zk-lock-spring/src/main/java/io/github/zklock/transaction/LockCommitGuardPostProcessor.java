package io.github.zklock.transaction;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Adds a {@link LockCommitGuard} to every {@link ConfigurableTransactionManager} bean (every
 * transaction manager of Spring Framework's own) that has none yet, so that a transaction whose
 * lock was lost rolls back instead of committing, whoever defined the transaction manager.
 * Managers that are not {@code ConfigurableTransactionManager} need
 * {@code addListener(new LockCommitGuard())}, or the guard's check in their own code.
 *
 * <p>With Reactor on the class path, every {@link ReactiveTransactionManager} bean is also
 * replaced by a proxy of its interfaces that guards the commits of reactive transactions run
 * inside a locked {@code Mono} or {@code Flux} (see {@link ReactiveLockCommitGuard}, and its
 * limits: the bean is then no longer found by its class).
 */
public class LockCommitGuardPostProcessor implements BeanPostProcessor {

	private static final boolean reactorPresent = ClassUtils.isPresent("reactor.core.publisher.Mono",
			LockCommitGuardPostProcessor.class.getClassLoader());

	private final LockCommitGuard guard = new LockCommitGuard();

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof ConfigurableTransactionManager transactionManager && transactionManager
			.getTransactionExecutionListeners()
			.stream()
			.noneMatch(LockCommitGuard.class::isInstance)) {
			transactionManager.addListener(this.guard);
		}
		if (reactorPresent && bean instanceof ReactiveTransactionManager reactiveTransactionManager) {
			// Only here is the Reactor-based guard loaded.
			return ReactiveLockCommitGuard.guard(reactiveTransactionManager);
		}
		return bean;
	}

}
