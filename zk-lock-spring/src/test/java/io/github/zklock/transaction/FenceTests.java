package io.github.zklock.transaction;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the fence suites of JDBC and R2DBC ({@link AbstractJdbcLockFenceTests},
 * {@link AbstractR2dbcLockFenceTests}) share: the two transactions of a test taking turns, and
 * how each database shows a session that waits for a lock.
 */
final class FenceTests {

	/** The start of a fence table insert, also MariaDB's upsert. */
	static final String INSERT_PREFIX = "INSERT INTO zk_lock_fence";

	private static final Pattern NAMED = Pattern.compile(":([a-z]+)");

	private FenceTests() {
	}

	/** Wait for the test to let a transaction go on, at most 10 s. */
	static void awaitRelease(CountDownLatch latch) {
		try {
			assertThat(latch.await(10, TimeUnit.SECONDS)).as("released within 10 s").isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Start two transactions at one moment, at most 10 s apart. */
	static void awaitBarrier(CyclicBarrier barrier) {
		try {
			barrier.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (BrokenBarrierException | TimeoutException ex) {
			throw new IllegalStateException("The other transaction did not start within 10 s", ex);
		}
	}

	/** Run a task in a new thread, as another process would. */
	static <T> CompletableFuture<T> inNewThread(Supplier<T> task) {
		return CompletableFuture.supplyAsync(task, (runnable) -> new Thread(runnable).start());
	}

	static List<String> concat(List<String> first, String... then) {
		return concat(first, List.of(then));
	}

	static List<String> concat(List<String> first, List<String> then) {
		List<String> all = new ArrayList<>(first);
		all.addAll(then);
		return all;
	}

	/**
	 * H2's sessions executing such a statement: H2 shows a wait for a row lock as BLOCKED, a wait
	 * for a key another transaction inserted as running, and nothing else runs while a test waits.
	 */
	static int h2Waiting(JdbcTemplate jdbc, String sqlPrefix) {
		return jdbc.queryForObject("SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE EXECUTING_STATEMENT LIKE ?",
				Integer.class, sqlPrefix + "%");
	}

	/** Sessions of the test's PostgreSQL database waiting for a lock (a row's or a transaction's). */
	static int postgreSqlWaiting(JdbcTemplate jdbc, String sqlPrefix) {
		return jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
				+ "AND wait_event_type = 'Lock' AND query LIKE ?", Integer.class, sqlPrefix + "%");
	}

	/** Sessions of the test's MariaDB database whose InnoDB transaction waits for a lock. */
	static int mariaDbWaiting(JdbcTemplate jdbc, String sqlPrefix) {
		return jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.INNODB_TRX t "
				+ "JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
				+ "WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE() AND p.INFO LIKE ?", Integer.class,
				sqlPrefix + "%");
	}

	/**
	 * A statement with the R2DBC fence's named markers as a driver with indexed markers receives it
	 * (H2, PostgreSQL): each name one marker, {@code $1} first, in the order the names first appear.
	 */
	static String indexedMarkers(String named) {
		Map<String, Integer> indexes = new LinkedHashMap<>();
		Matcher matcher = NAMED.matcher(named);
		StringBuilder sql = new StringBuilder();
		while (matcher.find()) {
			int index = indexes.computeIfAbsent(matcher.group(1), (name) -> indexes.size() + 1);
			matcher.appendReplacement(sql, "\\$" + index);
		}
		matcher.appendTail(sql);
		return sql.toString();
	}

}
