package io.github.zklock.sample;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.github.zklock.sample.demo.LoadGenerator;
import io.github.zklock.sample.demo.LoadReport;
import io.github.zklock.sample.demo.SalesAudit;
import io.github.zklock.sample.demo.ScheduledAudit;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances of the sample application, as in {@code ./demo.sh} but in one JVM: each has its
 * own application context, ZooKeeper client (its own session), lock registry and connection pool,
 * and they share one ZooKeeper server and one H2 database. Their locks exclude each other only
 * through ZooKeeper.
 *
 * <p>Every purchase thinks for {@value #THINK_TIME_MS} ms between reading and writing the stock, so
 * that unlocked purchases reliably interleave.
 */
class MultiInstanceTests {

	private static final long THINK_TIME_MS = 50;

	private static final int BUYERS_PER_INSTANCE = 4;

	private static final int ATTEMPTS_PER_BUYER = 6;

	/** One server for both instances; it stops after {@link #stopTwoInstances()}. */
	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static String jdbcUrl;

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@BeforeAll
	static void startTwoInstances() throws Exception {
		jdbcUrl = "jdbc:h2:mem:multi-instance-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
		first = startInstance("instance-a");
		second = startInstance("instance-b");
	}

	@AfterAll
	static void stopTwoInstances() throws Exception {
		try {
			if (second != null) {
				second.close();
			}
			if (first != null) {
				first.close();
			}
		}
		finally {
			try (Connection connection = DriverManager.getConnection(jdbcUrl, "sa", "");
					Statement statement = connection.createStatement()) {
				statement.execute("SHUTDOWN");
			}
		}
	}

	private static ConfigurableApplicationContext startInstance(String instanceId) {
		return new SpringApplicationBuilder(SampleApplication.class).run("--server.address=127.0.0.1",
				"--server.port=0", "--spring.jmx.enabled=false", "--zk.lock.embedded.enabled=false",
				"--zk.lock.connect-string=" + zooKeeper.getConnectString(), "--zk.lock.default-wait-time=10s",
				"--spring.datasource.url=" + jdbcUrl, "--sample.instance-id=" + instanceId,
				"--sample.purchase-think-time=" + THINK_TIME_MS + "ms", "--sample.report.cron=* * * * * *",
				"--sample.report.lock-at-least-for=500ms");
	}

	@Test
	void lockedPurchasesOnTwoInstancesNeverOversell() throws Exception {
		String sku = "two-instances-locked";
		int stock = 20;
		first.getBean(StockService.class).setStock(sku, stock);
		Tally tally = buyConcurrently(sku, StockService::purchase);
		assertThat(tally.sold()).hasValue(stock);
		assertThat(tally.soldOut()).hasValue(2 * BUYERS_PER_INSTANCE * ATTEMPTS_PER_BUYER - stock);
		assertThat(second.getBean(StockService.class).getStock(sku)).isZero();
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
		first.getBean(StockService.class).setStock(sku, stock);
		Tally tally = buyConcurrently(sku, StockService::purchaseWithoutLock);
		int remaining = second.getBean(StockService.class).getStock(sku);
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
	void loadGeneratorReportsLostUpdatesWithoutTheLock() throws Exception {
		LoadGenerator.Outcome outcome = runLoad(LoadGenerator.Mode.UNLOCKED, "generator-unlocked");
		assertThat(outcome.report().lostUpdates()).isPositive();
		assertThat(outcome.unexpectedAnswers()).isZero();
		assertThat(outcome.sales().ordersWithoutToken()).isEqualTo(outcome.sales().orders());
		assertThat(outcome.report().toResultLine()).startsWith("RESULT mode=unlocked requests=30 ");
	}

	private static LoadGenerator.Outcome runLoad(LoadGenerator.Mode mode, String sku) throws Exception {
		List<URI> instances = List.of(baseUri(first), baseUri(second));
		LoadGenerator.Options options = new LoadGenerator.Options(mode, instances, sku, 10, 30, 6,
				Duration.ofSeconds(60));
		return new LoadGenerator().run(options, new SalesAudit(jdbcUrl, "sa", ""));
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
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(2 * BUYERS_PER_INSTANCE);
		List<Future<?>> buyers = new ArrayList<>();
		try {
			for (ConfigurableApplicationContext instance : List.of(first, second)) {
				StockService service = instance.getBean(StockService.class);
				for (int i = 0; i < BUYERS_PER_INSTANCE; i++) {
					buyers.add(executor.submit(() -> {
						assertThat(start.await(30, TimeUnit.SECONDS)).isTrue();
						for (int j = 0; j < ATTEMPTS_PER_BUYER; j++) {
							try {
								purchaser.purchase(service, sku, 1);
								tally.sold().incrementAndGet();
							}
							catch (SoldOutException ex) {
								tally.soldOut().incrementAndGet();
							}
						}
						return null;
					}));
				}
			}
			start.countDown();
			for (Future<?> buyer : buyers) {
				// Rethrows anything but SoldOutException, such as a LockAcquisitionException.
				buyer.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		return tally;
	}

	@Test
	void scheduledReportRunsEachTickOnOneInstanceBothWays() throws Exception {
		// Both instances fire the report every second (the test's cron); a tick must run once.
		await().atMost(Duration.ofSeconds(30)).until(() -> scheduledJobs().size() == 2
				&& scheduledJobs().stream().allMatch((job) -> job.ticks() >= 3));
		List<ScheduledAudit.JobRuns> jobs = scheduledJobs();
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

	private static List<ScheduledAudit.JobRuns> scheduledJobs() throws Exception {
		try (Connection connection = DriverManager.getConnection(jdbcUrl, "sa", "")) {
			return ScheduledAudit.read(connection);
		}
	}

	private static List<Order> orders(String sku) {
		return first.getBean(JdbcClient.class)
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
