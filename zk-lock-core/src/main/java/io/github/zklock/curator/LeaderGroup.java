package io.github.zklock.curator;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LeadershipListener;
import io.github.zklock.LeadershipRevokedEvent;
import io.github.zklock.LockException;

/**
 * This instance's part in one group: a Curator {@code LeaderLatch} (replaced by a new one when
 * leadership is yielded) and the leadership as announced to the listeners. The latch says whether
 * its znode is first; this instance leads only while, in addition, the connection is up (the
 * latch keeps leadership through SUSPENDED unless the client's error policy says otherwise) and
 * the latch was granted in the current session (a grant of an earlier session never counts
 * again). Each change is announced once: granted and revoked alternate.
 *
 * <p>State changes under {@code this}; events are queued there and published afterwards, outside
 * it, by one thread at a time in queue order. Curator calls the latch listener holding the latch's
 * monitor, so {@code this} is never held while a latch is closed (which takes that monitor): no
 * thread waits for another in a cycle, also when a listener yields or closes.
 */
final class LeaderGroup {

	private static final Log logger = LogFactory.getLog(LeaderGroup.class);

	private final CuratorFramework client;

	private final String group;

	private final String latchPath;

	private final String participantId;

	private final List<LeadershipListener> listeners;

	private final BooleanSupplier connectionUp;

	/** The latch whose callbacks count; {@code null} while one is being replaced, or closed. */
	private @Nullable LeaderLatch latch;

	/** Whether the current latch says it leads. */
	private boolean latchLeads;

	/** The ZooKeeper handle (so the session) the current latch was granted with. */
	private long grantSession = -1;

	/** What the listeners are told, or are about to be. */
	private volatile boolean leading;

	private volatile boolean closed;

	/** Events not published yet, oldest first. */
	private final Queue<Change> pending = new ArrayDeque<>();

	/** Whether a thread is publishing the pending events. */
	private boolean publishing;

	LeaderGroup(CuratorFramework client, String group, String latchPath, String participantId,
			List<LeadershipListener> listeners, BooleanSupplier connectionUp) {
		this.client = client;
		this.group = group;
		this.latchPath = latchPath;
		this.participantId = participantId;
		this.listeners = listeners;
		this.connectionUp = connectionUp;
	}

	/** Join the group: start the first latch. */
	synchronized void start() {
		startLatch();
	}

	/**
	 * Whether this instance leads now: announced as leader, and the ZooKeeper client has not
	 * noticed a disconnection that Curator has not reported yet.
	 */
	boolean isLeading() {
		return this.leading && this.client.getZookeeperClient().isConnected();
	}

	/** The group's name. */
	String name() {
		return this.group;
	}

	/**
	 * The current term, if this instance leads: the latch that leads and its znode, in the
	 * session it was granted in.
	 */
	@Nullable LeadershipTerm term() {
		LeaderLatch current;
		long session;
		synchronized (this) {
			current = this.latch;
			session = this.grantSession;
		}
		if (current == null || !isCurrent(current, session)) {
			return null;
		}
		String ourPath = current.getOurPath();
		return (ourPath != null) ? new LeadershipTerm(this, this.client, current, this.latchPath, ourPath, session)
				: null;
	}

	/** Whether this instance leads now with the given latch, granted in the given session. */
	boolean isCurrent(LeaderLatch latch, long session) {
		synchronized (this) {
			if (this.latch != latch || this.grantSession != session) {
				return false;
			}
		}
		return isLeading() && CuratorLockRegistry.sessionInstance(this.client) == session;
	}

	/** Wait until leading, closed, or the time is over. */
	boolean await(long timeoutNanos) throws InterruptedException {
		long deadline = System.nanoTime() + timeoutNanos;
		synchronized (this) {
			long remaining = timeoutNanos;
			while (!this.leading && !this.closed && remaining > 0) {
				TimeUnit.NANOSECONDS.timedWait(this, remaining);
				remaining = deadline - System.nanoTime();
			}
		}
		return isLeading();
	}

	/**
	 * Give leadership up if the latch holds it, telling the listeners before the znode goes (so
	 * that this instance stops leading before another starts), then queue again with a new latch,
	 * whose znode comes after every existing one.
	 * @return whether leadership was given up
	 */
	boolean yieldLeadership() {
		LeaderLatch previous;
		synchronized (this) {
			previous = this.latch;
			if (this.closed || previous == null || !(previous.hasLeadership() || this.leading)) {
				return false;
			}
			this.latch = null;
			this.latchLeads = false;
			update();
		}
		publishPending();
		closeLatch(previous);
		synchronized (this) {
			if (!this.closed && this.latch == null) {
				startLatch();
			}
		}
		return true;
	}

	/** Leave the group: tell the listeners if leading, then delete the znode. Idempotent. */
	void close() {
		LeaderLatch previous;
		synchronized (this) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			previous = this.latch;
			this.latch = null;
			this.latchLeads = false;
			update();
			notifyAll();
		}
		publishPending();
		if (previous != null) {
			closeLatch(previous);
		}
	}

	/** Curator reported a connection state; the shared connection flag is already set. */
	void connectionChanged() {
		synchronized (this) {
			update();
		}
		publishPending();
	}

	/** Start a new latch; called holding {@code this} (starting only schedules the work). */
	private void startLatch() {
		LeaderLatch next = new LeaderLatch(this.client, this.latchPath, this.participantId,
				LeaderLatch.CloseMode.NOTIFY_LEADER);
		next.addListener(new LeaderLatchListener() {

			@Override
			public void isLeader() {
				latchChanged(next, true);
			}

			@Override
			public void notLeader() {
				latchChanged(next, false);
			}

		});
		this.latch = next;
		try {
			next.start();
		}
		catch (Exception ex) {
			this.latch = null;
			throw new LockException("Could not join leadership group '" + this.group + "' at '" + this.latchPath
					+ "': " + ex, ex);
		}
	}

	private void closeLatch(LeaderLatch latch) {
		if (latch.getState() != LeaderLatch.State.STARTED) {
			return;
		}
		try {
			latch.close();
		}
		catch (IOException ex) {
			// Curator retries the delete in the background (guaranteed delete); if the session ends
			// first, ZooKeeper removes the ephemeral znode with it.
			logger.warn("Failed to leave leadership group '" + this.group + "' at '" + this.latchPath
					+ "' cleanly; ZooKeeper removes the znode when the session ends", ex);
		}
	}

	private void latchChanged(LeaderLatch source, boolean leads) {
		synchronized (this) {
			if (source != this.latch || this.closed) {
				// A latch being replaced or closed: its leadership was already given up.
				return;
			}
			this.latchLeads = leads;
			if (leads) {
				// Curator grants only after reading that its first znode is owned by the current
				// session (the fix of CURATOR-696), on the ZooKeeper event thread, which also
				// handles expiry: the handle read here is the one the znode belongs to.
				this.grantSession = CuratorLockRegistry.sessionInstance(this.client);
			}
			update();
		}
		publishPending();
	}

	/** Queue an event if leadership changed. Called holding {@code this}. */
	private void update() {
		boolean now = this.latchLeads && !this.closed && this.connectionUp.getAsBoolean()
				&& this.grantSession == CuratorLockRegistry.sessionInstance(this.client);
		if (now == this.leading) {
			return;
		}
		this.leading = now;
		notifyAll();
		if (now) {
			LeadershipGrantedEvent event = new LeadershipGrantedEvent(this.group, this.participantId);
			this.pending.add(new Change(event, (listener) -> listener.granted(event)));
		}
		else {
			LeadershipRevokedEvent event = new LeadershipRevokedEvent(this.group, this.participantId);
			this.pending.add(new Change(event, (listener) -> listener.revoked(event)));
		}
	}

	/**
	 * Publish the queued events, unless another thread is at it (it publishes these too, in
	 * order). A listener that changes leadership gets the events it causes after it returns.
	 */
	private void publishPending() {
		synchronized (this) {
			if (this.publishing) {
				return;
			}
			this.publishing = true;
		}
		boolean drained = false;
		try {
			while (true) {
				Change event;
				synchronized (this) {
					event = this.pending.poll();
					if (event == null) {
						this.publishing = false;
						drained = true;
						return;
					}
				}
				publish(event);
			}
		}
		finally {
			if (!drained) {
				synchronized (this) {
					this.publishing = false;
				}
			}
		}
	}

	private void publish(Change change) {
		logger.info(change.event());
		for (LeadershipListener listener : this.listeners) {
			try {
				change.tell().accept(listener);
			}
			catch (RuntimeException ex) {
				logger.error("Leadership listener failed on " + change.event(), ex);
			}
		}
	}

	/** A change to tell the listeners of: the event, and the listener method it goes to. */
	private record Change(Object event, Consumer<LeadershipListener> tell) {
	}

}
