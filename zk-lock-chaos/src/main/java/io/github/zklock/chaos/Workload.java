package io.github.zklock.chaos;

import java.util.Random;

/**
 * The workloads of a campaign: each an HTTP operation of the sample application's {@code chaos}
 * profile (or its stock sale), a key or keys it locks, and a checker over the rows it commits.
 */
enum Workload {

	/** A counter read and written under one lock, its writes fenced by the store ({@code JdbcLockFence}). */
	FENCED_COUNTER("fenced-counter", true),

	/** The same counter code under the same kind of lock, without the fence: expected to lose updates under pauses. */
	UNFENCED_COUNTER("unfenced-counter", false),

	/** The fenced counter through asynchronous grants (no thread waits). */
	ASYNC_COUNTER("async-counter", true),

	/** A transfer between two accounts under a multi-lock on both, fenced on both rows. */
	TRANSFER("transfer", true),

	/** The sample's stock sale (a read/write lock per SKU, fenced on the stock row). */
	STOCK_SALE("stock-sale", true),

	/**
	 * The sample's reactive stock sale: the same sale as a {@code Mono} on R2DBC, under the same
	 * kind of lock, fenced on its stock row by {@code R2dbcLockFence}; a SKU of its own.
	 */
	REACTIVE_STOCK_SALE("reactive-stock-sale", true),

	/** The sample's {@code @LeaderOnly} job: one committed effect per tick at most; no client calls. */
	LEADER_JOB("leader-job", true);


	/** The SKU of the stock sale. */
	static final String SKU = "chaos-sku";

	/** The SKU of the reactive stock sale. */
	static final String REACTIVE_SKU = "chaos-sku-reactive";

	/** How many accounts the transfers move money between. */
	static final int ACCOUNTS = 5;

	/** Each account's opening balance. */
	static final int OPENING_BALANCE = 1000;

	private final String label;

	private final boolean fenced;

	Workload(String label, boolean fenced) {
		this.label = label;
		this.fenced = fenced;
	}

	/** The name in the report and the history. */
	String label() {
		return this.label;
	}

	/**
	 * The workload of a label.
	 * @throws IllegalArgumentException if no workload has it
	 */
	static Workload byLabel(String label) {
		for (Workload workload : values()) {
			if (workload.label.equals(label)) {
				return workload;
			}
		}
		throw new IllegalArgumentException("No workload " + label);
	}

	/** Whether its writes go through the store's fence: its checker must find no violation. */
	boolean fenced() {
		return this.fenced;
	}

	/** Whether clients call it (the leader job runs by itself in the instances). */
	boolean called() {
		return this != LEADER_JOB;
	}

	/**
	 * The counter a counter workload's clients share (a row of {@code chaos_counter}, a key
	 * {@code /chaos/counter/<name>}): one per workload, so that grants pass between instances.
	 */
	String counter() {
		return this.label;
	}

	/**
	 * The path and query of one operation.
	 * @param operation the operation id
	 * @param random the client's random source (accounts and amounts of a transfer)
	 */
	String request(String operation, Random random) {
		return switch (this) {
			case FENCED_COUNTER -> "/chaos/counter/fenced/" + counter() + "?op=" + operation;
			case UNFENCED_COUNTER -> "/chaos/counter/unfenced/" + counter() + "?op=" + operation;
			case ASYNC_COUNTER -> "/chaos/counter/async/" + counter() + "?op=" + operation;
			case TRANSFER -> {
				int from = random.nextInt(ACCOUNTS);
				int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
				yield "/chaos/transfer?from=" + from + "&to=" + to + "&amount=" + (1 + random.nextInt(50)) + "&op="
						+ operation;
			}
			case STOCK_SALE -> "/api/stock/" + SKU + "/purchase?quantity=1";
			case REACTIVE_STOCK_SALE -> "/api/reactive/stock/" + REACTIVE_SKU + "/purchase?quantity=1";
			case LEADER_JOB -> throw new IllegalStateException("The leader job is not called");
		};
	}

}
