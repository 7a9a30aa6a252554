package io.github.zklock.sample.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Audits the runs of the sample's scheduled jobs ({@code job_runs}) in the shared database: for
 * each job, how many ticks ran, how many runs there were, how many ticks ran more than once
 * ({@code duplicates}: runs beyond one per tick) and how many ticks between the first and the last
 * ran nowhere ({@code missed}, taking the shortest gap between ticks as the period). Prints one
 * line per job:
 * <pre>
 * SCHEDULED ticks=30 runs=30 duplicates=0 missed=0 job=stock-report by=app-1:11,app-2:10,app-3:9
 * </pre>
 * Usage: {@code ScheduledAudit <jdbc-url> [user] [password]}. Exit status 0 when no job ran a
 * tick twice and every job ran at least one tick, 3 otherwise, 2 on bad arguments.
 */
public final class ScheduledAudit {

	private ScheduledAudit() {
	}

	/**
	 * The runs of one job.
	 *
	 * @param job the job name
	 * @param ticks how many distinct ticks ran
	 * @param runs how many runs there were
	 * @param missed ticks between the first and the last that did not run
	 * @param runsByInstance runs per instance id
	 */
	public record JobRuns(String job, long ticks, long runs, long missed, Map<String, Long> runsByInstance) {

		/**
		 * Return the runs beyond one per tick.
		 * @return runs minus ticks
		 */
		public long duplicates() {
			return this.runs - this.ticks;
		}

		/**
		 * Return the line {@code ./demo.sh} prints.
		 * @return the {@code SCHEDULED ...} line
		 */
		public String toLine() {
			StringBuilder by = new StringBuilder();
			this.runsByInstance.forEach((instance, count) -> by.append(by.isEmpty() ? "" : ",")
				.append(instance)
				.append(':')
				.append(count));
			return "SCHEDULED ticks=" + this.ticks + " runs=" + this.runs + " duplicates=" + duplicates() + " missed="
					+ this.missed + " job=" + this.job + " by=" + by;
		}

	}

	/**
	 * Read the runs of every job.
	 * @param connection the database
	 * @return one entry per job, by job name
	 * @throws SQLException if the database cannot be read
	 */
	public static List<JobRuns> read(Connection connection) throws SQLException {
		Map<String, TreeMap<Long, Long>> runsByTick = new TreeMap<>();
		Map<String, Map<String, Long>> runsByInstance = new TreeMap<>();
		try (PreparedStatement statement = connection
			.prepareStatement("SELECT job, tick, instance_id FROM job_runs ORDER BY job, tick, id");
				ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				String job = rs.getString(1);
				runsByTick.computeIfAbsent(job, (key) -> new TreeMap<>()).merge(rs.getLong(2), 1L, Long::sum);
				runsByInstance.computeIfAbsent(job, (key) -> new TreeMap<>()).merge(rs.getString(3), 1L, Long::sum);
			}
		}
		List<JobRuns> jobs = new ArrayList<>();
		runsByTick.forEach((job, ticks) -> {
			long runs = ticks.values().stream().mapToLong(Long::longValue).sum();
			jobs.add(new JobRuns(job, ticks.size(), runs, missed(new ArrayList<>(ticks.keySet())),
					runsByInstance.get(job)));
		});
		return jobs;
	}

	private static long missed(List<Long> ticks) {
		long period = Long.MAX_VALUE;
		for (int i = 1; i < ticks.size(); i++) {
			period = Math.min(period, ticks.get(i) - ticks.get(i - 1));
		}
		if (ticks.size() < 2 || period <= 0) {
			return 0;
		}
		long expected = (ticks.get(ticks.size() - 1) - ticks.get(0)) / period + 1;
		return expected - ticks.size();
	}

	/**
	 * Print one line per job and exit with the status described on the class.
	 * @param args the JDBC URL, then optionally user and password
	 * @throws SQLException if the database cannot be read
	 */
	public static void main(String[] args) throws SQLException {
		if (args.length < 1 || args.length > 3) {
			System.err.println("ScheduledAudit: usage: ScheduledAudit <jdbc-url> [user] [password]");
			System.exit(2);
			return;
		}
		List<JobRuns> jobs;
		try (Connection connection = DriverManager.getConnection(args[0], (args.length > 1) ? args[1] : "sa",
				(args.length > 2) ? args[2] : "")) {
			jobs = read(connection);
		}
		jobs.forEach((job) -> System.out.println(job.toLine()));
		boolean ok = !jobs.isEmpty() && jobs.stream().allMatch((job) -> job.duplicates() == 0);
		if (jobs.isEmpty()) {
			System.err.println("ScheduledAudit: no scheduled job ran");
		}
		System.exit(ok ? 0 : 3);
	}

}
