package io.github.zklock.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.sample.demo.SalesAudit;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;
import io.github.zklock.transaction.JdbcLockFence;
import io.github.zklock.transaction.StaleFencingTokenException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link StockService} through its Spring proxy: the {@code @DistributedLock} advice on
 * an embedded ZooKeeper ({@link AutoConfigureEmbeddedZooKeeper}, whatever the application's
 * configuration says), and the transaction on H2. Local hand-off is on (the default): a purchase
 * handed the lock by another thread of the application records the same fencing token as the sale
 * before, which the demo's audit accepts.
 */
@SpringBootTest(webEnvironment = WebEnvironment.NONE, properties = "sample.instance-id=test-instance")
@AutoConfigureEmbeddedZooKeeper
class StockServiceTests {

	private static final int STOCK = 50;

	private static final int THREADS = 8;

	private static final int PURCHASES_PER_THREAD = 10;

	@Autowired
	private StockService stockService;

	@Autowired
	private JdbcClient jdbcClient;

	@Autowired
	private LockTemplate lockTemplate;

	@Autowired
	private CuratorLockRegistry lockRegistry;

	@Autowired
	private DataSource dataSource;

	@Test
	void concurrentPurchasesNeverOversell() throws Exception {
		String sku = "flash-sale";
		this.stockService.setStock(sku, STOCK);
		Queue<Integer> remainders = new ConcurrentLinkedQueue<>();
		Queue<SoldOutException> soldOut = new ConcurrentLinkedQueue<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		List<Future<?>> buyers = new ArrayList<>();
		try {
			for (int i = 0; i < THREADS; i++) {
				buyers.add(executor.submit(() -> {
					assertThat(start.await(30, TimeUnit.SECONDS)).isTrue();
					for (int j = 0; j < PURCHASES_PER_THREAD; j++) {
						try {
							remainders.add(this.stockService.purchase(sku, 1).remaining());
						}
						catch (SoldOutException ex) {
							soldOut.add(ex);
						}
					}
					return null;
				}));
			}
			start.countDown();
			executor.shutdown();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("buyers finished").isTrue();
			for (Future<?> buyer : buyers) {
				// Rethrows anything but SoldOutException, such as a LockAcquisitionException.
				buyer.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		// Each successful purchase saw a distinct stock level: no two buyers read the same row value.
		assertThat(remainders).hasSize(STOCK)
			.containsExactlyInAnyOrderElementsOf(IntStream.range(0, STOCK).boxed().toList());
		assertThat(soldOut).hasSize(THREADS * PURCHASES_PER_THREAD - STOCK)
			.allSatisfy((ex) -> assertThat(ex.getAvailable()).isZero());
		assertThat(this.stockService.getStock(sku)).isZero();
		// One order per sale, none under an earlier lock grant than the one before: the tokens never
		// decrease, and are equal where a grant was handed over locally to the next waiting thread.
		List<Long> tokens = this.jdbcClient.sql("SELECT fencing_token FROM orders WHERE sku = :sku ORDER BY id")
			.param("sku", sku)
			.query(Long.class)
			.list();
		assertThat(tokens).hasSize(STOCK).doesNotContainNull().isSorted();
	}

	@Test
	void purchaseRecordsTheOrderWithTheFencingTokenOfItsLock() {
		this.stockService.setStock("kiwi", 5);
		Purchase first = this.stockService.purchase("kiwi", 2);
		Purchase second = this.stockService.purchase("kiwi", 1);
		assertThat(first.remaining()).isEqualTo(3);
		assertThat(first.instanceId()).isEqualTo("test-instance");
		assertThat(first.fencingToken()).isPositive();
		assertThat(second.orderId()).isGreaterThan(first.orderId());
		// No thread waited when the first grant was released: the second has a znode of its own.
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(this.jdbcClient
			.sql("SELECT quantity, instance_id, fencing_token FROM orders WHERE id = :id")
			.param("id", first.orderId())
			.query((rs, row) -> List.of(rs.getInt(1), rs.getString(2), rs.getLong(3)))
			.single()).containsExactly(2, "test-instance", first.fencingToken());
	}

	@Test
	void purchaseHandedTheLockOverLocallyRecordsTheTokenOfTheSaleBefore() throws Exception {
		String sku = "handed-over";
		this.stockService.setStock(sku, 5);
		SalesAudit audit = new SalesAudit(this.dataSource.unwrap(HikariDataSource.class).getJdbcUrl(), "sa", "");
		long mark = audit.mark();
		AtomicReference<Thread> waiter = new AtomicReference<>();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Purchase first;
			Future<Purchase> second;
			try (LockHandle held = this.lockTemplate.acquire("/stock/" + sku, LockMode.WRITE, Duration.ofSeconds(10))) {
				// A re-entry of this thread's grant: the same znode, so the same token.
				first = this.stockService.purchase(sku, 1);
				second = executor.submit(() -> {
					waiter.set(Thread.currentThread());
					return this.stockService.purchase(sku, 1);
				});
				// Queued behind this thread for its turn on the key, not in ZooKeeper.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> waiter.get() != null && waiter.get().getState() == Thread.State.TIMED_WAITING
							&& new CuratorLockAdmin(this.lockRegistry).describeWaitingLocks()
								.stream()
								.anyMatch((waiting) -> waiting.path().endsWith("/stock/" + sku)));
				assertThat(first.fencingToken()).isEqualTo(held.fencingToken());
			}
			Purchase handedOver = second.get(10, TimeUnit.SECONDS);
			assertThat(handedOver.orderId()).isGreaterThan(first.orderId());
			assertThat(handedOver.fencingToken()).isEqualTo(first.fencingToken());
		}
		finally {
			executor.shutdownNow();
		}
		SalesAudit.Sales sales = audit.read(sku, mark);
		assertThat(sales.orders()).isEqualTo(2);
		assertThat(sales.fencingTokensNonDecreasing()).isTrue();
		assertThat(sales.ordersSharingPreviousToken()).isOne();
	}

	@Test
	void purchaseAdvancesTheStockRowsFenceToItsToken() {
		this.stockService.setStock("fig", 5);
		long afterSet = fence("fig");
		assertThat(afterSet).as("the token of the grant that added the row").isPositive();
		Purchase purchase = this.stockService.purchase("fig", 1);
		assertThat(fence("fig")).isEqualTo(purchase.fencingToken()).isGreaterThan(afterSet);
	}

	@Test
	void purchaseWithATokenLowerThanTheFenceIsRefusedAndRolledBack() {
		this.stockService.setStock("yuzu", 5);
		// As if a newer grant (of another instance, after this one's session expired) had written.
		this.jdbcClient.sql("UPDATE stock SET fencing_token = :token WHERE sku = 'yuzu'")
			.param("token", Long.MAX_VALUE)
			.update();
		assertThatExceptionOfType(StaleFencingTokenException.class).isThrownBy(() -> this.stockService.purchase("yuzu", 1))
			.satisfies((ex) -> assertThat(ex.getFencingToken()).isLessThan(Long.MAX_VALUE));
		assertThat(this.stockService.getStock("yuzu")).isEqualTo(5);
		assertThat(this.jdbcClient.sql("SELECT COUNT(*) FROM orders WHERE sku = 'yuzu'").query(Long.class).single())
			.isZero();
		assertThat(fence("yuzu")).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void lockedMethodsCalledWithoutTheirProxyFailInsteadOfRunningUnlocked() {
		StockService unproxied = new StockService(new StockRepository(this.jdbcClient), new OrderRepository(this.jdbcClient),
				new SampleProperties(), JdbcLockFence.guardedRows(this.dataSource, "stock", "sku", "fencing_token"));
		assertThatIllegalStateException().isThrownBy(() -> unproxied.purchase("kiwi", 1))
			.withMessageContaining("bypasses the proxy");
		assertThatIllegalStateException().isThrownBy(() -> unproxied.setStock("kiwi", 1));
		assertThatIllegalStateException().isThrownBy(() -> unproxied.getStock("kiwi"));
	}

	private long fence(String sku) {
		return this.jdbcClient.sql("SELECT fencing_token FROM stock WHERE sku = :sku")
			.param("sku", sku)
			.query(Long.class)
			.single();
	}

	@Test
	void purchaseWithoutLockRunsTheSameCodeAndRecordsNoToken() {
		this.stockService.setStock("lime", 2);
		Purchase purchase = this.stockService.purchaseWithoutLock("lime", 2);
		assertThat(purchase.remaining()).isZero();
		assertThat(purchase.fencingToken()).isNull();
		assertThat(this.jdbcClient.sql("SELECT COUNT(*) FROM orders WHERE id = :id AND fencing_token IS NULL")
			.param("id", purchase.orderId())
			.query(Long.class)
			.single()).isOne();
		assertThatExceptionOfType(SoldOutException.class)
			.isThrownBy(() -> this.stockService.purchaseWithoutLock("lime", 1));
	}

	@Test
	void soldOutPurchaseRecordsNoOrder() {
		this.stockService.setStock("mango", 0);
		assertThatExceptionOfType(SoldOutException.class).isThrownBy(() -> this.stockService.purchase("mango", 1));
		assertThat(this.jdbcClient.sql("SELECT COUNT(*) FROM orders WHERE sku = 'mango'").query(Long.class).single())
			.isZero();
	}

	@Test
	void purchaseOfMoreThanInStockThrowsSoldOutAndKeepsTheStock() {
		this.stockService.setStock("last-one", 1);
		assertThatExceptionOfType(SoldOutException.class).isThrownBy(() -> this.stockService.purchase("last-one", 2))
			.satisfies((ex) -> {
				assertThat(ex.getRequested()).isEqualTo(2);
				assertThat(ex.getAvailable()).isEqualTo(1);
			});
		assertThat(this.stockService.getStock("last-one")).isEqualTo(1);
	}

	@Test
	void emptySkuIsAnInvalidLockPath() {
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> this.stockService.purchase("", 1));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> this.stockService.getStock(""));
	}

	@Test
	void skuWithSlashStaysOneSku() {
		this.stockService.setStock("a/b", 4);
		this.stockService.setStock("a", 1);
		assertThat(this.stockService.purchase("a/b", 1).remaining()).isEqualTo(3);
		assertThat(this.stockService.getStock("a")).isEqualTo(1);
	}

}
