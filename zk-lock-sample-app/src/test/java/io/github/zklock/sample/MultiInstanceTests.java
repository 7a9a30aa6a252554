package io.github.zklock.sample;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.github.zklock.sample.demo.LoadGenerator;
import io.github.zklock.sample.demo.LoadReport;
import io.github.zklock.sample.demo.SalesAudit;
import io.github.zklock.sample.demo.ScheduledAudit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances of the sample application, as in {@code ./demo.sh} but in one JVM
 * ({@link SampleInstances}): their locks exclude each other only through ZooKeeper.
 *
 * <p>Every purchase thinks for {@value #THINK_TIME_MS} ms between reading and writing the stock, so
 * that unlocked purchases reliably interleave.
 */
class MultiInstanceTests {

	private static final long THINK_TIME_MS = 50;

	private static final int BUYERS_PER_INSTANCE = 4;

	private static final int ATTEMPTS_PER_BUYER = 6;

	@RegisterExtension
	static final SampleInstances instances = new SampleInstances("multi-instance", List.of("instance-a", "instance-b"),
			"--zk.lock.default-wait-time=10s", "--sample.purchase-think-time=" + THINK_TIME_MS + "ms",
			"--sample.report.cron=* * * * * *", "--sample.report.lock-at-least-for=500ms");

	@Test
	void lockedPurchasesOnTwoInstancesNeverOversell() throws Exception {
		String sku = "two-instances-locked";
		int stock = 20;
		instances.instance(0).getBean(StockService.class).setStock(sku, stock);
		Tally tally = buyConcurrently(sku, StockService::purchase);
		assertThat(tally.sold()).hasValue(stock);
		assertThat(tally.soldOut()).hasValue(2 * BUYERS_PER_INSTANCE * ATTEMPTS_PER_BUYER - stock);
		assertThat(instances.instance(1).getBean(StockService.class).getStock(sku)).isZero();
		List<Order> orders = orders(sku);
		assertThat(orders).hasSize(stock);
		assertThat(orders).extracting(Order::instanceId).contains("instance-a", "instance-b");
		// Orders are written under the lock, so in grant order: their tokens never decrease (equal
		// within a chain of grants handed over locally, higher from one znode to the next).
		assertThat(orders).extracting(Order::fencingToken).doesNotContainNull().isSorted();
	}

	@Test
	void unlockedPurchasesOnTwoInstancesLoseUpdates() throws Exception {
		String sku = "two-instances-unlocked";
		int stock = 20;
		instances.instance(0).getBean(StockService.class).setStock(sku, stock);
		Tally tally = buyConcurrently(sku, StockService::purchaseWithoutLock);
		int remaining = instances.instance(1).getBean(StockService.class).getStock(sku);
		// The comparison the demo relies on: without the lock, sales overwrite each other's stock.
		assertThat(tally.sold().get()).as("sold, with %d remaining", remaining).isGreaterThan(stock - remaining);
		assertThat(orders(sku)).hasSize(tally.sold().get()).extracting(Order::fencingToken).containsOnlyNulls();
	}

	@Test
	void loadGeneratorReportsNoOversellOrLostUpdateWithTheLock() throws Exception {
		LoadGenerator.Outcome outcome = runLoad(LoadGenerator.Mode.LOCKED, "generator-locked");
		LoadReport report = outcome.report();
		assertThat(report.sold()).isEqualTo(10);
		assertThat(report.remaining()).isZero();
		assertThat(report.oversold()).isZero();
		assertThat(report.lostUpdates()).isZero();
		assertThat(report.lockWaitP99Millis()).isGreaterThanOrEqualTo(report.lockWaitP50Millis()).isPositive();
		assertThat(outcome.statuses()).containsExactlyInAnyOrderEntriesOf(Map.of("200", 10L, "409", 20L));
		assertThat(outcome.lockedBooksStraight()).isTrue();
		assertThat(outcome.sales().ordersByInstance()).containsOnlyKeys("instance-a", "instance-b");
		assertThat(report.toResultLine()).matches("RESULT mode=locked requests=30 sold=10 remaining=0 oversold=0 "
				+ "lost_updates=0 lock_wait_p50_ms=\\d+\\.\\d lock_wait_p99_ms=\\d+\\.\\d throughput_rps=\\d+\\.\\d");
	}

	@Test
	void loadGeneratorReportsNoOversellOrLostUpdateWithTheReactivePurchase() throws Exception {
		LoadGenerator.Outcome outcome = runLoad(LoadGenerator.Mode.LOCKED_REACTIVE, "generator-reactive");
		LoadReport report = outcome.report();
		assertThat(report.sold()).isEqualTo(10);
		assertThat(report.remaining()).isZero();
		assertThat(report.consistent()).isTrue();
		assertThat(report.lockWaitP99Millis()).isGreaterThanOrEqualTo(report.lockWaitP50Millis()).isPositive();
		assertThat(outcome.statuses()).containsExactlyInAnyOrderEntriesOf(Map.of("200", 10L, "409", 20L));
		assertThat(outcome.reactiveStatuses()).isEqualTo(outcome.statuses());
		assertThat(outcome.lockedBooksStraight()).isTrue();
		assertThat(outcome.sales().ordersByInstance()).containsOnlyKeys("instance-a", "instance-b");
		assertThat(report.toResultLine()).startsWith("RESULT mode=locked-reactive requests=30 sold=10 remaining=0 "
				+ "oversold=0 lost_updates=0 ");
	}

	@Test
	void loadGeneratorReportsLostUpdatesWithoutTheLock() throws Exception {
		LoadGenerator.Outcome outcome = runLoad(LoadGenerator.Mode.UNLOCKED, "generator-unlocked");
		assertThat(outcome.report().lostUpdates()).isPositive();
		assertThat(outcome.unexpectedAnswers()).isZero();
		assertThat(outcome.sales().ordersWithoutToken()).isEqualTo(outcome.sales().orders());
		assertThat(outcome.report().toResultLine()).startsWith("RESULT mode=unlocked requests=30 ");
	}

	private static LoadGenerator.Outcome runLoad(LoadGenerator.Mode mode, String sku) throws Exception {
		List<URI> baseUris = List.of(baseUri(instances.instance(0)), baseUri(instances.instance(1)));
		LoadGenerator.Options options = new LoadGenerator.Options(mode, baseUris, sku, 10, 30, 6,
				Duration.ofSeconds(60));
		return new LoadGenerator().run(options, new SalesAudit(instances.jdbcUrl(), "sa", ""));
	}

	private static URI baseUri(ConfigurableApplicationContext context) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return URI.create("http://127.0.0.1:" + port);
	}

	/**
	 * Buy from {@value #BUYERS_PER_INSTANCE} threads per instance at once, each making
	 * {@value #ATTEMPTS_PER_BUYER} purchases of one item.
	 */
	private static Tally buyConcurrently(String sku, Purchaser purchaser) throws Exception {
		Tally tally = new Tally(new AtomicInteger(), new AtomicInteger());
		// Rethrows anything but SoldOutException, such as a LockAcquisitionException.
		instances.callConcurrently(BUYERS_PER_INSTANCE, ATTEMPTS_PER_BUYER, Duration.ofSeconds(60), (instance, op) -> {
			try {
				purchaser.purchase(instance.getBean(StockService.class), sku, 1);
				tally.sold().incrementAndGet();
			}
			catch (SoldOutException ex) {
				tally.soldOut().incrementAndGet();
			}
		});
		return tally;
	}

	@Test
	void scheduledReportRunsEachTickOnOneInstanceBothWays() throws Exception {
		// Both instances fire the report every second (the test's cron); a tick must run once.
		await().atMost(Duration.ofSeconds(30)).until(() -> instances.scheduledJobs().size() == 2
				&& instances.scheduledJobs().stream().allMatch((job) -> job.ticks() >= 3));
		List<ScheduledAudit.JobRuns> jobs = instances.scheduledJobs();
		assertThat(jobs).extracting(ScheduledAudit.JobRuns::job).containsExactly("leader-report", "stock-report");
		assertThat(jobs).allSatisfy((job) -> {
			assertThat(job.duplicates()).as(job.toLine()).isZero();
			assertThat(job.duplicateWritesCommitted()).as(job.toLine()).isZero();
			// Written through the fence: nobody's token was refused, each run committed.
			assertThat(job.rejected()).as(job.toLine()).isZero();
			assertThat(job.runs()).as(job.toLine()).isEqualTo(job.attempts());
		});
		assertThat(jobs.get(0).runsByInstance()).as("one leader ran every leader-only tick").hasSize(1);
	}

	private static List<Order> orders(String sku) {
		return instances.instance(0).getBean(JdbcClient.class)
			.sql("SELECT instance_id, fencing_token FROM orders WHERE sku = :sku ORDER BY id")
			.param("sku", sku)
			.query((rs, row) -> new Order(rs.getString(1), rs.getObject(2, Long.class)))
			.list();
	}

	@FunctionalInterface
	private interface Purchaser {

		Purchase purchase(StockService service, String sku, int quantity);

	}

	private record Tally(AtomicInteger sold, AtomicInteger soldOut) {
	}

	private record Order(String instanceId, Long fencingToken) {
	}

}
