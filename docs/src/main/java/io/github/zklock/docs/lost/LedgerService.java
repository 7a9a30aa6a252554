package io.github.zklock.docs.lost;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockContext;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.transaction.JdbcLockFence;

/**
 * The guide's fence-table example: the starter's fence keeps the highest token per lock path in
 * its own table, so the write needs no column of its own.
 */
@Service
public class LedgerService {

	private final JdbcClient jdbc;

	private final JdbcLockFence fence;

	/**
	 * @param jdbc the database
	 * @param fence the starter's fence table ({@code zk.lock.fence.table-name})
	 */
	public LedgerService(JdbcClient jdbc, JdbcLockFence fence) {
		this.jdbc = jdbc;
		this.fence = fence;
	}

	/**
	 * Post an amount to an account, fenced by the account's lock.
	 * @param account the account
	 * @param cents the amount
	 */
	// tag::fence-table[]
	@DistributedLock(path = "/ledger/#{#account}", mode = LockMode.EXCLUSIVE)
	@Transactional
	public void post(String account, long cents) {
		this.fence.advance(LockContext.require()); // the fence table's row of this grant's lock path
		this.jdbc.sql("INSERT INTO ledger (account, cents) VALUES (?, ?)").params(account, cents).update();
	}
	// end::fence-table[]

}
