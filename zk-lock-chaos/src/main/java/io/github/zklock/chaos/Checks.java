package io.github.zklock.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The checkers of a campaign: each compares what a workload's clients were told (the
 * {@link History}) with what its rows in the database say, and lists the violations. Pure
 * functions over rows read by {@link CampaignDatabase}.
 *
 * <p>What each finds:
 * <ul>
 * <li>every workload: an operation answered with success whose row is missing (an acknowledged
 * write lost), an operation answered with failure whose row is there (a failure told although it
 * committed);</li>
 * <li>a counter: two committed increments that wrote the same value (a lost update: both read the
 * same value), a final value other than the number of committed increments, and, in the order of
 * the values, a fencing token lower than the one before (a write of an older grant after a newer
 * grant's: what the fence exists to refuse; grants handed over locally within one instance share
 * their znode's token, so equal tokens are fine);</li>
 * <li>the transfers: the sum of the balances changed, or a balance went negative;</li>
 * <li>the stock sale: the stock left plus the units sold differs from the stock at the start (a lost
 * update), or more was sold than there was (an oversell);</li>
 * <li>the leader job: a tick whose effect committed twice.</li>
 * </ul>
 */
final class Checks {

	private Checks() {
	}

	/**
	 * A workload's counts and violations.
	 * @param workload the workload
	 * @param operations operations its clients made (the leader job's: its committed runs, see
	 * {@link #leaderJob})
	 * @param ok answered with success
	 * @param failed answered with failure
	 * @param unknown without a usable answer
	 * @param reasons per reason (failed and unknown operations), how many
	 * @param violations what the checker found, one line each
	 */
	record Result(Workload workload, long operations, long ok, long failed, long unknown, Map<String, Long> reasons,
			List<String> violations) {

		static Result of(Workload workload, List<History.Operation> operations, List<String> violations) {
			Map<String, Long> reasons = operations.stream()
				.filter((operation) -> operation.outcome() != History.Outcome.OK)
				.collect(Collectors.groupingBy(History.Operation::reason, java.util.TreeMap::new, Collectors.counting()));
			return new Result(workload, operations.size(), count(operations, History.Outcome.OK),
					count(operations, History.Outcome.FAIL), count(operations, History.Outcome.UNKNOWN), reasons,
					List.copyOf(violations));
		}

		private static long count(List<History.Operation> operations, History.Outcome outcome) {
			return operations.stream().filter((operation) -> operation.outcome() == outcome).count();
		}

	}

	/**
	 * One committed increment of a counter.
	 * @param operation its operation id
	 * @param value the value it wrote
	 * @param token its grant's fencing token
	 */
	record Increment(String operation, long value, long token) {
	}

	/**
	 * Check a counter.
	 * @param operations what its clients were told
	 * @param increments its committed increments
	 * @param finalValue the counter's value at the end
	 */
	static List<String> counter(List<History.Operation> operations, List<Increment> increments, long finalValue) {
		List<String> violations = new ArrayList<>(
				answers(operations, increments.stream().map(Increment::operation).collect(Collectors.toSet())));
		Map<Long, List<Increment>> byValue = increments.stream()
			.collect(Collectors.groupingBy(Increment::value, HashMap::new, Collectors.toList()));
		byValue.forEach((value, writers) -> {
			if (writers.size() > 1) {
				violations.add("lost update: value " + value + " written by "
						+ writers.stream().map(Increment::operation).sorted().toList());
			}
		});
		if (finalValue != increments.size()) {
			violations.add("final value " + finalValue + " but " + increments.size() + " increments committed");
		}
		List<Increment> inOrder = increments.stream()
			.sorted(Comparator.comparingLong(Increment::value).thenComparing(Increment::operation))
			.toList();
		for (int i = 1; i < inOrder.size(); i++) {
			Increment before = inOrder.get(i - 1);
			Increment after = inOrder.get(i);
			if (after.token() < before.token()) {
				violations.add("token went back: " + after.operation() + " (token " + after.token() + ") wrote value "
						+ after.value() + " after " + before.operation() + " (token " + before.token() + ")");
			}
		}
		return violations;
	}

	/**
	 * Check the transfers.
	 * @param operations what their clients were told
	 * @param committed the operation ids of the committed transfers
	 * @param balances every account's balance at the end
	 * @param expectedTotal the sum at the start
	 */
	static List<String> transfers(List<History.Operation> operations, Set<String> committed,
			Collection<Long> balances, long expectedTotal) {
		List<String> violations = new ArrayList<>(answers(operations, committed));
		long total = balances.stream().mapToLong(Long::longValue).sum();
		if (total != expectedTotal) {
			violations.add("sum of balances " + total + ", expected " + expectedTotal);
		}
		balances.stream()
			.filter((balance) -> balance < 0)
			.forEach((balance) -> violations.add("negative balance " + balance));
		return violations;
	}

	/**
	 * Check the stock sale.
	 * @param okAnswers operations answered with success (a unit sold each)
	 * @param initialStock the stock at the start
	 * @param stockLeft the stock at the end
	 * @param unitsSold the units of the orders recorded
	 */
	static List<String> stock(long okAnswers, long initialStock, long stockLeft, long unitsSold) {
		List<String> violations = new ArrayList<>();
		if (stockLeft + unitsSold != initialStock) {
			violations.add("lost update: " + stockLeft + " left + " + unitsSold + " sold != " + initialStock);
		}
		if (unitsSold > initialStock) {
			violations.add("oversold: " + unitsSold + " sold of " + initialStock);
		}
		if (okAnswers > unitsSold) {
			violations.add(okAnswers + " sales answered, " + unitsSold + " recorded");
		}
		return violations;
	}

	/**
	 * Check the leader job. No client calls it, so its history is empty: its result counts the
	 * committed runs examined here instead, each one {@code ok} (a run that did not commit is no
	 * row of {@code job_runs}; the campaign's {@code LEADER_JOB} line counts those by outcome).
	 * @param committedRunsPerTick per job and tick, how many runs committed
	 * @return as many operations and ok as committed runs, none failed or unknown, a violation
	 * per tick committed more than once
	 */
	static Result leaderJob(Map<String, Integer> committedRunsPerTick) {
		List<String> violations = new ArrayList<>();
		committedRunsPerTick.forEach((tick, runs) -> {
			if (runs > 1) {
				violations.add("tick " + tick + " committed " + runs + " times");
			}
		});
		long runs = committedRunsPerTick.values().stream().mapToLong(Integer::longValue).sum();
		return new Result(Workload.LEADER_JOB, runs, runs, 0, 0, Map.of(), List.copyOf(violations));
	}

	/** Successes without their row, failures with theirs. */
	private static List<String> answers(List<History.Operation> operations, Set<String> committed) {
		List<String> violations = new ArrayList<>();
		for (History.Operation operation : operations) {
			boolean there = committed.contains(operation.id());
			if (operation.outcome() == History.Outcome.OK && !there) {
				violations.add("acknowledged but not committed: " + operation.id());
			}
			else if (operation.outcome() == History.Outcome.FAIL && there) {
				violations.add("answered " + operation.status() + " but committed: " + operation.id());
			}
		}
		return violations;
	}

}
