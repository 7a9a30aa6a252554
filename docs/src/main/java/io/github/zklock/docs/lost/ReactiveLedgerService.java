package io.github.zklock.docs.lost;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Mono;

import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.reactive.ReactiveLockContext;
import io.github.zklock.transaction.R2dbcLockFence;

/**
 * The guide's reactive fence example: the starter's {@link R2dbcLockFence} on the application's
 * R2DBC ConnectionFactory, advanced in the reactive transaction of the write.
 */
@Service
public class ReactiveLedgerService {

	private final DatabaseClient database;

	private final R2dbcLockFence fence;

	/**
	 * @param database the database
	 * @param fence the starter's fence table ({@code zk.lock.fence.table-name})
	 */
	public ReactiveLedgerService(DatabaseClient database, R2dbcLockFence fence) {
		this.database = database;
		this.fence = fence;
	}

	/**
	 * Post an amount to an account, fenced by the account's lock, without blocking a thread.
	 * @param account the account
	 * @param cents the amount
	 * @return completes once the write committed
	 */
	// tag::reactive-fence[]
	@DistributedLock(path = "/ledger/#{#account}", mode = LockMode.EXCLUSIVE)
	@Transactional
	public Mono<Void> post(String account, long cents) {
		return ReactiveLockContext.current()
			.flatMap(this.fence::advance) // the fence table's row of this grant's lock path
			.then(this.database.sql("INSERT INTO ledger (account, cents) VALUES (:account, :cents)")
				.bind("account", account)
				.bind("cents", cents)
				.then());
	}
	// end::reactive-fence[]

}
