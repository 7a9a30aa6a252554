package io.github.zklock.transaction;

import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;

/**
 * Rolls a transaction back instead of committing it when a lock the committing thread runs under
 * is no longer held: just before commit it checks every grant of {@link LockContext#held()} and
 * throws {@link LockLostException} for one that is in doubt or lost, which makes the transaction
 * manager roll back and rethrow.
 *
 * <p>{@code @EnableDistributedLocks}, and so the Spring Boot starter, adds it to every
 * {@code ConfigurableTransactionManager} bean ({@link LockCommitGuardPostProcessor}); add it
 * yourself ({@code addListener}) to a transaction manager that is not a bean.
 *
 * <p>The window it leaves: the check and the database commit are two steps, so a lock can still
 * be lost between them (a session that expires in those milliseconds, a long GC pause, a
 * connection cut that Curator has not noticed yet). Only a fencing token closes that window: the
 * store itself rejects a write whose token is lower than the highest it has accepted for the
 * resource (see {@link LockHandle#fencingToken()}).
 */
public class LockCommitGuard implements TransactionExecutionListener {

	@Override
	public void beforeCommit(TransactionExecution transaction) {
		for (LockHandle handle : LockContext.held()) {
			handle.checkHeld();
		}
	}

}
