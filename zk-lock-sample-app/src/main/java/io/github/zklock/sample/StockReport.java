package io.github.zklock.sample;

import java.time.ZonedDateTime;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.zklock.Leadership;
import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.transaction.JdbcLockFence;
import io.github.zklock.transaction.StaleFencingTokenException;

/**
 * A stock report that every instance schedules on the same cron expression but that should run
 * once per tick across all instances, in the two ways zk-lock offers:
 * <ul>
 * <li>{@link #report()}: a lock that is skipped when busy and kept at least
 * {@code sample.report.lock-at-least-for} after its grant, so an instance that fires the same tick
 * a little later finds it taken;</li>
 * <li>{@link #leaderReport()}: runs only on the leader of the group {@code stock-report}.</li>
 * </ul>
 * Neither is proof against a process pause: an instance frozen past its ZooKeeper session while it
 * holds the lock or leads, and resumed after another took over, runs on as a zombie. So each run
 * writes through a fence ({@link JdbcLockFence}, table {@code job_fence}) with the fencing token of
 * its lock or of its leadership term ({@link Leadership#term(String)}), in one transaction with its
 * row in {@code job_runs}: a zombie's write carries an older token than the newer holder's and is
 * rolled back. A new leader writes its token to the fence as soon as it is granted, so that a
 * zombie leader's run is refused even before the new leader's first tick. A fence cannot refuse a
 * late run with a newer grant (a resumed instance's scheduler fires the tick it missed, after the
 * tick's lock was released, and takes the lock anew): under the fence's row lock, a run writes
 * nothing if a run of the same or a later tick committed already. Every run is also
 * recorded in {@code job_attempts} with its outcome, which {@code ./demo.sh} audits for ticks run
 * twice and for duplicate writes that committed. Off with {@code sample.report.enabled=false}.
 */
@Component
@ConditionalOnBooleanProperty(name = "sample.report.enabled", matchIfMissing = true)
public class StockReport {

	/** The leadership group of {@link #leaderReport()}. */
	static final String GROUP = "stock-report";

	private static final Log logger = LogFactory.getLog(StockReport.class);

	private final JdbcClient jdbcClient;

	private final TransactionTemplate transaction;

	private final JdbcLockFence fence;

	private final Leadership leadership;

	private final CronExpression cron;

	private final String instanceId;

	/**
	 * Create the report.
	 * @param jdbcClient the client on the application's data source
	 * @param dataSource the application's data source, for the fence
	 * @param transactionManager its transaction manager
	 * @param leadership the leadership of the group {@code stock-report}
	 * @param cron the schedule of both jobs, to know which tick a run belongs to
	 * @param properties the instance id
	 */
	public StockReport(JdbcClient jdbcClient, DataSource dataSource, PlatformTransactionManager transactionManager,
			Leadership leadership, @Value("${sample.report.cron}") String cron, SampleProperties properties) {
		this.jdbcClient = jdbcClient;
		this.transaction = new TransactionTemplate(transactionManager);
		this.fence = JdbcLockFence.fenceTable(dataSource, "job_fence");
		this.leadership = leadership;
		this.cron = CronExpression.parse(cron);
		this.instanceId = properties.getInstanceId();
	}

	/**
	 * Report the stock once per tick on whichever instance gets the lock first.
	 */
	@Scheduled(cron = "${sample.report.cron}")
	@DistributedLock(path = "/jobs/stock-report", waitTime = "0", onBusy = OnBusy.SKIP,
			lockAtLeastFor = "${sample.report.lock-at-least-for}")
	public void report() {
		record("stock-report", LockContext.require());
	}

	/**
	 * Report the stock once per tick on the leader of the group {@code stock-report}.
	 */
	@Scheduled(cron = "${sample.report.cron}")
	@LeaderOnly(group = GROUP)
	public void leaderReport() {
		LockHandle term = this.leadership.term(GROUP).orElse(null);
		if (term == null) {
			// The term ended between the leadership check and here.
			attempt("leader-report", tick(), "lost");
			return;
		}
		record("leader-report", term);
	}

	/**
	 * Write a new leader's token to the fence at once: from then on, the writes of the previous
	 * leader (a zombie, if it was paused rather than gone) are refused.
	 * @param event the grant
	 */
	@EventListener
	public void fenceOnTakeover(LeadershipGrantedEvent event) {
		if (!GROUP.equals(event.group())) {
			return;
		}
		this.leadership.term(GROUP).ifPresent((term) -> {
			try {
				this.transaction.executeWithoutResult((status) -> this.fence.advance(term));
			}
			catch (LockLostException ex) {
				// A newer leader wrote already, or this term ended: nothing to fence.
				logger.info("Leadership of " + GROUP + " not fenced on " + this.instanceId + ": " + ex.getMessage());
			}
		});
	}

	private void record(String job, LockHandle grant) {
		long tick = tick();
		String outcome;
		try {
			long units = this.transaction.execute((status) -> {
				// Fence first, then read and write: a zombie is refused before it reads. The fence's
				// row lock also orders the runs of this job, so the check below sees every earlier one.
				this.fence.advance(grant);
				long later = this.jdbcClient.sql("SELECT COUNT(*) FROM job_runs WHERE job = :job AND tick >= :tick")
					.param("job", job)
					.param("tick", tick)
					.query(Long.class)
					.single();
				if (later > 0) {
					// A late fire of a tick already run (a scheduler resumed after a pause fires the
					// tick it missed): its grant is newer, so the fence lets it in, but it must not run
					// the tick again.
					return -1L;
				}
				long stock = this.jdbcClient.sql("SELECT COALESCE(SUM(quantity), 0) FROM stock")
					.query(Long.class)
					.single();
				this.jdbcClient
					.sql("INSERT INTO job_runs (job, tick, instance_id, units_in_stock) "
							+ "VALUES (:job, :tick, :instance, :units)")
					.param("job", job)
					.param("tick", tick)
					.param("instance", this.instanceId)
					.param("units", stock)
					.update();
				return stock;
			});
			outcome = (units < 0) ? "late" : "committed";
			if (logger.isInfoEnabled()) {
				logger.info(job + " on " + this.instanceId + ": "
						+ ((units < 0) ? "tick already run, nothing written" : units + " units in stock"));
			}
		}
		catch (StaleFencingTokenException ex) {
			outcome = "rejected";
			logger.warn(job + " on " + this.instanceId + " refused by the fence: " + ex.getMessage());
		}
		catch (LockLostException ex) {
			outcome = "lost";
			logger.warn(job + " on " + this.instanceId + " ran after its lock or term ended: " + ex.getMessage());
		}
		attempt(job, tick, outcome);
	}

	private void attempt(String job, long tick, String outcome) {
		this.jdbcClient
			.sql("INSERT INTO job_attempts (job, tick, instance_id, outcome) VALUES (:job, :tick, :instance, :outcome)")
			.param("job", job)
			.param("tick", tick)
			.param("instance", this.instanceId)
			.param("outcome", outcome)
			.update();
	}

	/** The tick this run serves: the latest fire time of the schedule at or before now. */
	private long tick() {
		ZonedDateTime now = ZonedDateTime.now();
		ZonedDateTime fired = now;
		@Nullable ZonedDateTime next = this.cron.next(now.minusHours(1));
		while (next != null && !next.isAfter(now)) {
			fired = next;
			next = this.cron.next(next);
		}
		return fired.toInstant().toEpochMilli();
	}

}
