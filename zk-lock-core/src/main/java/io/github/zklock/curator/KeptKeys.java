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

	/** Kept lines by when they were kept (the registry's clock), oldest first. Guarded by this. */
	private final LinkedHashMap<LockKey.Line, Long> lines = new LinkedHashMap<>();

	private final AtomicInteger kept = new AtomicInteger();

	private final LongAdder grants = new LongAdder();

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
