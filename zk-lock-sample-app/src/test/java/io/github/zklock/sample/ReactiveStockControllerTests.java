package io.github.zklock.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;
import io.github.zklock.transaction.R2dbcLockFence;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ReactiveStockController} and {@link ReactiveStockService}, through the whole
 * application on its embedded ZooKeeper and H2 database, which R2DBC reaches through the
 * ConnectionFactory of {@link ReactiveStockConfiguration}. The same configuration as
 * {@code StockControllerTests}, so that both run in one application context.
 */
@SpringBootTest(properties = { "zk.lock.default-wait-time=1s", "sample.instance-id=controller-tests" })
@AutoConfigureEmbeddedZooKeeper
@AutoConfigureMockMvc
class ReactiveStockControllerTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private LockTemplate lockTemplate;

	@Autowired
	private JdbcClient jdbcClient;

	@Autowired
	private R2dbcLockFence fence;

	@Test
	void fenceIsTheSamplesOwnOnTheStockRows() {
		assertThat(this.fence.isFenceTable()).isFalse();
		assertThat(this.fence.getTableName()).isEqualTo("stock");
	}

	@Test
	void purchaseAnswersWithTheSaleItsTokenAndTheLockWait() throws Exception {
		setStock("reactive-apple", 5);
		MvcTestResult first = this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-apple")
			.param("quantity", "2")
			.exchange();
		assertThat(first).hasStatusOk()
			.hasContentType(MediaType.APPLICATION_JSON)
			.bodyJson()
			.isLenientlyEqualTo("{\"sku\": \"reactive-apple\", \"purchased\": 2, \"remaining\": 3, "
					+ "\"instance\": \"controller-tests\"}");
		assertThat(first).headers().containsHeader(StockController.LOCK_WAIT_HEADER);
		String wait = first.getResponse().getHeader(StockController.LOCK_WAIT_HEADER);
		assertThat(wait).matches("\\d+\\.\\d{3}");
		assertThat(Double.parseDouble(wait)).isLessThan(1000);
		long token = longAt(first, "$.fencingToken");
		assertThat(token).isPositive();
		// Recorded as the blocking purchase records it, and the row's fence moved to the token.
		assertThat(this.jdbcClient.sql("SELECT fencing_token FROM orders WHERE id = :id")
			.param("id", longAt(first, "$.orderId"))
			.query(Long.class)
			.single()).isEqualTo(token);
		assertThat(this.jdbcClient.sql("SELECT fencing_token FROM stock WHERE sku = 'reactive-apple'")
			.query(Long.class)
			.single()).isEqualTo(token);
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "reactive-apple")).bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(3);
	}

	@Test
	void reactiveAndBlockingPurchasesSellFromOneStockWithRisingTokens() throws Exception {
		setStock("reactive-pear", 3);
		MvcTestResult blocking = this.mvc.post().uri("/api/stock/{sku}/purchase", "reactive-pear").exchange();
		MvcTestResult reactive = this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-pear").exchange();
		MvcTestResult blockingAgain = this.mvc.post().uri("/api/stock/{sku}/purchase", "reactive-pear").exchange();
		assertThat(longAt(blocking, "$.remaining")).isEqualTo(2);
		assertThat(longAt(reactive, "$.remaining")).isEqualTo(1);
		assertThat(longAt(blockingAgain, "$.remaining")).isZero();
		// One lock per SKU for both kinds: each grant a new znode, each token higher.
		assertThat(longAt(reactive, "$.fencingToken")).isGreaterThan(longAt(blocking, "$.fencingToken"));
		assertThat(longAt(blockingAgain, "$.fencingToken")).isGreaterThan(longAt(reactive, "$.fencingToken"));
		assertThat(this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-pear"))
			.hasStatus(HttpStatus.CONFLICT);
	}

	@Test
	void soldOutIsConflictWithTheLockWaitAndChangesNothing() {
		setStock("reactive-cherry", 1);
		MvcTestResult soldOut = this.mvc.post()
			.uri("/api/reactive/stock/{sku}/purchase", "reactive-cherry")
			.param("quantity", "2")
			.exchange();
		assertThat(soldOut).headers().containsHeader(StockController.LOCK_WAIT_HEADER);
		assertThat(soldOut).hasStatus(HttpStatus.CONFLICT)
			.hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
			.bodyJson()
			.isLenientlyEqualTo("{\"status\": 409, \"title\": \"Sold out\", \"sku\": \"reactive-cherry\", "
					+ "\"requested\": 2, \"available\": 1}");
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "reactive-cherry")).bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(1);
	}

	@Test
	void unknownSkuIsNotFoundAndBadRequestsAreRefusedBeforeTheLock() {
		assertThat(this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-unknown"))
			.hasStatus(HttpStatus.NOT_FOUND)
			.bodyJson()
			.extractingPath("$.sku")
			.isEqualTo("reactive-unknown");
		assertThat(this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "-bad")).hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-unknown").param("quantity", "0"))
			.hasStatus(HttpStatus.BAD_REQUEST);
	}

	@Test
	void purchaseRefusedByTheFenceIsConflictWithTheReasonAndRollsBack() {
		setStock("reactive-quince", 5);
		// As if a newer grant had written the row: this application's token is now stale.
		this.jdbcClient.sql("UPDATE stock SET fencing_token = :token WHERE sku = 'reactive-quince'")
			.param("token", Long.MAX_VALUE)
			.update();
		long orders = orders("reactive-quince");
		assertThat(this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-quince"))
			.hasStatus(HttpStatus.CONFLICT)
			.hasHeader(StockExceptionHandler.LOCK_LOST_HEADER, "stale-fencing-token")
			.bodyJson()
			.isLenientlyEqualTo("{\"title\": \"Stale fencing token\", \"lockPath\": \"/locks/stock/reactive-quince\"}");
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "reactive-quince")).bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(5);
		assertThat(orders("reactive-quince")).isEqualTo(orders);
	}

	@Test
	void purchaseIsLockedWhileABlockingHolderHasTheWriteLock() throws Exception {
		setStock("reactive-fig", 5);
		CountDownLatch acquired = new CountDownLatch(1);
		CountDownLatch finished = new CountDownLatch(1);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Boolean> holder = executor.submit(() -> {
				try (LockHandle handle = this.lockTemplate.acquire("/stock/reactive-fig", LockMode.WRITE,
						Duration.ofSeconds(10))) {
					acquired.countDown();
					return finished.await(30, TimeUnit.SECONDS);
				}
			});
			assertThat(acquired.await(30, TimeUnit.SECONDS)).isTrue();
			MvcTestResult busy = this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-fig").exchange();
			assertThat(busy).headers().doesNotContainHeader(StockController.LOCK_WAIT_HEADER);
			assertThat(busy).hasStatus(HttpStatus.LOCKED)
				.bodyJson()
				.isLenientlyEqualTo("{\"title\": \"Lock busy\", \"lockPath\": \"/locks/stock/reactive-fig\", "
						+ "\"lockMode\": \"WRITE\"}");
			finished.countDown();
			assertThat(holder.get(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			finished.countDown();
			executor.shutdown();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(this.mvc.post().uri("/api/reactive/stock/{sku}/purchase", "reactive-fig")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.remaining")
			.isEqualTo(4);
	}

	private long orders(String sku) {
		return this.jdbcClient.sql("SELECT COUNT(*) FROM orders WHERE sku = :sku")
			.param("sku", sku)
			.query(Long.class)
			.single();
	}

	private void setStock(String sku, int quantity) {
		assertThat(this.mvc.put().uri("/api/stock/{sku}", sku).param("quantity", String.valueOf(quantity)))
			.hasStatusOk();
	}

	private static long longAt(MvcTestResult result, String path) throws Exception {
		Number value = JsonPath.read(result.getResponse().getContentAsString(StandardCharsets.UTF_8), path);
		return value.longValue();
	}

}
