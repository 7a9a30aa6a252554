package io.github.zklock.curator;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The grants this application holds, kept in step with the ZooKeeper connection. Curator's lock
 * recipes do not tell a holder that its lock is gone, so this listener does:
 * <ul>
 * <li>SUSPENDED: every held grant becomes in doubt;</li>
 * <li>RECONNECTED: grants created in the current session hold again (their ephemeral znodes
 * survived); grants of an earlier session are lost;</li>
 * <li>LOST: every grant is lost for good.</li>
 * </ul>
 */
final class HeldLocks implements ConnectionStateListener {

	private static final Log logger = LogFactory.getLog(HeldLocks.class);

	private final Set<CuratorLockHandle> handles = ConcurrentHashMap.newKeySet();

	void add(CuratorLockHandle handle) {
		this.handles.add(handle);
	}

	void remove(CuratorLockHandle handle) {
		this.handles.remove(handle);
	}

	int size() {
		return this.handles.size();
	}

	@Override
	public void stateChanged(CuratorFramework client, ConnectionState newState) {
		switch (newState) {
			case SUSPENDED -> this.handles.forEach(CuratorLockHandle::suspend);
			case LOST -> this.handles.forEach(CuratorLockHandle::lose);
			case RECONNECTED -> {
				long sessionInstance = CuratorLockRegistry.sessionInstance(client);
				for (CuratorLockHandle handle : this.handles) {
					if (handle.sessionInstance() == sessionInstance) {
						handle.regain();
					}
					else {
						handle.lose();
					}
				}
			}
			default -> {
			}
		}
		if (newState != ConnectionState.CONNECTED && !this.handles.isEmpty() && logger.isWarnEnabled()) {
			logger.warn("ZooKeeper connection " + newState + " while holding " + this.handles);
		}
	}

}
