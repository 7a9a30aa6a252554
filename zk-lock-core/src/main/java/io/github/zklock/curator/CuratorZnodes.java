package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

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
	 * ZooKeeper reaped them), ask whether each level above the parent path exists (the create's
	 * answer says the parent itself does not), then create the missing ones and the parent as
	 * containers and the lock znode again: the requests of Curator's
	 * {@code creatingParentContainersIfNeeded} but one {@code exists} (an {@code exists} per level, a
	 * {@code create} per missing one; no refused create, each of which would be a write through the
	 * quorum), each batch sent back to back, so two round trips where Curator waits for one per
	 * request. When a level's {@code exists} or {@code create} is answered with an error (access
	 * denied, a lost connection), the lock znode's create answers with that.
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
						try {
							createParents(path.substring(0, path.lastIndexOf('/')), parentFailure, () -> {
								if (parentFailure.get() != OK) {
									answer.answer(parentFailure.get(), null);
								}
								else {
									create(path, answer, attemptsLeft - 1, parentFailure);
								}
							});
						}
						catch (Exception ex) {
							unsent(ex, answer);
						}
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

	/**
	 * Create a missing parent path as containers, top down, and run {@code then} once the creates
	 * are sent: the path itself is missing (the lock znode's create said so); ask whether each
	 * level above it exists (sent back to back, answered in order) and create the missing ones
	 * before it. The first error answered other than "no node" or "exists" is noted in
	 * {@code parentFailure}.
	 */
	private void createParents(String parent, AtomicInteger parentFailure, Runnable then) throws Exception {
		List<String> above = new ArrayList<>();
		for (int slash = parent.indexOf('/', 1); slash > 0; slash = parent.indexOf('/', slash + 1)) {
			above.add(parent.substring(0, slash));
		}
		if (above.isEmpty()) {
			createContainers(List.of(parent), parentFailure);
			then.run();
			return;
		}
		AtomicReferenceArray<String> missing = new AtomicReferenceArray<>(above.size());
		AtomicInteger unanswered = new AtomicInteger(above.size());
		for (int i = 0; i < above.size(); i++) {
			int level = i;
			this.client.checkExists().inBackground((client, event) -> {
				int code = event.getResultCode();
				if (code == NONODE) {
					missing.set(level, above.get(level));
				}
				else if (code != OK) {
					parentFailure.compareAndSet(OK, code);
				}
				if (unanswered.decrementAndGet() == 0) {
					List<String> create = new ArrayList<>();
					for (int j = 0; j < above.size(); j++) {
						String path = missing.get(j);
						if (path != null) {
							create.add(path);
						}
					}
					create.add(parent);
					createContainers(create, parentFailure);
					then.run();
				}
			}).forPath(above.get(level));
		}
	}

	/** Send a create of each path as a container, in order, unless an error was noted. */
	private void createContainers(List<String> paths, AtomicInteger parentFailure) {
		BackgroundCallback created = (client, event) -> {
			int code = event.getResultCode();
			if (code != OK && code != NODEEXISTS) {
				parentFailure.compareAndSet(OK, code);
			}
		};
		try {
			for (String path : paths) {
				if (parentFailure.get() != OK) {
					return;
				}
				// Without data, as Curator creates parents (its default data would be the local address).
				this.client.create().withMode(CreateMode.CONTAINER).inBackground(created).forPath(path, NO_DATA);
			}
		}
		catch (Exception ex) {
			parentFailure.compareAndSet(OK, KeeperException.Code.SYSTEMERROR.intValue());
		}
	}

	@Override
	public void children(String path, @Nullable Watcher watcher, Answer<List<String>> answer) {
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
