package io.github.zklock.sample.chaos;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
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
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Tests for {@link ChaosController} and {@link ChaosExceptionHandler} with the profile
 * {@code chaos}, through the whole application on its embedded ZooKeeper and H2 database: each
 * workload's answer and the rows a checker reads.
 */
@SpringBootTest(properties = { "zk.lock.default-wait-time=1s", "sample.instance-id=chaos-tests",
		"sample.chaos.think-time=5ms", "sample.report.enabled=false" })
@ActiveProfiles("chaos")
@AutoConfigureEmbeddedZooKeeper
@AutoConfigureMockMvc
class ChaosControllerTests {

	private static final Duration ASYNC_WAIT = Duration.ofSeconds(30);

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private LockTemplate lockTemplate;

	@Autowired
	private JdbcClient jdbcClient;

	@Test
	void fencedIncrementAnswersTheValueItWroteAndRecordsItsOp() throws Exception {
		MvcTestResult first = increment("fenced", "fenced-1", "f-1");
		MvcTestResult second = increment("fenced", "fenced-1", "f-2");
		assertThat(first).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"op\": \"f-1\", \"counter\": \"fenced-1\", \"value\": 1, \"instance\": \"chaos-tests\", "
					+ "\"via\": \"fenced\", \"lostAfterCommit\": false}");
		assertThat(second).hasStatusOk().bodyJson().extractingPath("$.value").isEqualTo(2);
		long firstToken = longAt(first, "$.token");
		assertThat(firstToken).isPositive();
		assertThat(longAt(second, "$.token")).isGreaterThanOrEqualTo(firstToken);
		assertThat(ops("fenced-1")).containsExactly(new Op("f-1", 1, firstToken, "chaos-tests", "fenced"),
				new Op("f-2", 2, longAt(second, "$.token"), "chaos-tests", "fenced"));
		assertThat(fence("fenced-1")).isEqualTo(longAt(second, "$.token"));
		assertThat(this.mvc.get().uri("/chaos/counter/{name}", "fenced-1")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"name\": \"fenced-1\", \"value\": 2, \"ops\": 2}");
	}

	@Test
	void unfencedIncrementRecordsItsTokenButLeavesTheFenceAlone() throws Exception {
		MvcTestResult result = increment("unfenced", "unfenced-1", "u-1");
		assertThat(result).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"op\": \"u-1\", \"counter\": \"unfenced-1\", \"value\": 1, \"via\": \"unfenced\"}");
		assertThat(ops("unfenced-1")).containsExactly(new Op("u-1", 1, longAt(result, "$.token"), "chaos-tests", "unfenced"));
		assertThat(fence("unfenced-1")).isZero();
	}

	@Test
	void asyncIncrementRunsThroughTheAsynchronousTemplateAndSaysSo() throws Exception {
		MvcTestResult first = increment("async", "async-1", "a-1");
		MvcTestResult second = increment("async", "async-1", "a-2");
		assertThat(first).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"op\": \"a-1\", \"counter\": \"async-1\", \"value\": 1, \"via\": \"async\", "
					+ "\"lostAfterCommit\": false}");
		assertThat(second).hasStatusOk().bodyJson().extractingPath("$.value").isEqualTo(2);
		assertThat(ops("async-1")).extracting(Op::op, Op::newValue, Op::via)
			.containsExactly(tuple("a-1", 1L, "async"),
					tuple("a-2", 2L, "async"));
		assertThat(fence("async-1")).isEqualTo(longAt(second, "$.token")).isPositive();
	}

	@Test
	void fencedIncrementsRefuseAZombieAndTheUnfencedOneDoesNot() {
		assertThat(increment("fenced", "zombie", "z-1")).hasStatusOk();
		// As if a newer grant (of another instance, after this one's session expired) had written.
		this.jdbcClient.sql("UPDATE chaos_counter SET fencing_token = :token WHERE name = 'zombie'")
			.param("token", Long.MAX_VALUE)
			.update();
		assertThat(increment("fenced", "zombie", "z-2"))
			.hasStatus(HttpStatus.CONFLICT)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"stale-token\", \"op\": \"z-2\", \"lockPath\": \"/locks/chaos/counter/zombie\"}");
		assertThat(increment("async", "zombie", "z-3"))
			.hasStatus(HttpStatus.CONFLICT)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"stale-token\", \"op\": \"z-3\"}");
		assertThat(ops("zombie")).extracting(Op::op).containsExactly("z-1");
		assertThat(fence("zombie")).isEqualTo(Long.MAX_VALUE);
		// Nothing in its way without the fence.
		assertThat(increment("unfenced", "zombie", "z-4")).hasStatusOk()
			.bodyJson()
			.extractingPath("$.value")
			.isEqualTo(2);
	}

	@Test
	void incrementsAreLockedWhileAnotherOwnerHoldsTheCounter() throws Exception {
		whileHeldByAnotherThread(List.of(CounterService.LOCK_PREFIX + "held"), () -> {
			for (String via : new String[] { "fenced", "unfenced" }) {
				assertThat(this.mvc.post().uri("/chaos/counter/" + via + "/held").param("op", via)).as(via)
					.hasStatus(HttpStatus.LOCKED)
					.bodyJson()
					.isLenientlyEqualTo("{\"error\": \"lock-busy\", \"op\": \"" + via + "\", "
							+ "\"lockPath\": \"/locks/chaos/counter/held\"}");
			}
			assertThat(this.mvc.post().uri("/chaos/counter/async/held").param("op", "async").exchange(ASYNC_WAIT))
				.hasStatus(HttpStatus.LOCKED)
				.bodyJson()
				.extractingPath("$.error")
				.isEqualTo("lock-busy");
		});
		assertThat(this.mvc.get().uri("/chaos/counter/held")).bodyJson()
			.isLenientlyEqualTo("{\"name\": \"held\", \"value\": 0, \"ops\": 0}");
	}

	@Test
	void transferMovesTheAmountUnderBothAccountsFencesAndKeepsTheSum() throws Exception {
		openAccounts(4, 100, true);
		MvcTestResult result = this.mvc.post()
			.uri("/chaos/transfer")
			.param("from", "2")
			.param("to", "0")
			.param("amount", "30")
			.param("op", "t-1")
			.exchange();
		assertThat(result).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"op\": \"t-1\", \"from\": 2, \"to\": 0, \"amount\": 30, \"fromBalance\": 70, "
					+ "\"toBalance\": 130, \"instance\": \"chaos-tests\"}");
		long fromToken = longAt(result, "$.fromToken");
		long toToken = longAt(result, "$.toToken");
		assertThat(fromToken).isPositive();
		// Two znodes of one multi-lock, the lower path (account 0) created first.
		assertThat(toToken).isPositive().isLessThan(fromToken);
		assertThat(accountFence(2)).isEqualTo(fromToken);
		assertThat(accountFence(0)).isEqualTo(toToken);
		assertThat(this.jdbcClient.sql("SELECT op, from_account, to_account, amount, from_token, to_token, from_balance, "
				+ "to_balance, instance_id FROM chaos_transfer")
			.query((rs, row) -> List.of(rs.getString(1), rs.getInt(2), rs.getInt(3), rs.getLong(4), rs.getLong(5),
					rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getString(9)))
			.list()).containsExactly(List.of("t-1", 2, 0, 30L, fromToken, toToken, 70L, 130L, "chaos-tests"));
		assertThat(this.mvc.get().uri("/chaos/accounts")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"count\": 4, \"sum\": 400, \"minBalance\": 70, \"transfers\": 1}");
	}

	@Test
	void overdraftIsRefusedWithNothingWritten() {
		openAccounts(3, 10, true);
		assertThat(transfer(0, 1, 11, "over")).hasStatus(HttpStatus.CONFLICT)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"insufficient-balance\", \"op\": \"over\", \"account\": 0, "
					+ "\"balance\": 10, \"amount\": 11}");
		// Rolled back: the fences it advanced too.
		assertThat(accountFence(0)).isZero();
		assertThat(accountFence(1)).isZero();
		assertThat(transfer(0, 1, 10, "all")).hasStatusOk();
		assertThat(transfer(0, 2, 1, "empty")).hasStatus(HttpStatus.CONFLICT)
			.bodyJson()
			.extractingPath("$.error")
			.isEqualTo("insufficient-balance");
		assertThat(this.mvc.get().uri("/chaos/accounts")).bodyJson()
			.isLenientlyEqualTo("{\"count\": 3, \"sum\": 30, \"minBalance\": 0, \"transfers\": 1}");
	}

	@Test
	void transferRefusesAZombieOnEitherAccount() {
		openAccounts(2, 10, true);
		this.jdbcClient.sql("UPDATE chaos_account SET fencing_token = :token WHERE id = 1")
			.param("token", Long.MAX_VALUE)
			.update();
		assertThat(transfer(0, 1, 5, "zombie")).hasStatus(HttpStatus.CONFLICT)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"stale-token\", \"lockPath\": \"/locks/chaos/account/1\"}");
		// Account 0's fence, advanced first, rolled back with the rest.
		assertThat(accountFence(0)).isZero();
		assertThat(this.mvc.get().uri("/chaos/accounts")).bodyJson()
			.isLenientlyEqualTo("{\"count\": 2, \"sum\": 20, \"minBalance\": 10, \"transfers\": 0}");
	}

	@Test
	void transferOfAnUnknownAccountIsNotFound() {
		openAccounts(2, 10, true);
		assertThat(transfer(1, 5, 1, "unknown")).hasStatus(HttpStatus.NOT_FOUND)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"unknown-account\", \"account\": 5}");
		assertThat(this.mvc.get().uri("/chaos/accounts")).bodyJson()
			.isLenientlyEqualTo("{\"count\": 2, \"sum\": 20, \"transfers\": 0}");
	}

	@Test
	void transferIsLockedWhileAnotherOwnerHoldsOneAccount() throws Exception {
		openAccounts(2, 10, true);
		whileHeldByAnotherThread(List.of(TransferService.LOCK_PREFIX + "1"),
				() -> assertThat(transfer(0, 1, 1, "busy")).hasStatus(HttpStatus.LOCKED)
					.bodyJson()
					.isLenientlyEqualTo("{\"error\": \"lock-busy\", \"lockPath\": \"/locks/chaos/account/1\"}"));
		assertThat(transfer(0, 1, 1, "free")).hasStatusOk();
	}

	@Test
	void openingAccountsAgainKeepsThemUnlessReset() {
		openAccounts(3, 50, true);
		assertThat(transfer(0, 1, 20, "before-reopen")).hasStatusOk();
		assertThat(this.mvc.post().uri("/chaos/accounts").param("count", "4").param("balance", "50")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"created\": 1, \"count\": 4, \"sum\": 200, \"minBalance\": 30, \"transfers\": 1}");
		assertThat(this.mvc.post().uri("/chaos/accounts").param("count", "2").param("balance", "7").param("reset", "true"))
			.hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"created\": 0, \"count\": 2, \"sum\": 14, \"minBalance\": 7, \"transfers\": 0}");
	}

	@Test
	void malformedRequestsAreBadRequestsWithTheErrorField() {
		assertThat(increment("fenced", "-x", "o")).hasStatus(HttpStatus.BAD_REQUEST)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"bad-request\", \"op\": \"o\"}");
		assertThat(this.mvc.post().uri("/chaos/counter/fenced/{name}", "x")).hasStatus(HttpStatus.BAD_REQUEST)
			.bodyJson()
			.extractingPath("$.error")
			.isEqualTo("bad-request");
		assertThat(this.mvc.post().uri("/chaos/counter/async/{name}", "x").param("op", "o".repeat(101)))
			.hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(transfer(1, 1, 1, "same")).hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(transfer(0, 1, 0, "nothing")).hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.post().uri("/chaos/transfer").param("from", "a").param("to", "1").param("amount", "1")
			.param("op", "nan")).hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.error").isEqualTo("bad-request");
		assertThat(this.mvc.post().uri("/chaos/accounts").param("count", "0").param("balance", "1"))
			.hasStatus(HttpStatus.BAD_REQUEST);
	}

	private MvcTestResult increment(String via, String name, String op) {
		return this.mvc.post().uri("/chaos/counter/{via}/{name}", via, name).param("op", op).exchange(ASYNC_WAIT);
	}

	private MvcTestResult transfer(int from, int to, long amount, String op) {
		return this.mvc.post()
			.uri("/chaos/transfer")
			.param("from", String.valueOf(from))
			.param("to", String.valueOf(to))
			.param("amount", String.valueOf(amount))
			.param("op", op)
			.exchange();
	}

	private void openAccounts(int count, long balance, boolean reset) {
		assertThat(this.mvc.post()
			.uri("/chaos/accounts")
			.param("count", String.valueOf(count))
			.param("balance", String.valueOf(balance))
			.param("reset", String.valueOf(reset))).hasStatusOk();
		// Each test starts from fences at 0.
		this.jdbcClient.sql("UPDATE chaos_account SET fencing_token = 0").update();
	}

	private List<Op> ops(String counter) {
		return this.jdbcClient
			.sql("SELECT op, new_value, fencing_token, instance_id, via FROM chaos_counter_op WHERE counter_name = :name "
					+ "ORDER BY id")
			.param("name", counter)
			.query((rs, row) -> new Op(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getString(4), rs.getString(5)))
			.list();
	}

	private long fence(String counter) {
		return this.jdbcClient.sql("SELECT fencing_token FROM chaos_counter WHERE name = :name")
			.param("name", counter)
			.query(Long.class)
			.single();
	}

	private long accountFence(int account) {
		return this.jdbcClient.sql("SELECT fencing_token FROM chaos_account WHERE id = :id")
			.param("id", account)
			.query(Long.class)
			.single();
	}

	private static long longAt(MvcTestResult result, String path) throws Exception {
		Number value = JsonPath.read(result.getResponse().getContentAsString(StandardCharsets.UTF_8), path);
		return value.longValue();
	}

	/**
	 * Run {@code action} on this thread while EXCLUSIVE locks on {@code keys} are held by another
	 * thread.
	 */
	private void whileHeldByAnotherThread(List<String> keys, Runnable action) throws Exception {
		CountDownLatch acquired = new CountDownLatch(1);
		CountDownLatch finished = new CountDownLatch(1);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Boolean> holder = executor.submit(() -> {
				try (LockHandle handle = this.lockTemplate.acquire(LockRequest.of(keys)
					.withMode(LockMode.EXCLUSIVE)
					.withWaitTime(Duration.ofSeconds(10)))) {
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

	private record Op(String op, long newValue, long token, String instance, String via) {
	}

}
