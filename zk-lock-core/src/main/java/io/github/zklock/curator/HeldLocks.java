package io.github.zklock.curator;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

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
 * <li>LOST: every grant of an earlier session is lost for good. Curator posts LOST only after it
 * replaced the client's ZooKeeper handle (an expired session, a reset; its instance index moved
 * first), and may post it late: its connection state thread forces RECONNECTED when it sees the
 * new handle connected while the state is still LOST (CURATOR-525), and the framework's check of
 * the handle's instance on that connection then posts LOST once more, after RECONNECTED. A grant
 * made in the new session meanwhile is not lost by it: it stays held, its thread is not
 * interrupted.</li>
 * </ul>
 * Each change is reported to the {@link LockStateListener}; on loss the acquiring thread of a
 * thread-bound grant can be interrupted. Curator's LOST timing is kept: by default it follows the session timeout after
 * SUSPENDED, or the server's session expiry, whichever Curator sees first.
 */
final class HeldLocks implements ConnectionStateListener {

	private static final Log logger = LogFactory.getLog(HeldLocks.class);

	private static final String SESSION_LOST = "the ZooKeeper session was lost";

	private final Set<CuratorLockHandle> handles = ConcurrentHashMap.newKeySet();

	private final List<LockStateListener> listeners = new CopyOnWriteArrayList<>();

	private volatile boolean interruptOnLost;

	private volatile @Nullable ConnectionState lastConnectionState;

	/**
	 * Track a new grant. A connection event may have passed between the grant and this call; the
	 * grant is checked against the connection as it is now, after it is tracked, so that no event
	 * is missed. (An end of its znode, a revocation or a ceiling, made it LOST already: the key
	 * decides that under its monitor; the listeners are told here.)
	 */
	void add(CuratorLockHandle handle, Znodes znodes) {
		this.handles.add(handle);
		if (handle.state() == LockState.LOST) {
			// Lost as it was granted, and told by its key then.
			return;
		}
		if (handle.sessionInstance() != znodes.sessionInstance()) {
			loseWithSession(handle);
		}
		else if (!znodes.connected() && handle.suspend()) {
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
		changed(newState, CuratorLockRegistry.sessionInstance(client));
	}

	/**
	 * Follow a change of the connection.
	 * @param newState the new state
	 * @param sessionInstance the client's session instance now
	 */
	void changed(ConnectionState newState, long sessionInstance) {
		this.lastConnectionState = newState;
		switch (newState) {
			case SUSPENDED -> changeEach((handle) -> handle.suspend() ? LockState.IN_DOUBT : null);
			case LOST -> {
				for (CuratorLockHandle handle : this.handles) {
					if (handle.sessionInstance() != sessionInstance) {
						loseWithSession(handle);
					}
				}
			}
			case RECONNECTED -> {
				for (CuratorLockHandle handle : this.handles) {
					if (handle.sessionInstance() != sessionInstance) {
						loseWithSession(handle);
					}
					else if (handle.regain()) {
						notifyListener(handle, LockState.HELD);
					}
				}
			}
			default -> {
			}
		}
	}

	/**
	 * A grant lost with its session: its key takes its turn away and deletes its znode, and the
	 * grant becomes LOST under the key's monitor as it does, so that a request nested in it (a
	 * re-entry, READ under WRITE) that finds it LOST never finds its turn still standing; then the
	 * listeners are told. A grant its key no longer holds on that znode becomes LOST here.
	 */
	private void loseWithSession(CuratorLockHandle handle) {
		LockState state = handle.state();
		if (state == LockState.LOST || state == LockState.RELEASED) {
			return;
		}
		handle.hold().key().endZnode(handle.nodePath(), SESSION_LOST, false, null);
		if (handle.lose(null)) {
			told(handle, false);
		}
	}

	/**
	 * Tell of a grant that became LOST: interrupt-on-lost interrupts the thread a grant is bound
	 * to, or tells the work of a grant no thread owns ({@code whenLost()}); then the listeners.
	 * @param signalWork whether to tell the work of any grant ({@code whenLost()}) even without
	 * interrupt-on-lost: a grant ended by its ceiling
	 */
	void told(CuratorLockHandle handle, boolean signalWork) {
		// A grant not bound to its thread may be used, or kept after use (lockAtLeastFor), while the
		// thread that acquired it does other work: interrupting that thread would hit the wrong work.
		Thread thread = handle.thread();
		if (this.interruptOnLost && thread != null) {
			thread.interrupt();
		}
		if ((this.interruptOnLost && thread == null) || signalWork) {
			handle.signalLost();
		}
		notifyListener(handle, LockState.LOST);
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
