package io.github.zklock.docs.locks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Service;

import io.github.zklock.LockAssert;
import io.github.zklock.LockContext;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;

/**
 * The guide's first example: a read-modify-write under the WRITE side of a key's read/write lock,
 * and a read under its READ side.
 */
// tag::service[]
@Service
public class StockService {

	private final Map<String, Integer> stock = new ConcurrentHashMap<>();

	private final Map<String, Long> lastToken = new ConcurrentHashMap<>();

	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE, waitTime = "2s")
	public int purchase(String sku, int quantity) {
		LockAssert.assertHeld(); // fails at once if the call bypassed the proxy
		// Read, check, write: no other process runs this for the same sku meanwhile.
		int available = this.stock.getOrDefault(sku, 0);
		if (available < quantity) {
			throw new IllegalStateException("Sold out: " + sku);
		}
		this.stock.put(sku, available - quantity);
		this.lastToken.put(sku, LockContext.require().fencingToken()); // for a store that fences writes
		return available - quantity;
	}

	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.READ)
	public int available(String sku) {
		return this.stock.getOrDefault(sku, 0);
	}

	// end::service[]
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	public void restock(String sku, int quantity) {
		this.stock.merge(sku, quantity, Integer::sum);
	}

	/**
	 * The fencing token of the last purchase of a SKU.
	 * @param sku the SKU
	 * @return the token, or {@code null}
	 */
	public Long lastToken(String sku) {
		return this.lastToken.get(sku);
	}

	// tag::service[]
}
// end::service[]
