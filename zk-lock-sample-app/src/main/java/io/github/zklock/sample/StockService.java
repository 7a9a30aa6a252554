package io.github.zklock.sample;

import java.time.Duration;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.Assert;

import io.github.zklock.LockContext;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.LockMode;

/**
 * Stock of each SKU, changed under a ZooKeeper lock on {@code /stock/<sku>}.
 *
 * <p>{@link #purchase(String, int)} is a deliberate read-then-write (read the row, compute, write
 * the new value back, record the order), which loses updates and oversells when two callers
 * interleave, in this process or in another instance of the application on the same database. The
 * lock serializes the callers of one SKU across every process connected to the same ZooKeeper;
 * different SKUs do not wait for each other. {@link #purchaseWithoutLock(String, int)} runs the
 * same code without the lock, to show what the lock prevents.
 *
 * <p>Changes take the WRITE side and reads the READ side of one read/write lock per SKU, so that
 * readers share the lock with each other and wait for a writer. (An EXCLUSIVE lock on the same path
 * would be a different recipe with its own znodes: it would not exclude the readers.) The lock
 * advice is ordered outside {@code @Transactional}, so the lock is released only after the
 * transaction has committed or rolled back.
 *
 * <p>Every locked method waits {@code zk.lock.default-wait-time} for the lock and then throws
 * {@link io.github.zklock.LockAcquisitionException} without running; an empty SKU fails with
 * {@link io.github.zklock.InvalidLockPathException}.
 */
@Service
public class StockService {

	private final StockRepository stock;

	private final OrderRepository orders;

	private final String instanceId;

	private final Duration thinkTime;

	/**
	 * Create a service.
	 * @param stock the stock table
	 * @param orders the orders table
	 * @param properties the instance id and the think time of a purchase
	 */
	public StockService(StockRepository stock, OrderRepository orders, SampleProperties properties) {
		this.stock = stock;
		this.orders = orders;
		this.instanceId = properties.getInstanceId();
		this.thinkTime = properties.getPurchaseThinkTime();
	}

	/**
	 * Buy {@code quantity} items of a SKU under the SKU's write lock, and record the order with the
	 * lock's fencing token.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @return the recorded sale
	 * @throws SoldOutException if less than {@code quantity} is in stock (nothing bought)
	 * @throws UnknownSkuException if the SKU has no stock row
	 * @throws IllegalArgumentException if {@code quantity} is less than 1
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	@Transactional
	public Purchase purchase(String sku, int quantity) {
		LockWaitTimer.bodyStarted();
		return sell(sku, quantity, true);
	}

	/**
	 * Buy {@code quantity} items of a SKU like {@link #purchase(String, int)}, but without any lock:
	 * concurrent callers interleave their read and write, lose updates and oversell. For
	 * comparison only. The order is recorded without a fencing token.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @return the recorded sale
	 * @throws SoldOutException if less than {@code quantity} was read as in stock
	 * @throws UnknownSkuException if the SKU has no stock row
	 * @throws IllegalArgumentException if {@code quantity} is less than 1
	 */
	@Transactional
	public Purchase purchaseWithoutLock(String sku, int quantity) {
		LockWaitTimer.bodyStarted();
		return sell(sku, quantity, false);
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
	 * Set the stock of a SKU, adding the SKU if it is new. Orders already recorded are kept.
	 * @param sku the SKU
	 * @param quantity the new stock, at least 0
	 * @throws IllegalArgumentException if {@code quantity} is negative
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	@Transactional
	public void setStock(String sku, int quantity) {
		Assert.isTrue(quantity >= 0, () -> "quantity must not be negative, was " + quantity);
		// Update-else-insert is race-free here: the write lock keeps other writers of this SKU out.
		if (!this.stock.updateQuantity(sku, quantity)) {
			this.stock.insert(sku, quantity);
		}
	}

	private Purchase sell(String sku, int quantity, boolean locked) {
		Assert.isTrue(quantity > 0, () -> "quantity must be at least 1, was " + quantity);
		int available = getStockRow(sku);
		if (available < quantity) {
			throw new SoldOutException(sku, quantity, available);
		}
		thinkAbout(sku);
		int remaining = available - quantity;
		this.stock.updateQuantity(sku, remaining);
		// Asked only for a sale: one ZooKeeper request that a sold-out call does not need.
		Long fencingToken = locked ? LockContext.require().fencingToken() : null;
		long orderId = this.orders.insert(sku, quantity, this.instanceId, fencingToken);
		return new Purchase(orderId, sku, quantity, remaining, fencingToken, this.instanceId);
	}

	private void thinkAbout(String sku) {
		if (this.thinkTime.isZero() || this.thinkTime.isNegative()) {
			return;
		}
		try {
			Thread.sleep(this.thinkTime.toMillis(), this.thinkTime.toNanosPart() % 1_000_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while purchasing '" + sku + "'", ex);
		}
	}

	private int getStockRow(String sku) {
		return this.stock.findQuantity(sku).orElseThrow(() -> new UnknownSkuException(sku));
	}

}
