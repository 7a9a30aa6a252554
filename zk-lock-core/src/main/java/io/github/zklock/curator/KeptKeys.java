package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The lines of this application whose znodes are kept (see {@link KeptLocks}), least recently kept
 * first, for the bounds on their number and idle time; and what kept locks counted, for the meters.
 * A line enters when its last local grant ends and it keeps its znode; an entry may outlive the
 * keeping (the line was used again, or gave the znode up): whoever acts on an entry asks the line,
 * under its key's monitor, whether it still keeps the znode it kept then ({@code keptSince}).
 *
 * <p>Lock order: a key's monitor, then this object's; nothing here calls into a key while holding
 * this monitor.
 */
final class KeptKeys {

	/** Why a kept znode was given up: the {@code cause} of the give-up meter. */
	enum Cause {

		/** Another participant queued for the key. */
		ASKED("asked"),

		/** Unused for {@link KeptLocks#maxIdle()}. */
		IDLE("idle"),

		/** More keys were kept than {@link KeptLocks#maxKeys()}. */
		MAX_KEYS("max-keys"),

		/** Revoked, or deleted by another client. */
		REVOKED("revoked"),

		/** Its session was lost, or the connection as a request came. */
		SESSION("session"),

		/** The registry was closed. */
		CLOSED("closed");

		private final String tag;

		Cause(String tag) {
			this.tag = tag;
		}

		/** The meter's tag value. */
		String tag() {
			return this.tag;
		}

	}

	/** Schedules a task on the registry's timer; {@code null} once the timer is shut down. */
	@FunctionalInterface
	interface Timer {

		@Nullable Future<?> schedule(Runnable task, long delayNanos);

	}

	/** The most links of a contested line that are not kept in a row (see {@link #givenUpUnused}). */
	static final int MAX_SKIPPED = 63;

	/**
	 * The lines whose kept znodes were given up unused (another participant asked before a grant of
	 * this application rode them), by {@link LockKey.Line#name()}, least recently touched first;
	 * at most {@link KeptLocks#maxKeys()} of them. Guarded by this.
	 */
	private final LinkedHashMap<String, Contest> contested = new LinkedHashMap<>(16, 0.75f, true);

	/**
	 * The size of {@link #contested}, read without the monitor: while it is 0, a kept grant and a
	 * keeping decision take no lock here. (A line's own changes are made under its key's monitor,
	 * which orders them for that line.)
	 */
	private volatile int contestedCount;

	/** Kept lines by when they were kept (the registry's clock), oldest first. Guarded by this. */
	private final LinkedHashMap<LockKey.Line, Long> lines = new LinkedHashMap<>();

	private final AtomicInteger kept = new AtomicInteger();

	private final LongAdder grants = new LongAdder();

	private final LongAdder skipped = new LongAdder();

	private final Map<Cause, LongAdder> givenUp = new EnumMap<>(Cause.class);

	private final Timer timer;

	private final LongSupplier clock;

	private final Supplier<KeptLocks> settings;

	/** Whether a sweep of idle lines is scheduled. Guarded by this. */
	private boolean sweepScheduled;

	/** Whether the registry closed: nothing is kept any more. Guarded by this. */
	private boolean closed;

	KeptKeys(Timer timer, LongSupplier clock, Supplier<KeptLocks> settings) {
		this.timer = timer;
		this.clock = clock;
		this.settings = settings;
		for (Cause cause : Cause.values()) {
			this.givenUp.put(cause, new LongAdder());
		}
	}

	/**
	 * A line keeps its znode from now on. Under its key's monitor.
	 * @param line the line
	 * @param keptSince when, by the registry's clock
	 * @return the lines to give up, as more are kept than the bound (their entries removed); to be
	 * asked once the key's monitor is released, each with the time it was kept
	 */
	synchronized Map<LockKey.Line, Long> keep(LockKey.Line line, long keptSince) {
		this.lines.remove(line);
		this.lines.put(line, keptSince);
		Map<LockKey.Line, Long> evicted = Map.of();
		int maxKeys = this.settings.get().maxKeys();
		if (this.lines.size() > maxKeys) {
			evicted = new LinkedHashMap<>();
			Iterator<Map.Entry<LockKey.Line, Long>> eldest = this.lines.entrySet().iterator();
			while (this.lines.size() > maxKeys && eldest.hasNext()) {
				Map.Entry<LockKey.Line, Long> entry = eldest.next();
				if (entry.getKey() != line) {
					evicted.put(entry.getKey(), entry.getValue());
					eldest.remove();
				}
			}
		}
		if (!this.sweepScheduled) {
			this.sweepScheduled = true;
			scheduleSweep(this.settings.get().maxIdle().toNanos());
		}
		return evicted;
	}

	/** Whether the registry is closed: a line keeps nothing then. */
	synchronized boolean closed() {
		return this.closed;
	}

	/** A line no longer keeps its znode (given up, or granted from it). */
	synchronized void forget(LockKey.Line line) {
		this.lines.remove(line);
	}

	/**
	 * A kept znode of a line was given up because another participant asked for it, and no grant
	 * of this application rode it while it was kept: keeping it saved nothing and cost the other
	 * participant a give-up. From the second such give-up in a row, the line's next znodes are not
	 * kept: 1, then 3, 7, ... up to {@value #MAX_SKIPPED} of them, until a grant rides a kept znode
	 * of the line again ({@link #keptPaidOff}). So a key that alternates between applications soon
	 * costs what it costs with kept locks off, and a key that stays with this application is kept
	 * as before. Under the key's monitor.
	 * @param line the line's name
	 */
	synchronized void givenUpUnused(String line) {
		Contest contest = this.contested.computeIfAbsent(line, (name) -> new Contest());
		contest.streak++;
		contest.skip = Math.min((1 << Math.min(contest.streak - 1, 30)) - 1, MAX_SKIPPED);
		int maxKeys = this.settings.get().maxKeys();
		Iterator<String> eldest = this.contested.keySet().iterator();
		while (this.contested.size() > maxKeys && eldest.hasNext()) {
			eldest.next();
			eldest.remove();
		}
		this.contestedCount = this.contested.size();
	}

	/** A grant rode a kept znode of the line: it is no longer contested. Under the key's monitor. */
	void keptPaidOff(String line) {
		if (this.contestedCount == 0) {
			return;
		}
		synchronized (this) {
			this.contested.remove(line);
			this.contestedCount = this.contested.size();
		}
	}

	/**
	 * Whether a line that could keep its znode now does not, as it is contested (see
	 * {@link #givenUpUnused}); each answer {@code true} counts one of the znodes it skips. Under the
	 * key's monitor.
	 * @param line the line's name
	 */
	boolean skipsKeeping(String line) {
		if (this.contestedCount == 0) {
			return false;
		}
		synchronized (this) {
			Contest contest = this.contested.get(line);
			if (contest == null || contest.skip == 0) {
				return false;
			}
			contest.skip--;
		}
		this.skipped.increment();
		return true;
	}

	/**
	 * Count a znode not kept because it moved here from another participant (see
	 * {@code LockKey.Line#keeps}).
	 */
	void skippedMovedHere() {
		this.skipped.increment();
	}

	/** Znodes not kept so far because their line was contested or their znode moved here. */
	long skippedKeeping() {
		return this.skipped.sum();
	}

	/** Counted by the key's monitor, read by the gauge. */
	void keptChanged(int delta) {
		this.kept.addAndGet(delta);
	}

	void grantedFromKept() {
		this.grants.increment();
	}

	void gaveUp(Cause cause) {
		this.givenUp.get(cause).increment();
	}

	/** How many keys keep their znode now. */
	int keptCount() {
		return this.kept.get();
	}

	/** Grants made on a kept znode so far. */
	long keptGrants() {
		return this.grants.sum();
	}

	/** Kept znodes given up so far for a cause. */
	long givenUp(Cause cause) {
		return this.givenUp.get(cause).sum();
	}

	/**
	 * Take every entry out: the registry closes, or the session was lost.
	 * @param close whether nothing may be kept afterwards
	 */
	synchronized Map<LockKey.Line, Long> drain(boolean close) {
		if (close) {
			this.closed = true;
		}
		Map<LockKey.Line, Long> all = new LinkedHashMap<>(this.lines);
		this.lines.clear();
		return all;
	}

	/** A contested line: its unused give-ups in a row, and how many of its next znodes are not kept. */
	private static final class Contest {

		int streak;

		int skip;

	}

	private void scheduleSweep(long delayNanos) {
		if (this.timer.schedule(this::sweep, Math.max(delayNanos, TimeUnit.MILLISECONDS.toNanos(1))) == null) {
			this.sweepScheduled = false;
		}
	}

	/** Give up the lines kept longer than the maximum idle time; run again at the next one's. */
	private void sweep() {
		List<Map.Entry<LockKey.Line, Long>> idle = new ArrayList<>();
		long maxIdle = this.settings.get().maxIdle().toNanos();
		synchronized (this) {
			this.sweepScheduled = false;
			long now = this.clock.getAsLong();
			Iterator<Map.Entry<LockKey.Line, Long>> eldest = this.lines.entrySet().iterator();
			Long next = null;
			while (eldest.hasNext()) {
				Map.Entry<LockKey.Line, Long> entry = eldest.next();
				if (now - entry.getValue() < maxIdle) {
					next = entry.getValue();
					break;
				}
				idle.add(Map.entry(entry.getKey(), entry.getValue()));
				eldest.remove();
			}
			if (next != null && !this.closed) {
				this.sweepScheduled = true;
				scheduleSweep(next + maxIdle - now);
			}
		}
		for (Map.Entry<LockKey.Line, Long> entry : idle) {
			entry.getKey().giveUpKept(entry.getValue(), Cause.IDLE);
		}
	}

}
