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
 * Audits the runs of the sample's scheduled jobs in the shared database: {@code job_attempts}
 * (every time a job's body ran on an instance, with what became of its write) and
 * {@code job_runs} (the writes that committed). For each job: how many ticks ran, how many runs
 * committed, how many ticks ran on more than one instance ({@code duplicates}: runs beyond one per
 * tick), how many of those duplicates committed their write ({@code duplicate_writes_committed}:
 * committed runs beyond one per tick), how many runs the store's fence refused ({@code rejected}),
 * found their tick run already ({@code late}) or found without their lock or leadership term
 * ({@code lost}), and how many ticks between the
 * first and the last ran nowhere ({@code idle_ticks}, taking the shortest gap between ticks as the
 * period). Prints one line per job:
 * <pre>
 * SCHEDULED ticks=30 runs=30 duplicates=0 duplicate_writes_committed=0 rejected=0 late=0 lost=0 idle_ticks=0 job=stock-report by=app-1:11,app-2:10,app-3:9
 * </pre>
 * Usage: {@code ScheduledAudit <jdbc-url> [user] [password] [--zombies]}. Exit status 0 when every
 * job ran at least one tick and no tick ran twice, or with {@code --zombies} (instances were frozen
 * past their sessions on purpose) when no duplicate committed its write; 3 otherwise, 2 on bad
 * arguments.
 */
public final class ScheduledAudit {

	private ScheduledAudit() {
	}

	/**
	 * The runs of one job.
	 *
	 * @param job the job name
	 * @param ticks how many distinct ticks ran (whatever became of their writes)
	 * @param attempts how many times the job's body ran
	 * @param runs how many runs committed their write
	 * @param committedTicks how many distinct ticks committed a write
	 * @param rejected runs the fence refused
	 * @param late runs that found their tick (or a later one) run already and wrote nothing
	 * @param lost runs whose lock or leadership term had ended before they wrote
	 * @param idleTicks ticks between the first and the last that did not run
	 * @param runsByInstance committed runs per instance id
	 */
	public record JobRuns(String job, long ticks, long attempts, long runs, long committedTicks, long rejected,
			long late, long lost, long idleTicks, Map<String, Long> runsByInstance) {

		/**
		 * Return the runs beyond one per tick, whatever became of their writes.
		 * @return attempts minus ticks
		 */
		public long duplicates() {
			return this.attempts - this.ticks;
		}

		/**
		 * Return the committed runs beyond one per tick: duplicate runs that changed the store.
		 * @return runs minus committed ticks
		 */
		public long duplicateWritesCommitted() {
			return this.runs - this.committedTicks;
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
			return "SCHEDULED ticks=" + this.ticks + " runs=" + this.runs + " duplicates=" + duplicates()
					+ " duplicate_writes_committed=" + duplicateWritesCommitted() + " rejected=" + this.rejected
					+ " late=" + this.late + " lost=" + this.lost + " idle_ticks=" + this.idleTicks + " job=" + this.job + " by=" + by;
		}

	}

	/**
	 * Read the runs of every job.
	 * @param connection the database
	 * @return one entry per job, by job name
	 * @throws SQLException if the database cannot be read
	 */
	public static List<JobRuns> read(Connection connection) throws SQLException {
		Map<String, TreeMap<Long, Long>> attemptsByTick = new TreeMap<>();
		Map<String, long[]> outcomes = new TreeMap<>();
		try (PreparedStatement statement = connection
			.prepareStatement("SELECT job, tick, outcome FROM job_attempts ORDER BY job, tick, id");
				ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				String job = rs.getString(1);
				attemptsByTick.computeIfAbsent(job, (key) -> new TreeMap<>()).merge(rs.getLong(2), 1L, Long::sum);
				long[] counts = outcomes.computeIfAbsent(job, (key) -> new long[3]);
				switch (rs.getString(3)) {
					case "rejected" -> counts[0]++;
					case "late" -> counts[1]++;
					case "lost" -> counts[2]++;
					default -> {
						// committed: counted from job_runs
					}
				}
			}
		}
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
		attemptsByTick.forEach((job, ticks) -> {
			long attempts = ticks.values().stream().mapToLong(Long::longValue).sum();
			TreeMap<Long, Long> committed = runsByTick.getOrDefault(job, new TreeMap<>());
			long runs = committed.values().stream().mapToLong(Long::longValue).sum();
			long[] counts = outcomes.get(job);
			jobs.add(new JobRuns(job, ticks.size(), attempts, runs, committed.size(), counts[0], counts[1], counts[2],
					idleTicks(new ArrayList<>(ticks.keySet())), runsByInstance.getOrDefault(job, Map.of())));
		});
		return jobs;
	}

	private static long idleTicks(List<Long> ticks) {
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
	 * @param args the JDBC URL, then optionally user and password, and {@code --zombies}
	 * @throws SQLException if the database cannot be read
	 */
	public static void main(String[] args) throws SQLException {
		List<String> positional = new ArrayList<>();
		boolean zombies = false;
		for (String arg : args) {
			if (arg.equals("--zombies")) {
				zombies = true;
			}
			else {
				positional.add(arg);
			}
		}
		if (positional.isEmpty() || positional.size() > 3) {
			System.err.println("ScheduledAudit: usage: ScheduledAudit <jdbc-url> [user] [password] [--zombies]");
			System.exit(2);
			return;
		}
		List<JobRuns> jobs;
		try (Connection connection = DriverManager.getConnection(positional.get(0),
				(positional.size() > 1) ? positional.get(1) : "sa", (positional.size() > 2) ? positional.get(2) : "")) {
			jobs = read(connection);
		}
		jobs.forEach((job) -> System.out.println(job.toLine()));
		boolean allowDuplicateRuns = zombies;
		boolean ok = !jobs.isEmpty() && jobs.stream()
			.allMatch((job) -> job.duplicateWritesCommitted() == 0 && (allowDuplicateRuns || job.duplicates() == 0));
		if (jobs.isEmpty()) {
			System.err.println("ScheduledAudit: no scheduled job ran");
		}
		System.exit(ok ? 0 : 3);
	}

}
