package io.github.zklock.actuate;

import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.github.zklock.LockState;
import io.github.zklock.LockMode;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * Meters of the lock registry: the gauge {@code zk.lock.active} (grants held now), the counter
 * {@code zk.lock.lost} (grants lost with their session, revoked or ended by their ceiling, tagged by
 * {@code mode}), the gauge {@code zk.lock.connected} (1 while connected to ZooKeeper, else 0), the
 * gauge {@code zk.lock.ceiling.used} (the largest share of its {@code lockAtMostFor} that a held
 * grant has used, 0 to 1) and the counter {@code zk.lock.ceiling.ended} (grants ended by their
 * ceiling), and those of kept
 * locks: the gauge {@code zk.lock.kept} (znodes kept now), the counters
 * {@code zk.lock.kept.grants} (grants made on them), {@code zk.lock.kept.given.up} (znodes
 * deleted, tagged by {@code cause}) and {@code zk.lock.kept.skipped} (znodes not kept because
 * their key was being taken in turns, or visited from elsewhere). The
 * timers {@code zk.lock.acquire} and {@code zk.lock.held} come from the observations of
 * {@link io.github.zklock.LockTemplate}. No meter is tagged with a lock path: paths are
 * unbounded.
 */
public class ZkLockMetrics implements MeterBinder {

	private final CuratorLockAdmin admin;

	/**
	 * Create the binder.
	 * @param admin the operator side of the lock registry to measure
	 */
	public ZkLockMetrics(CuratorLockAdmin admin) {
		this.admin = admin;
	}

	@Override
	public void bindTo(MeterRegistry meterRegistry) {
		Gauge.builder("zk.lock.active", this.admin, CuratorLockAdmin::heldLockCount)
			.description("Lock grants held by this application")
			.register(meterRegistry);
		Gauge.builder("zk.lock.connected", this.admin, (admin) -> admin.isConnected() ? 1 : 0)
			.description("1 while the application is connected to ZooKeeper, 0 while the connection is suspended or "
					+ "its session lost")
			.register(meterRegistry);
		Gauge.builder("zk.lock.ceiling.used", this.admin, (admin) -> admin.ceilingUsedShare(Instant.now()))
			.description("The largest share of its lockAtMostFor that a grant held now has used (0 to 1)")
			.register(meterRegistry);
		FunctionCounter.builder("zk.lock.ceiling.ended", this.admin, CuratorLockAdmin::ceilingEndCount)
			.description("Grants ended by their lockAtMostFor while held (each also counted as lost)")
			.register(meterRegistry);
		Map<LockMode, Counter> lost = new EnumMap<>(LockMode.class);
		for (LockMode mode : LockMode.values()) {
			lost.put(mode, Counter.builder("zk.lock.lost")
				.description("Lock grants lost because their ZooKeeper session was lost")
				.tag("mode", mode.name())
				.register(meterRegistry));
		}
		Gauge.builder("zk.lock.kept", this.admin, CuratorLockAdmin::keptLockCount)
			.description("Lock znodes this application keeps while nobody holds them (kept locks)")
			.register(meterRegistry);
		FunctionCounter.builder("zk.lock.kept.grants", this.admin, CuratorLockAdmin::keptGrantCount)
			.description("Grants made on kept znodes, without a ZooKeeper write")
			.register(meterRegistry);
		for (String cause : CuratorLockAdmin.keptGiveUpCauses()) {
			FunctionCounter.builder("zk.lock.kept.given.up", this.admin, (admin) -> admin.keptGivenUpCount(cause))
				.description("Kept znodes deleted, by cause: asked (another participant queued), idle, max-keys, "
						+ "revoked, session, closed")
				.tag("cause", cause)
				.register(meterRegistry);
		}
		FunctionCounter.builder("zk.lock.kept.skipped", this.admin, CuratorLockAdmin::keptSkippedCount)
			.description("Znodes deleted at their last release instead of kept, because their key was being "
					+ "taken in turns with other participants, or visited from one that keeps it")
			.register(meterRegistry);
		this.admin.registry().addLockStateListener((event) -> {
			if (event.state() == LockState.LOST) {
				lost.get(event.mode()).increment();
			}
		});
	}

}
