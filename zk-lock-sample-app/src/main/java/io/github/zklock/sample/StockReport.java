package io.github.zklock.sample;

import java.time.ZonedDateTime;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.stereotype.Component;

import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LeaderOnly;

/**
 * A stock report that every instance schedules on the same cron expression but that should run
 * once per tick across all instances, in the two ways zk-lock offers:
 * <ul>
 * <li>{@link #report()}: a lock that is skipped when busy and kept at least
 * {@code sample.report.lock-at-least-for} after its grant, so an instance that fires the same tick
 * a little later finds it taken;</li>
 * <li>{@link #leaderReport()}: runs only on the leader of the group {@code stock-report}.</li>
 * </ul>
 * Each run is recorded in {@code job_runs} with the tick it belongs to (the cron fire time), which
 * {@code ./demo.sh} audits for ticks run twice. Off with {@code sample.report.enabled=false}.
 */
@Component
@ConditionalOnBooleanProperty(name = "sample.report.enabled", matchIfMissing = true)
public class StockReport {

	private static final Log logger = LogFactory.getLog(StockReport.class);

	private final JdbcClient jdbcClient;

	private final CronExpression cron;

	private final String instanceId;

	/**
	 * Create the report.
	 * @param jdbcClient the client on the application's data source
	 * @param cron the schedule of both jobs, to know which tick a run belongs to
	 * @param properties the instance id
	 */
	public StockReport(JdbcClient jdbcClient, @Value("${sample.report.cron}") String cron,
			SampleProperties properties) {
		this.jdbcClient = jdbcClient;
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
		record("stock-report");
	}

	/**
	 * Report the stock once per tick on the leader of the group {@code stock-report}.
	 */
	@Scheduled(cron = "${sample.report.cron}")
	@LeaderOnly(group = "stock-report")
	public void leaderReport() {
		record("leader-report");
	}

	private void record(String job) {
		ZonedDateTime now = ZonedDateTime.now();
		long tick = firedAt(now).toInstant().toEpochMilli();
		long units = this.jdbcClient.sql("SELECT COALESCE(SUM(quantity), 0) FROM stock").query(Long.class).single();
		this.jdbcClient
			.sql("INSERT INTO job_runs (job, tick, instance_id, units_in_stock) VALUES (:job, :tick, :instance, :units)")
			.param("job", job)
			.param("tick", tick)
			.param("instance", this.instanceId)
			.param("units", units)
			.update();
		if (logger.isInfoEnabled()) {
			logger.info(job + " on " + this.instanceId + ": " + units + " units in stock");
		}
	}

	/** The latest fire time of the schedule at or before {@code now}: the tick this run serves. */
	private ZonedDateTime firedAt(ZonedDateTime now) {
		ZonedDateTime fired = now;
		@Nullable ZonedDateTime next = this.cron.next(now.minusHours(1));
		while (next != null && !next.isAfter(now)) {
			fired = next;
			next = this.cron.next(next);
		}
		return fired;
	}

}
