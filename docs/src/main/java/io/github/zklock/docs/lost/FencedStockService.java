package io.github.zklock.docs.lost;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockContext;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.transaction.JdbcLockFence;

/**
 * The guide's store-checked fencing: the stock row keeps the highest fencing token it has seen.
 */
@Service
public class FencedStockService {

	private final JdbcClient jdbc;

	private final JdbcLockFence fence;

	/**
	 * @param jdbc the database
	 * @param fence the fence on the stock rows' {@code fencing_token} column
	 */
	public FencedStockService(JdbcClient jdbc, JdbcLockFence fence) {
		this.jdbc = jdbc;
		this.fence = fence;
	}

	// tag::fence[]
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	@Transactional
	public int purchase(String sku, int quantity) {
		this.fence.advance(LockContext.require(), sku); // first: then read, compute, write
		int available = this.jdbc.sql("SELECT quantity FROM stock WHERE sku = ?").param(sku).query(Integer.class).single();
		this.jdbc.sql("UPDATE stock SET quantity = ? WHERE sku = ?").params(available - quantity, sku).update();
		return available - quantity;
	}
	// end::fence[]

}
