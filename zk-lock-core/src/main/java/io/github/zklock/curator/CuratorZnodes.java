package io.github.zklock.curator;

import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * {@link Znodes} through Curator's background operations, with the requests Curator's lock recipes
 * send: the create as {@code StandardLockInternalsDriver.createsTheLock} makes it (a create2, whose
 * answer carries the czxid), the guaranteed delete of {@code LockInternals.releaseLock}, Curator's
 * retry policy on each. A request that cannot be sent (the client is closed) is answered at once
 * with the error.
 */
final class CuratorZnodes implements Znodes {

	private static final Log logger = LogFactory.getLog(CuratorZnodes.class);

	private static final int OK = KeeperException.Code.OK.intValue();

	private static final int NONODE = KeeperException.Code.NONODE.intValue();

	private static final int NODEEXISTS = KeeperException.Code.NODEEXISTS.intValue();

	/** How often a create refused for a missing parent creates the parents and is sent again. */
	private static final int MISSING_PARENT_ATTEMPTS = 3;

	private static final byte[] NO_DATA = new byte[0];

	private final CuratorFramework client;

	CuratorZnodes(CuratorFramework client) {
		this.client = client;
	}

	/**
	 * Create the lock znode; when its parents are missing (the first use of a key, or after
	 * ZooKeeper reaped them), create each level of the parent path as a container and the lock
	 * znode again, all sent back to back (a level that exists is refused, which is fine): the
	 * answers come in one round trip, where Curator's {@code creatingParentContainersIfNeeded} waits
	 * for an {@code exists} and a {@code create} per level, and for a listing of the parent that its
	 * protected mode sends before a background create is sent again. When a parent's create was
	 * refused for another reason (access denied, say), the lock znode's create answers with that.
	 */
	@Override
	public void create(String path, Answer<Created> answer) {
		create(path, answer, MISSING_PARENT_ATTEMPTS, new AtomicInteger(OK));
	}

	/**
	 * @param parentFailure the first error a parent's create answered other than "exists", {@code OK}
	 * while none: ZooKeeper answers it before the lock znode's create sent after it
	 */
	private void create(String path, Answer<Created> answer, int attemptsLeft, AtomicInteger parentFailure) {
		Stat stat = new Stat();
		try {
			this.client.create()
				.storingStatIn(stat)
				.withProtection()
				.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
				.inBackground((client, event) -> {
					int code = event.getResultCode();
					if (code == NONODE && parentFailure.get() != OK) {
						answer.answer(parentFailure.get(), null);
					}
					else if (code == NONODE && attemptsLeft > 0) {
						createParents(path.substring(0, path.lastIndexOf('/')), parentFailure);
						create(path, answer, attemptsLeft - 1, parentFailure);
					}
					else {
						answer.answer(code, (code == OK) ? new Created(event.getName(), stat.getCzxid()) : null);
					}
				})
				.forPath(path, LockNodeData.bytes());
		}
		catch (Exception ex) {
			unsent(ex, answer);
		}
	}

	/** Send a create of every level of a path as a container, top down, noting the first refusal but "exists". */
	private void createParents(String parent, AtomicInteger parentFailure) throws Exception {
		BackgroundCallback noted = (client, event) -> {
			int code = event.getResultCode();
			if (code != OK && code != NODEEXISTS) {
				parentFailure.compareAndSet(OK, code);
			}
		};
		for (int slash = parent.indexOf('/', 1); ; slash = parent.indexOf('/', slash + 1)) {
			String level = (slash < 0) ? parent : parent.substring(0, slash);
			// Without data, as Curator creates parents (its default data would be the local address).
			this.client.create().withMode(CreateMode.CONTAINER).inBackground(noted).forPath(level, NO_DATA);
			if (slash < 0) {
				return;
			}
		}
	}

	@Override
	public void children(String path, @Nullable Watcher watcher, Answer<java.util.List<String>> answer) {
		try {
			if (watcher != null) {
				this.client.getChildren()
					.usingWatcher(watcher)
					.inBackground((client, event) -> answer.answer(event.getResultCode(), event.getChildren()))
					.forPath(path);
			}
			else {
				this.client.getChildren()
					.inBackground((client, event) -> answer.answer(event.getResultCode(), event.getChildren()))
					.forPath(path);
			}
		}
		catch (Exception ex) {
			unsent(ex, answer);
		}
	}

	@Override
	public void watch(String path, Watcher watcher, Answer<Boolean> answer) {
		try {
			// getData, as the recipe sets it: a watch on a znode that does not exist is not left behind.
			this.client.getData().usingWatcher(watcher).inBackground((client, event) -> {
				int code = event.getResultCode();
				answer.answer((code == NONODE) ? OK : code, (code == OK) ? Boolean.TRUE : (code == NONODE) ? Boolean.FALSE : null);
			}).forPath(path);
		}
		catch (Exception ex) {
			unsent(ex, answer);
		}
	}

	@Override
	public void delete(String path, Answer<Void> answer) {
		try {
			this.client.delete().quietly().guaranteed().inBackground((client, event) -> {
				int code = event.getResultCode();
				answer.answer((code == NONODE) ? OK : code, null);
			}).forPath(path);
		}
		catch (Exception ex) {
			// The client is closed: so is its session, and the ephemeral znode went with it.
			logger.debug("Could not delete lock znode " + path + "; ZooKeeper removes it when the session ends", ex);
			answer.answer(KeeperException.Code.SESSIONEXPIRED.intValue(), null);
		}
	}

	@Override
	public long sessionInstance() {
		return CuratorLockRegistry.sessionInstance(this.client);
	}

	@Override
	public boolean connected() {
		return this.client.getZookeeperClient().isConnected();
	}

	@Override
	public int sessionTimeoutMs() {
		return this.client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
	}

	@Override
	public int connectionTimeoutMs() {
		return this.client.getZookeeperClient().getConnectionTimeoutMs();
	}

	private static <T> void unsent(Exception ex, Answer<T> answer) {
		logger.debug("Could not send a lock request", ex);
		answer.answer(KeeperException.Code.SYSTEMERROR.intValue(), null);
	}

}
