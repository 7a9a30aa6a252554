package io.github.zklock.transaction;

import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.transaction.ReactiveTransaction;
import org.springframework.transaction.ReactiveTransactionManager;
import reactor.core.publisher.Mono;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.reactive.ReactiveLockContext;

/**
 * The commit guard of reactive transactions ({@code TransactionalOperator}, {@code @Transactional}
 * on a method returning {@code Mono} or {@code Flux}): a transaction committed inside the
 * {@code Mono} or {@code Flux} of a {@code @DistributedLock} method is rolled back instead when a
 * grant of the subscriber's Reactor context ({@link ReactiveLockContext#held(reactor.util.context.ContextView)})
 * is in doubt or lost, and the commit fails with {@link LockLostException}.
 *
 * <p>Why a proxy: {@link LockCommitGuard} is a {@code TransactionExecutionListener}, called
 * without the Reactor context, and {@code AbstractReactiveTransactionManager.commit} is final. So
 * the manager is wrapped in a JDK proxy of its interfaces ({@link #guard}) whose
 * {@code commit(ReactiveTransaction)} reads the context of its subscriber: when every grant there
 * is held it commits through the manager; otherwise it has the manager roll the transaction back
 * (releasing its connection as for any rollback) and fails with the exception of
 * {@link LockHandle#checkHeld()}. Every other method goes to the manager unchanged.
 *
 * <p>{@code @EnableDistributedLocks}, and so the Spring Boot starter, wraps every
 * {@code ReactiveTransactionManager} bean ({@link LockCommitGuardPostProcessor}) when Reactor is
 * on the class path. Limits:
 * <ul>
 * <li>The bean becomes the proxy: it is found by {@code ReactiveTransactionManager},
 * {@code TransactionManager}, {@code ConfigurableTransactionManager} and its other interfaces, but
 * no longer by its class: injecting {@code R2dbcTransactionManager} itself fails, and a manager
 * created outside the container is not guarded unless wrapped with {@link #guard}.</li>
 * <li>A participating (inner) transaction's commit is checked too; its rollback marks the outer
 * transaction rollback-only, as Spring does for a failed participant.</li>
 * <li>The window between the check and the database commit remains, as for
 * {@link LockCommitGuard}: only a fencing token closes it.</li>
 * </ul>
 */
public final class ReactiveLockCommitGuard implements MethodInterceptor {

	private ReactiveLockCommitGuard() {
	}

	/**
	 * Return a manager that rolls back instead of committing when a lock of the committing
	 * subscriber's context is no longer held.
	 * @param manager the reactive transaction manager
	 * @return a JDK proxy of the manager's interfaces, or the manager itself if it is already guarded
	 */
	public static ReactiveTransactionManager guard(ReactiveTransactionManager manager) {
		if (isGuarded(manager)) {
			return manager;
		}
		ProxyFactory factory = new ProxyFactory(manager);
		factory.addAdvice(new ReactiveLockCommitGuard());
		return (ReactiveTransactionManager) factory.getProxy(manager.getClass().getClassLoader());
	}

	/**
	 * Return whether a manager is guarded by {@link #guard}.
	 * @param manager the manager
	 * @return whether it is a proxy with this guard
	 */
	public static boolean isGuarded(Object manager) {
		if (manager instanceof Advised advised) {
			for (org.springframework.aop.Advisor advisor : advised.getAdvisors()) {
				if (advisor.getAdvice() instanceof ReactiveLockCommitGuard) {
					return true;
				}
			}
		}
		return false;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Method method = invocation.getMethod();
		if (!method.getName().equals("commit") || method.getParameterCount() != 1
				|| method.getParameterTypes()[0] != ReactiveTransaction.class) {
			return invocation.proceed();
		}
		ReactiveTransactionManager manager = (ReactiveTransactionManager) invocation.getThis();
		ReactiveTransaction transaction = (ReactiveTransaction) invocation.getArguments()[0];
		return Mono.deferContextual((context) -> {
			for (LockHandle handle : ReactiveLockContext.held(context)) {
				try {
					handle.checkHeld();
				}
				catch (RuntimeException ex) {
					// Lost or in doubt (or released early): roll back, then fail the commit with why.
					return manager.rollback(transaction).then(Mono.<Void>error(ex));
				}
			}
			return manager.commit(transaction);
		});
	}

}
