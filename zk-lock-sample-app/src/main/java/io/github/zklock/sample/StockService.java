package io.github.zklock.sample;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.Assert;

import io.github.zklock.LockAssert;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.transaction.JdbcLockFence;
import io.github.zklock.transaction.StaleFencingTokenException;

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
 * <p>The lock alone cannot stop a <em>zombie</em>: a holder paused (GC, SIGSTOP, a slow call)
 * past its session's expiry still believes it holds the lock when it resumes, while another
 * instance already holds it. So every locked write goes through a store-side fence
 * ({@link JdbcLockFence}, guarded rows): before a purchase reads the stock it will write, it writes
 * the grant's fencing token into the SKU's stock row if it is not lower than the token there, and
 * a lower one is refused with {@link StaleFencingTokenException}, which rolls the purchase back.
 * The fence also locks the row, so a newer holder never reads the stock it writes before a zombie
 * that passed the fence has committed or rolled back. (A sold-out purchase is refused on a plain
 * read first: it writes nothing.) Each locked method also
 * starts with {@link LockAssert#assertHeld()}, which fails a call that bypassed the proxy.
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

	private final Duration prepareTime;

	private final JdbcLockFence fence;

	/**
	 * Create a service.
	 * @param stock the stock table
	 * @param orders the orders table
	 * @param properties the instance id, the think and prepare times of a purchase
	 * @param fence the fence on the stock rows' {@code fencing_token} column
	 */
	public StockService(StockRepository stock, OrderRepository orders, SampleProperties properties,
			JdbcLockFence fence) {
		this.stock = stock;
		this.orders = orders;
		this.instanceId = properties.getInstanceId();
		this.thinkTime = properties.getPurchaseThinkTime();
		this.prepareTime = properties.getPurchasePrepareTime();
		this.fence = fence;
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
	 * @throws StaleFencingTokenException if a newer grant has written the SKU since this grant was
	 * made: this holder is a zombie (nothing bought, the transaction rolls back)
	 * @throws io.github.zklock.LockLostException if the lock is known to be lost before the write
	 * or at commit (nothing bought)
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	@Transactional
	public Purchase purchase(String sku, int quantity) {
		LockAssert.assertHeld();
		LockWaitTimer.bodyStarted();
		Assert.isTrue(quantity > 0, () -> "quantity must be at least 1, was " + quantity);
		// Sold out needs no write, so no fence (nor the fencing token, a ZooKeeper request for a
		// WRITE grant's first use): refused on a plain read. Stock only shrinks under purchases, so
		// this read can be stale only towards "available", which the fenced read below corrects.
		int seen = getStockRow(sku);
		if (seen < quantity) {
			throw new SoldOutException(sku, quantity, seen);
		}
		LockHandle grant = LockContext.require();
		pause(this.prepareTime, sku);
		try {
			this.fence.advance(grant, sku);
		}
		catch (EmptyResultDataAccessException ex) {
			// The fence is the stock row itself: no row, no SKU (no statement failed, the
			// transaction is intact).
			throw new UnknownSkuException(sku);
		}
		return sell(sku, quantity, grant.fencingToken());
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
		Assert.isTrue(quantity > 0, () -> "quantity must be at least 1, was " + quantity);
		return sell(sku, quantity, null);
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
		LockAssert.assertHeld();
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
		LockAssert.assertHeld();
		Assert.isTrue(quantity >= 0, () -> "quantity must not be negative, was " + quantity);
		LockHandle grant = LockContext.require();
		// Update-else-insert is race-free here: the write lock keeps other writers of this SKU out,
		// and the fence keeps out a zombie writer of an existing row.
		if (this.stock.findQuantity(sku).isPresent()) {
			this.fence.advance(grant, sku);
			this.stock.updateQuantity(sku, quantity);
		}
		else {
			this.stock.insert(sku, quantity, grant.fencingToken());
		}
	}

	/**
	 * Sell from the stock row: read, think, write back, record the order.
	 * @param fencingToken the grant's token recorded with the order, {@code null} without a lock
	 */
	private Purchase sell(String sku, int quantity, @Nullable Long fencingToken) {
		int available = getStockRow(sku);
		if (available < quantity) {
			throw new SoldOutException(sku, quantity, available);
		}
		pause(this.thinkTime, sku);
		int remaining = available - quantity;
		this.stock.updateQuantity(sku, remaining);
		long orderId = this.orders.insert(sku, quantity, this.instanceId, fencingToken);
		return new Purchase(orderId, sku, quantity, remaining, fencingToken, this.instanceId);
	}

	private static void pause(Duration time, String sku) {
		if (time.isZero() || time.isNegative()) {
			return;
		}
		try {
			Thread.sleep(time.toMillis(), time.toNanosPart() % 1_000_000);
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
