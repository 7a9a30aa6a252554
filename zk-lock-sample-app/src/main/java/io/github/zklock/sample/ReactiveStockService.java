package io.github.zklock.sample;

import java.time.Duration;

import io.r2dbc.spi.ConnectionFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.reactive.ReactiveLockContext;
import io.github.zklock.transaction.R2dbcLockFence;
import io.github.zklock.transaction.StaleFencingTokenException;

/**
 * The purchase of {@link StockService#purchase(String, int)} as a {@code Mono}, on R2DBC: the same
 * read-then-write of the same {@code stock} row and {@code orders} table, under the same WRITE lock
 * ({@code /stock/<sku>}), fenced by the same column. So the two purchases of one SKU exclude each
 * other, in one instance and across instances (a synchronous and an asynchronous grant of one key
 * exclude each other), and a zombie of either kind is refused by the row.
 *
 * <p>{@code @DistributedLock} on a method returning {@code Mono}: nothing happens on assembly; each
 * subscription waits for its own grant without parking a thread, then invokes the method and
 * subscribes to the {@code Mono} it returns with the grant in the Reactor context
 * ({@link ReactiveLockContext}), and releases the grant when that {@code Mono} ends. A grant lost
 * meanwhile cancels it (the transaction rolls back) and the purchase fails with
 * {@link io.github.zklock.LockLostException}. The purchase runs in a reactive transaction
 * ({@link TransactionalOperator}) inside the lock, and its first write is the store-side fence
 * ({@link R2dbcLockFence} on the stock row's {@code fencing_token}): a grant whose token is lower
 * than the row's fails with {@link StaleFencingTokenException} and rolls back. A sold-out purchase
 * is refused on a plain read first, as the JDBC one is.
 *
 * <p>Threads: r2dbc-h2 runs each statement on the thread that subscribes (it drives the H2 engine,
 * or its TCP protocol, behind a reactive API), so the transaction is subscribed to on
 * {@link Schedulers#boundedElastic()}, not on the lock's grant thread; r2dbc-postgresql does not
 * block. The think and prepare times are {@link Mono#delay delays}, which park no thread.
 */
@Service
public class ReactiveStockService {

	private final DatabaseClient database;

	private final TransactionalOperator transactions;

	private final R2dbcLockFence fence;

	private final String instanceId;

	private final Duration thinkTime;

	private final Duration prepareTime;

	/**
	 * Create a service.
	 * @param connectionFactory the database of the stock, the one of the application's DataSource
	 * @param transactions the reactive transactions on it
	 * @param fence the fence on the stock rows' {@code fencing_token} column, on it
	 * @param properties the instance id, the think and prepare times of a purchase
	 */
	public ReactiveStockService(
			@Qualifier(ReactiveStockConfiguration.CONNECTION_FACTORY) ConnectionFactory connectionFactory,
			TransactionalOperator transactions, R2dbcLockFence fence, SampleProperties properties) {
		this.database = DatabaseClient.create(connectionFactory);
		this.transactions = transactions;
		this.fence = fence;
		this.instanceId = properties.getInstanceId();
		this.thinkTime = properties.getPurchaseThinkTime();
		this.prepareTime = properties.getPurchasePrepareTime();
	}

	/**
	 * Buy {@code quantity} items of a SKU under the SKU's write lock, and record the order with the
	 * lock's fencing token, as {@link StockService#purchase(String, int)} does.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @return the recorded sale, once committed; or an error: {@link SoldOutException} if less than
	 * {@code quantity} is in stock, {@link UnknownSkuException} if the SKU has no stock row,
	 * {@link StaleFencingTokenException} if a newer grant has written the SKU since this grant was
	 * made (a zombie: rolled back), {@link io.github.zklock.LockLostException} if the lock was lost
	 * while the purchase ran or at commit (rolled back),
	 * {@link io.github.zklock.LockAcquisitionException} if the lock was not granted within
	 * {@code zk.lock.default-wait-time} (not run); nothing is bought on any error
	 * @throws IllegalArgumentException if {@code quantity} is less than 1 (as the {@code Mono}'s
	 * error, once granted)
	 */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE)
	public Mono<Purchase> purchase(String sku, int quantity) {
		if (quantity < 1) {
			throw new IllegalArgumentException("quantity must be at least 1, was " + quantity);
		}
		return Mono.deferContextual((context) -> {
			ReactiveLockWait.bodyStarted(context);
			LockHandle grant = ReactiveLockContext.current(context);
			if (grant == null) {
				return Mono.error(new IllegalStateException(
						"The reactive purchase of '" + sku + "' runs without its lock: called past the proxy?"));
			}
			return this.transactions.transactional(purchase(grant, sku, quantity))
				.subscribeOn(Schedulers.boundedElastic());
		});
	}

	private Mono<Purchase> purchase(LockHandle grant, String sku, int quantity) {
		// Sold out needs no write, so no fence (and no fencing token): refused on a plain read. Stock
		// only shrinks under purchases, so this read can be stale only towards "available", which
		// the read after the fence corrects.
		return stock(sku)
			.flatMap((seen) -> (seen < quantity) ? Mono.<Void>error(new SoldOutException(sku, quantity, seen))
					: pause(this.prepareTime))
			// A WRITE grant's first token read asks ZooKeeper: off any event loop, as the fence does.
			.then(Mono.fromCallable(grant::fencingToken).subscribeOn(Schedulers.boundedElastic()))
			.flatMap((token) -> this.fence.advance(grant, sku)
				// The fence is the stock row itself: no row, no SKU.
				.onErrorMap(EmptyResultDataAccessException.class, (ex) -> new UnknownSkuException(sku))
				.then(sell(sku, quantity, token)));
	}

	/** Sell from the stock row: read, think, write back, record the order. */
	private Mono<Purchase> sell(String sku, int quantity, long fencingToken) {
		return stock(sku).flatMap((available) -> {
			if (available < quantity) {
				return Mono.error(new SoldOutException(sku, quantity, available));
			}
			int remaining = available - quantity;
			return pause(this.thinkTime)
				.then(this.database.sql("UPDATE stock SET quantity = :quantity WHERE sku = :sku")
					.bind("quantity", remaining)
					.bind("sku", sku)
					.fetch()
					.rowsUpdated())
				.then(this.database
					.sql("INSERT INTO orders (sku, quantity, instance_id, fencing_token) "
							+ "VALUES (:sku, :quantity, :instanceId, :fencingToken)")
					.bind("sku", sku)
					.bind("quantity", quantity)
					.bind("instanceId", this.instanceId)
					.bind("fencingToken", fencingToken)
					.filter((statement) -> statement.returnGeneratedValues("id"))
					.map((row) -> row.get(0, Long.class))
					.one())
				.map((orderId) -> new Purchase(orderId, sku, quantity, remaining, fencingToken, this.instanceId));
		});
	}

	private Mono<Integer> stock(String sku) {
		return this.database.sql("SELECT quantity FROM stock WHERE sku = :sku")
			.bind("sku", sku)
			.map((row) -> row.get(0, Integer.class))
			.one()
			.switchIfEmpty(Mono.error(() -> new UnknownSkuException(sku)));
	}

	private static Mono<Void> pause(Duration time) {
		return (time.isZero() || time.isNegative()) ? Mono.empty() : Mono.delay(time).then();
	}

}
