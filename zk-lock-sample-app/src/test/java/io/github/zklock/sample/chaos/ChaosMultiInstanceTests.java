package io.github.zklock.sample.chaos;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.github.zklock.sample.SampleInstances;
import io.github.zklock.sample.demo.ScheduledAudit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances of the sample application with the profile {@code chaos}, as the fault campaign
 * runs them but in one JVM ({@link SampleInstances}). The workloads' invariants hold under
 * concurrent load on both (no faults here: the campaign brings those).
 */
class ChaosMultiInstanceTests {

	private static final int THREADS_PER_INSTANCE = 3;

	private static final int CALLS_PER_THREAD = 8;

	private static final int TOTAL = 2 * THREADS_PER_INSTANCE * CALLS_PER_THREAD;

	@RegisterExtension
	static final SampleInstances instances = new SampleInstances("chaos-multi-instance", List.of("chaos-a", "chaos-b"),
			"--spring.profiles.active=chaos", "--zk.lock.default-wait-time=30s", "--sample.chaos.think-time=10ms");

	@Test
	void fencedIncrementsOnTwoInstancesLoseNoUpdate() throws Exception {
		String name = "two-instances-fenced";
		callConcurrently((instance, op) -> instance.getBean(CounterService.class).incrementFenced(name, op));
		assertNoLostUpdate(name, "fenced");
	}

	@Test
	void asyncIncrementsOnTwoInstancesLoseNoUpdate() throws Exception {
		String name = "two-instances-async";
		callConcurrently((instance, op) -> instance.getBean(CounterService.class)
			.incrementAsync(name, op)
			.get(60, TimeUnit.SECONDS));
		assertNoLostUpdate(name, "async");
	}

	private static void assertNoLostUpdate(String name, String via) {
		CounterState state = instances.instance(0).getBean(CounterService.class).state(name);
		assertThat(state.value()).isEqualTo(TOTAL);
		assertThat(state.ops()).isEqualTo(TOTAL);
		List<Op> ops = jdbc()
			.sql("SELECT new_value, fencing_token, instance_id, via FROM chaos_counter_op WHERE counter_name = :name "
					+ "ORDER BY new_value")
			.param("name", name)
			.query((rs, row) -> new Op(rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getString(4)))
			.list();
		// Each increment read what the one before wrote: the values written are 1 to TOTAL, once each.
		assertThat(ops).extracting(Op::newValue)
			.containsExactlyElementsOf(LongStream.rangeClosed(1, TOTAL).boxed().toList());
		assertThat(ops).extracting(Op::instance).contains("chaos-a", "chaos-b");
		assertThat(ops).extracting(Op::via).containsOnly(via);
		// Through the fence, in the order they wrote: equal within a local hand-off, else higher.
		assertThat(ops).extracting(Op::token).isSorted();
	}

	@Test
	void transfersOnTwoInstancesKeepTheSumAndEveryBalance() throws Exception {
		int accounts = 4;
		long balance = 60;
		instances.instance(0).getBean(TransferService.class).open(accounts, balance, true);
		AtomicInteger refused = new AtomicInteger();
		callConcurrently((instance, op) -> {
			Random random = new Random(op.hashCode());
			int from = random.nextInt(accounts);
			int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
			try {
				instance.getBean(TransferService.class).transfer(from, to, 1 + random.nextInt(40), op);
			}
			catch (InsufficientBalanceException ex) {
				refused.incrementAndGet();
			}
		});
		AccountsState state = instances.instance(1).getBean(TransferService.class).state();
		assertThat(state.sum()).isEqualTo(accounts * balance);
		assertThat(state.minBalance()).isNotNegative();
		assertThat(state.transfers()).isEqualTo(TOTAL - refused.get()).isPositive();
		// Every balance is the opening one moved by the recorded transfers: none was lost.
		Map<Integer, Long> balances = jdbc().sql("SELECT id, balance FROM chaos_account")
			.query((rs, row) -> Map.entry(rs.getInt(1), rs.getLong(2)))
			.list()
			.stream()
			.collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
		for (int account = 0; account < accounts; account++) {
			long moved = jdbc()
				.sql("SELECT COALESCE(SUM(CASE WHEN to_account = :id THEN amount ELSE -amount END), 0) FROM chaos_transfer "
						+ "WHERE from_account = :id OR to_account = :id")
				.param("id", account)
				.query(Long.class)
				.single();
			assertThat(balances.get(account)).as("account %d", account).isEqualTo(balance + moved);
		}
	}

	@Test
	void profileRunsTheScheduledReportEverySecondOnOneInstancePerTick() throws Exception {
		// The default schedule fires every 2 s: two committed ticks 1 s apart show the profile's.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> instances.scheduledJobs().size() == 2 && shortestPeriod("stock-report") == 1000
					&& shortestPeriod("leader-report") == 1000);
		for (ScheduledAudit.JobRuns job : instances.scheduledJobs()) {
			assertThat(job.duplicates()).as(job.toLine()).isZero();
			assertThat(job.duplicateWritesCommitted()).as(job.toLine()).isZero();
		}
	}

	/** The shortest time between two committed ticks of a job, in milliseconds. */
	private static long shortestPeriod(String job) {
		List<Long> ticks = jdbc().sql("SELECT DISTINCT tick FROM job_runs WHERE job = :job ORDER BY tick")
			.param("job", job)
			.query(Long.class)
			.list();
		long shortest = Long.MAX_VALUE;
		for (int i = 1; i < ticks.size(); i++) {
			shortest = Math.min(shortest, ticks.get(i) - ticks.get(i - 1));
		}
		return shortest;
	}

	private static JdbcClient jdbc() {
		return instances.instance(0).getBean(JdbcClient.class);
	}

	/**
	 * Make {@value #CALLS_PER_THREAD} calls from each of {@value #THREADS_PER_INSTANCE} threads per
	 * instance at once, each with an operation id of its own; rethrows what a call threw, such as a
	 * LockAcquisitionException.
	 */
	private static void callConcurrently(SampleInstances.Call call) throws Exception {
		instances.callConcurrently(THREADS_PER_INSTANCE, CALLS_PER_THREAD, Duration.ofSeconds(120), call);
	}

	private record Op(long newValue, long token, String instance, String via) {
	}

}
