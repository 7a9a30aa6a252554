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
import io.github.zklock.LockTemplate;
import io.github.zklock.LockMode;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link StockController} and {@link StockExceptionHandler}, through the whole
 * application on its embedded ZooKeeper and H2 database.
 */
@SpringBootTest(properties = { "zk.lock.default-wait-time=1s", "sample.instance-id=controller-tests" })
@AutoConfigureEmbeddedZooKeeper
@AutoConfigureMockMvc
class StockControllerTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private LockTemplate lockTemplate;

	@Autowired
	private JdbcClient jdbcClient;

	@Test
	void putSetsStockFromParameterAndGetReturnsIt() {
		assertThat(this.mvc.put().uri("/api/stock/{sku}", "apple").param("quantity", "7")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"sku\": \"apple\", \"quantity\": 7}");
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "apple")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"sku\": \"apple\", \"quantity\": 7}");
	}

	@Test
	void putSetsStockFromJsonBody() {
		assertThat(this.mvc.put()
			.uri("/api/stock/{sku}", "pear")
			.contentType(MediaType.APPLICATION_JSON)
			.content("{\"quantity\": 3}")).hasStatusOk();
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "pear")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(3);
	}

	@Test
	void putWithNegativeOrMissingQuantityIsBadRequest() {
		assertThat(this.mvc.put().uri("/api/stock/{sku}", "plum").param("quantity", "-1"))
			.hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.put().uri("/api/stock/{sku}", "plum").contentType(MediaType.APPLICATION_JSON).content("{}"))
			.hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "plum")).hasStatus(HttpStatus.NOT_FOUND);
	}

	@Test
	void purchaseReturnsRemainingStock() {
		setStock("banana", 5);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "banana").param("quantity", "2")).hasStatusOk()
			.hasContentType(MediaType.APPLICATION_JSON)
			.bodyJson()
			.isLenientlyEqualTo("{\"sku\": \"banana\", \"purchased\": 2, \"remaining\": 3, "
					+ "\"instance\": \"controller-tests\"}");
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "banana")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"sku\": \"banana\", \"purchased\": 1, \"remaining\": 2}");
	}

	@Test
	void purchaseAnswersWithOrderIdFencingTokenAndLockWait() throws Exception {
		setStock("lemon", 5);
		MvcTestResult first = this.mvc.post().uri("/api/stock/{sku}/purchase", "lemon").exchange();
		MvcTestResult second = this.mvc.post().uri("/api/stock/{sku}/purchase", "lemon").exchange();
		assertThat(first).hasStatusOk().headers().containsHeader(StockController.LOCK_WAIT_HEADER);
		assertThat(lockWaitMillis(first)).isNotNegative().isLessThan(1000);
		assertThat(longAt(second, "$.orderId")).isGreaterThan(longAt(first, "$.orderId"));
		assertThat(longAt(first, "$.fencingToken")).isPositive();
		// One after the other, nobody waiting in between: no local hand-off, a new znode, a higher token.
		assertThat(longAt(second, "$.fencingToken")).isGreaterThan(longAt(first, "$.fencingToken"));
	}

	@Test
	void soldOutPurchaseAnswersWithTheLockWaitToo() {
		setStock("melon", 0);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "melon")).hasStatus(HttpStatus.CONFLICT)
			.headers()
			.containsHeader(StockController.LOCK_WAIT_HEADER);
	}

	@Test
	void unlockedPurchaseRunsWithoutTheLockAndRecordsNoToken() throws Exception {
		setStock("nectarine", 3);
		whileHeldByAnotherThread("/stock/nectarine", LockMode.WRITE, () -> {
			// The locked purchase waits and gives up; the unlocked one does not even look.
			assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "nectarine")).hasStatus(HttpStatus.LOCKED)
				.headers()
				.doesNotContainHeader(StockController.LOCK_WAIT_HEADER);
			assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase-unlocked", "nectarine")).hasStatusOk()
				.bodyJson()
				.isLenientlyEqualTo("{\"sku\": \"nectarine\", \"purchased\": 1, \"remaining\": 2, "
						+ "\"fencingToken\": null}");
		});
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase-unlocked", "nectarine").param("quantity", "3"))
			.hasStatus(HttpStatus.CONFLICT);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase-unlocked", "nectarine").param("quantity", "0"))
			.hasStatus(HttpStatus.BAD_REQUEST);
	}

	@Test
	void malformedSkuIsBadRequest() {
		String tooLong = "x".repeat(101);
		for (String sku : new String[] { "-apple", ".hidden", "a b", "caf\u00e9", tooLong }) {
			assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", sku)).as(sku)
				.hasStatus(HttpStatus.BAD_REQUEST)
				.hasContentType(MediaType.APPLICATION_PROBLEM_JSON);
			assertThat(this.mvc.get().uri("/api/stock/{sku}", sku)).as(sku).hasStatus(HttpStatus.BAD_REQUEST);
			assertThat(this.mvc.put().uri("/api/stock/{sku}", sku).param("quantity", "1")).as(sku)
				.hasStatus(HttpStatus.BAD_REQUEST);
		}
		setStock("x".repeat(100), 1);
	}

	@Test
	void purchaseOfMoreThanInStockIsConflictAndChangesNothing() {
		setStock("cherry", 2);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "cherry").param("quantity", "3"))
			.hasStatus(HttpStatus.CONFLICT)
			.hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
			.bodyJson()
			.isLenientlyEqualTo("{\"status\": 409, \"title\": \"Sold out\", \"sku\": \"cherry\", "
					+ "\"requested\": 3, \"available\": 2}");
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "cherry").param("quantity", "2")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.remaining")
			.isEqualTo(0);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "cherry")).hasStatus(HttpStatus.CONFLICT);
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "cherry")).bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(0);
	}

	@Test
	void purchaseWithQuantityBelowOneIsBadRequest() {
		setStock("date", 5);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "date").param("quantity", "0"))
			.hasStatus(HttpStatus.BAD_REQUEST)
			.hasContentType(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "date").param("quantity", "-3"))
			.hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "date").param("quantity", "many"))
			.hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "date")).bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(5);
	}

	@Test
	void purchaseOfUnknownSkuIsNotFound() {
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "unknown")).hasStatus(HttpStatus.NOT_FOUND)
			.bodyJson()
			.extractingPath("$.sku")
			.isEqualTo("unknown");
	}

	@Test
	void purchaseAndGetAreLockedWhileAnotherOwnerHoldsTheWriteLock() throws Exception {
		setStock("fig", 5);
		whileHeldByAnotherThread("/stock/fig", LockMode.WRITE, () -> {
			assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "fig")).hasStatus(HttpStatus.LOCKED)
				.hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
				.bodyJson()
				.isLenientlyEqualTo("{\"status\": 423, \"title\": \"Lock busy\", \"lockPath\": \"/locks/stock/fig\", "
						+ "\"lockMode\": \"WRITE\", \"waitTimeMs\": 1000}");
			// Readers wait for a writer too.
			assertThat(this.mvc.get().uri("/api/stock/{sku}", "fig")).hasStatus(HttpStatus.LOCKED)
				.bodyJson()
				.extractingPath("$.lockMode")
				.isEqualTo("READ");
		});
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "fig")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.remaining")
			.isEqualTo(4);
	}

	@Test
	void getSharesTheLockWithAnotherReader() throws Exception {
		setStock("grape", 9);
		whileHeldByAnotherThread("/stock/grape", LockMode.READ, () -> {
			assertThat(this.mvc.get().uri("/api/stock/{sku}", "grape")).hasStatusOk()
				.bodyJson()
				.extractingPath("$.quantity")
				.isEqualTo(9);
			assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "grape")).hasStatus(HttpStatus.LOCKED);
		});
	}

	private static double lockWaitMillis(MvcTestResult result) {
		String header = result.getResponse().getHeader(StockController.LOCK_WAIT_HEADER);
		assertThat(header).as(StockController.LOCK_WAIT_HEADER).matches("\\d+\\.\\d{3}");
		return Double.parseDouble(header);
	}

	private static long longAt(MvcTestResult result, String path) throws Exception {
		Number value = JsonPath.read(result.getResponse().getContentAsString(StandardCharsets.UTF_8), path);
		return value.longValue();
	}

	@Test
	void purchaseRefusedByTheFenceIsConflictWithTheReasonInAHeader() {
		setStock("quince", 5);
		// As if a newer grant had written the row: this application's token is now stale.
		this.jdbcClient.sql("UPDATE stock SET fencing_token = :token WHERE sku = 'quince'")
			.param("token", Long.MAX_VALUE)
			.update();
		assertThat(this.mvc.post().uri("/api/stock/{sku}/purchase", "quince")).hasStatus(HttpStatus.CONFLICT)
			.hasHeader(StockExceptionHandler.LOCK_LOST_HEADER, "stale-fencing-token")
			.bodyJson()
			.isLenientlyEqualTo("{\"title\": \"Stale fencing token\"}");
		assertThat(this.mvc.get().uri("/api/stock/{sku}", "quince")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.quantity")
			.isEqualTo(5);
	}

	private void setStock(String sku, int quantity) {
		assertThat(this.mvc.put().uri("/api/stock/{sku}", sku).param("quantity", String.valueOf(quantity)))
			.hasStatusOk();
	}

	/**
	 * Run {@code action} on this thread while a lock on {@code path} is held by another thread.
	 */
	private void whileHeldByAnotherThread(String path, LockMode mode, Runnable action) throws Exception {
		CountDownLatch acquired = new CountDownLatch(1);
		CountDownLatch finished = new CountDownLatch(1);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Boolean> holder = executor.submit(() -> {
				try (LockHandle handle = this.lockTemplate.acquire(path, mode, Duration.ofSeconds(10))) {
					acquired.countDown();
					return finished.await(30, TimeUnit.SECONDS);
				}
			});
			assertThat(acquired.await(30, TimeUnit.SECONDS)).as("lock acquired by the other thread").isTrue();
			action.run();
			finished.countDown();
			assertThat(holder.get(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			finished.countDown();
			executor.shutdown();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
	}

}
