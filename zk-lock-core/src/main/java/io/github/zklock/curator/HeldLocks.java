package io.github.zklock.curator;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;
import io.github.zklock.LockStateListener;

/**
 * The grants this application holds, kept in step with the ZooKeeper connection. Curator's lock
 * recipes do not tell a holder that its lock is gone, so this listener does:
 * <ul>
 * <li>SUSPENDED: every held grant becomes in doubt;</li>
 * <li>RECONNECTED: grants made with the current ZooKeeper handle (so in the current session) hold
 * again, their ephemeral znodes survived; grants of an earlier session are lost;</li>
 * <li>LOST: every grant is lost for good.</li>
 * </ul>
 * Each change is reported to the {@link LockStateListener}; on loss the acquiring thread of a
 * thread-bound grant can be interrupted. Curator's LOST timing is kept: by default it follows the session timeout after
 * SUSPENDED, or the server's session expiry, whichever Curator sees first.
 */
final class HeldLocks implements ConnectionStateListener {

	private static final Log logger = LogFactory.getLog(HeldLocks.class);

	private final Set<CuratorLockHandle> handles = ConcurrentHashMap.newKeySet();

	private final List<LockStateListener> listeners = new CopyOnWriteArrayList<>();

	private volatile boolean interruptOnLost;

	private volatile @Nullable ConnectionState lastConnectionState;

	/**
	 * Track a new grant. A connection event may have passed between the grant and this call; the
	 * grant is checked against the connection as it is now, after it is tracked, so that no event
	 * is missed. Likewise a revocation of the znode of a local chain that handed the grant over.
	 */
	void add(CuratorLockHandle handle, CuratorFramework client) {
		this.handles.add(handle);
		// Checked after tracking it, as Revocations marks the chain before it looks for grants.
		String revoked = handle.chainRevokedReason();
		if (handle.sessionInstance() != CuratorLockRegistry.sessionInstance(client)) {
			if (lose(handle)) {
				notifyListener(handle, LockState.LOST);
			}
		}
		else if (revoked != null) {
			if (lose(handle, revoked)) {
				notifyListener(handle, LockState.LOST);
			}
		}
		else if (!client.getZookeeperClient().isConnected() && handle.suspend()) {
			notifyListener(handle, LockState.IN_DOUBT);
		}
	}

	void remove(CuratorLockHandle handle) {
		this.handles.remove(handle);
	}

	int size() {
		return this.handles.size();
	}

	Set<CuratorLockHandle> handles() {
		return this.handles;
	}

	void addListener(LockStateListener listener) {
		this.listeners.add(listener);
	}

	void setInterruptOnLost(boolean interruptOnLost) {
		this.interruptOnLost = interruptOnLost;
	}

	@Nullable ConnectionState lastConnectionState() {
		return this.lastConnectionState;
	}

	@Override
	public void stateChanged(CuratorFramework client, ConnectionState newState) {
		this.lastConnectionState = newState;
		switch (newState) {
			case SUSPENDED -> changeEach((handle) -> handle.suspend() ? LockState.IN_DOUBT : null);
			case LOST -> changeEach((handle) -> lose(handle) ? LockState.LOST : null);
			case RECONNECTED -> {
				long sessionInstance = CuratorLockRegistry.sessionInstance(client);
				changeEach((handle) -> (handle.sessionInstance() == sessionInstance)
						? (handle.regain() ? LockState.HELD : null) : (lose(handle) ? LockState.LOST : null));
			}
			default -> {
			}
		}
	}

	/**
	 * Lose, for a reason other than the session, every grant held or in doubt that matches, and
	 * tell the listeners: a revoked grant, or one whose znode was deleted (see {@link Revocations},
	 * which ends the local hand-off chain on that znode first).
	 * @param signalWork whether to tell the work of a grant owned by no thread
	 * ({@code whenLost()}) even without interrupt-on-lost: a grant ended by its ceiling
	 * @return how many grants were lost
	 */
	int loseAll(Predicate<CuratorLockHandle> which, String reason, boolean signalWork) {
		int lost = 0;
		for (CuratorLockHandle handle : this.handles) {
			if (which.test(handle) && lose(handle, reason)) {
				if (signalWork && !handle.isThreadBound()) {
					handle.signalLost();
				}
				notifyListener(handle, LockState.LOST);
				lost++;
			}
		}
		return lost;
	}

	private boolean lose(CuratorLockHandle handle) {
		return lose(handle, null);
	}

	private boolean lose(CuratorLockHandle handle, @Nullable String reason) {
		if (!handle.lose(reason)) {
			return false;
		}
		// A grant not bound to its thread may be used, or kept after use (lockAtLeastFor), while the
		// thread that acquired it does other work: interrupting that thread would hit the wrong work.
		if (this.interruptOnLost && handle.isThreadBound()) {
			handle.acquirer().interrupt();
		}
		else if (this.interruptOnLost) {
			// Owned by no thread (an asynchronous grant made without one): its work is told (whenLost).
			handle.signalLost();
		}
		return true;
	}

	/**
	 * Apply a state transition to each grant and tell the listeners of each change.
	 * @param transition returns the grant's new state, or {@code null} if it did not change
	 */
	private void changeEach(Function<CuratorLockHandle, @Nullable LockState> transition) {
		for (CuratorLockHandle handle : this.handles) {
			LockState newState = transition.apply(handle);
			if (newState != null) {
				notifyListener(handle, newState);
			}
		}
	}

	/**
	 * @param newState the state the grant changed to: the event reports it even when the holder,
	 * interrupted, has released the grant meanwhile
	 */
	private void notifyListener(CuratorLockHandle handle, LockState newState) {
		LockStateEvent event = new LockStateEvent(handle, handle.path(), handle.mode(), newState,
				handle.knownFencingToken(), handle.owner());
		logger.warn(event);
		for (LockStateListener listener : this.listeners) {
			try {
				listener.onLockStateChanged(event);
			}
			catch (RuntimeException ex) {
				logger.error("Lock state listener failed on " + event, ex);
			}
		}
	}

}
