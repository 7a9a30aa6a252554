package io.github.zklock.curator;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockState;

/**
 * The holder's side of revocation: this application gives up a grant whose znode an operator
 * marked with Curator's revocation protocol ({@code Revoker.attemptRevoke}, which sets the
 * znode's data to {@value #REVOKE_MESSAGE_TEXT}), and learns that a grant's znode was deleted
 * under it (a forced revocation). Either way the grants on that znode become
 * {@link LockState#LOST} (listeners, events, the {@code zk.lock.lost} meter, interrupt-on-lost,
 * the commit guard), and a local hand-off chain riding the znode hands no more grants on it; a
 * revoked znode is then deleted by this application (guaranteed delete, in the background), so
 * that the next waiter is granted even when the holder's thread is stuck. A later
 * {@code release()} of those grants is harmless (Curator ignores a missing znode on release).
 *
 * <p>Cost: Curator's own {@code makeRevocable} reads every lock znode with a watch as it is
 * granted, one request per grant. Here a sweep every {@code interval} sets that watch (one
 * {@code getData} in the background) only on the znodes held longer than the interval (a local
 * hand-off chain's znode counted from its first grant, since the chain's grants may each be
 * short), once per znode and session: a stuck lock is a long-held one, and grants released within
 * the interval send no request for it. A grant revoked before it was watched is caught when the
 * sweep reads the mark, a znode deleted before it was watched when the sweep finds it gone. One
 * daemon thread per registry, stopped by {@link #close()}; {@link Duration#ZERO} switches it off
 * (marks are then ignored, forced deletes go unnoticed until the release).
 *
 * <p>Thread-safe.
 */
final class Revocations {

	/** What {@code Revoker.attemptRevoke} writes ({@code LockInternals.REVOKE_MESSAGE}). */
	static final String REVOKE_MESSAGE_TEXT = "__REVOKE__";

	private static final byte[] REVOKE_MESSAGE = REVOKE_MESSAGE_TEXT.getBytes();

	private static final Log logger = LogFactory.getLog(Revocations.class);

	/** Whether a znode's data is the revocation mark. */
	static boolean isRevocationMark(byte @Nullable [] data) {
		return Arrays.equals(data, REVOKE_MESSAGE);
	}

	private static final AtomicInteger threads = new AtomicInteger();

	private final CuratorFramework client;

	private final HeldLocks heldLocks;

	/** Ends this application's hold on a znode (see {@link Grants#endZnode}). */
	private final Ending ending;

	/** The znodes watched, each with the session (instance) that set the watch. */
	private final Map<String, Long> watched = new ConcurrentHashMap<>();

	private final Watcher watcher = this::znodeChanged;

	private final ScheduledThreadPoolExecutor sweeper;

	private @Nullable ScheduledFuture<?> sweeps;

	private volatile long intervalMs;

	/**
	 * @param ending ends this application's hold on a znode (see {@link Grants#endZnode})
	 */
	Revocations(CuratorFramework client, HeldLocks heldLocks, Ending ending, Duration interval) {
		this.client = client;
		this.heldLocks = heldLocks;
		this.ending = ending;
		this.sweeper = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "zk-lock-revocation-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		setInterval(interval);
	}

	/**
	 * Set how often grants are checked and how long a grant is held before its znode is watched.
	 * @param interval the interval, {@link Duration#ZERO} for never
	 */
	synchronized void setInterval(Duration interval) {
		if (interval.isNegative()) {
			throw new IllegalArgumentException("The revocation check interval must not be negative, was " + interval);
		}
		if (this.sweeps != null) {
			this.sweeps.cancel(false);
			this.sweeps = null;
		}
		this.intervalMs = interval.toMillis();
		if (this.intervalMs > 0 && !this.sweeper.isShutdown()) {
			this.sweeps = this.sweeper.scheduleWithFixedDelay(this::sweep, this.intervalMs, this.intervalMs,
					TimeUnit.MILLISECONDS);
		}
	}

	Duration getInterval() {
		return Duration.ofMillis(this.intervalMs);
	}

	void close() {
		this.sweeper.shutdownNow();
	}

	/**
	 * Watch the znodes held longer than the interval (by the grants of this application), once per
	 * znode and session.
	 */
	void sweep() {
		try {
			if (!this.client.getZookeeperClient().isConnected()) {
				return;
			}
			long session = CuratorLockRegistry.sessionInstance(this.client);
			long now = System.nanoTime();
			long intervalNanos = TimeUnit.MILLISECONDS.toNanos(this.intervalMs);
			for (CuratorLockHandle handle : this.heldLocks.handles()) {
				// By the znode's age: a local chain's grants may each be short while it rides one
				// znode for long.
				if (handle.state() == LockState.HELD && handle.sessionInstance() == session
						&& now - handle.znodeHeldSinceNanos() >= intervalNanos) {
					Long watchedIn = this.watched.put(handle.nodePath(), session);
					if (watchedIn == null || watchedIn != session) {
						read(handle.nodePath());
					}
				}
			}
			// Znodes of an earlier session, or no longer held here (their watch fired or never will).
			this.watched.entrySet().removeIf((entry) -> entry.getValue() != session);
		}
		catch (RuntimeException ex) {
			logger.debug("Revocation sweep failed; it runs again after the interval", ex);
		}
	}

	private void read(String node) {
		try {
			this.client.getData().usingWatcher(this.watcher).inBackground(this::dataRead).forPath(node);
		}
		catch (Exception ex) {
			this.watched.remove(node);
			logger.debug("Could not watch lock znode " + node + " for revocation; the next sweep tries again", ex);
		}
	}

	private void dataRead(CuratorFramework client, CuratorEvent event) {
		String node = event.getPath();
		if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
			this.watched.remove(node);
			lose(node, "its znode " + node + " was deleted by another client (a forced revocation)");
		}
		else if (event.getResultCode() == KeeperException.Code.OK.intValue()
				&& isRevocationMark(event.getData())) {
			revoked(node);
		}
		else if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
			// Not watched after all (connection loss, say): the next sweep tries again.
			this.watched.remove(node);
		}
	}

	private void znodeChanged(WatchedEvent event) {
		String node = event.getPath();
		if (node == null || !this.watched.containsKey(node)) {
			return;
		}
		switch (event.getType()) {
			case NodeDataChanged -> read(node);
			case NodeDeleted -> {
				this.watched.remove(node);
				lose(node, "its znode " + node + " was deleted by another client (a forced revocation)");
			}
			default -> {
			}
		}
	}

	private void revoked(String node) {
		this.watched.remove(node);
		this.ending.end(node, "it was revoked through its znode " + node + " (Curator's revocation protocol)", false);
	}

	private void lose(String node, String reason) {
		this.ending.end(node, reason, false);
	}

	/** Ends this application's hold on a znode: {@link Grants#endZnode}. */
	@FunctionalInterface
	interface Ending {

		boolean end(String node, String reason, boolean signalWork);

	}

}
