package io.github.zklock.transaction;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;

/**
 * Adds a {@link LockCommitGuard} to every {@link ConfigurableTransactionManager} bean (every
 * transaction manager of Spring Framework's own) that has none yet, so that a transaction whose
 * lock was lost rolls back instead of committing, whoever defined the transaction manager.
 * Managers that are not {@code ConfigurableTransactionManager} need
 * {@code addListener(new LockCommitGuard())}, or the guard's check in their own code.
 */
public class LockCommitGuardPostProcessor implements BeanPostProcessor {

	private final LockCommitGuard guard = new LockCommitGuard();

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof ConfigurableTransactionManager transactionManager && transactionManager
			.getTransactionExecutionListeners()
			.stream()
			.noneMatch(LockCommitGuard.class::isInstance)) {
			transactionManager.addListener(this.guard);
		}
		return bean;
	}

}
