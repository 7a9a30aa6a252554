package io.github.zklock.sample;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.Assert;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LockMode;

/**
 * Stock of each SKU, changed under a ZooKeeper lock on {@code /stock/<sku>}.
 *
 * <p>{@link #purchase(String, int)} is a deliberate read-then-write (read the row, compute, write
 * the new value back), which loses updates and oversells when two callers interleave, in this
 * process or in another instance of the application on the same database. The lock serializes the
 * callers of one SKU across every process connected to the same ZooKeeper; different SKUs do not
 * wait for each other.
 *
 * <p>Changes take the WRITE side and reads the READ side of one read/write lock per SKU, so that
 * readers share the lock with each other and wait for a writer. (An EXCLUSIVE lock on the same path
 * would be a different recipe with its own znodes: it would not exclude the readers.) The lock
 * advice is ordered outside {@code @Transactional}, so the lock is released only after the
 * transaction has committed or rolled back.
 *
 * <p>Every method waits {@code zk.lock.default-wait-time} for the lock and then throws
 * {@link io.github.zklock.LockAcquisitionException} without running; an empty SKU fails with
 * {@link io.github.zklock.InvalidLockPathException}.
 */
@Service
public class StockService {

	private final StockRepository repository;

	/**
	 * Create a service.
	 * @param repository the stock table
	 */
	public StockService(StockRepository repository) {
		this.repository = repository;
	}

	/**
	 * Buy {@code quantity} items of a SKU.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @return the stock left after the purchase
	 * @throws SoldOutException if less than {@code quantity} is in stock (nothing bought)
	 * @throws UnknownSkuException if the SKU has no stock row
	 * @throws IllegalArgumentException if {@code quantity} is less than 1
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	@Transactional
	public int purchase(String sku, int quantity) {
		Assert.isTrue(quantity > 0, () -> "quantity must be at least 1, was " + quantity);
		int available = getStockRow(sku);
		if (available < quantity) {
			throw new SoldOutException(sku, quantity, available);
		}
		int remaining = available - quantity;
		this.repository.updateQuantity(sku, remaining);
		return remaining;
	}

	/**
	 * Return the stock of a SKU. Shares the lock with other readers and waits for a running
	 * purchase, so it never sees a purchase half done across processes.
	 * @param sku the SKU
	 * @return the quantity in stock
	 * @throws UnknownSkuException if the SKU has no stock row
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.READ)
	@Transactional(readOnly = true)
	public int getStock(String sku) {
		return getStockRow(sku);
	}

	/**
	 * Set the stock of a SKU, adding the SKU if it is new.
	 * @param sku the SKU
	 * @param quantity the new stock, at least 0
	 * @throws IllegalArgumentException if {@code quantity} is negative
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	@Transactional
	public void setStock(String sku, int quantity) {
		Assert.isTrue(quantity >= 0, () -> "quantity must not be negative, was " + quantity);
		// Update-else-insert is race-free here: the write lock keeps other writers of this SKU out.
		if (!this.repository.updateQuantity(sku, quantity)) {
			this.repository.insert(sku, quantity);
		}
	}

	private int getStockRow(String sku) {
		return this.repository.findQuantity(sku).orElseThrow(() -> new UnknownSkuException(sku));
	}

}
