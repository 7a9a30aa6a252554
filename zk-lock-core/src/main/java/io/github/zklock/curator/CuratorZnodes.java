package io.github.zklock.curator;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.utils.ZKPaths;
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

	private final KnownPaths known;

	/**
	 * @param client the Curator client
	 * @param rootPath the lock root path, taken to exist (and the levels above it) until a create
	 * shows otherwise: it is created by the first lock taken below it and lives as long as any key
	 * below it does, so one create is refused once more when it is missing
	 * @param knownPathsCapacity how many paths known to exist are remembered (the levels above lock
	 * paths, where a cold key's parents start to be missing)
	 */
	CuratorZnodes(CuratorFramework client, String rootPath, int knownPathsCapacity) {
		this.client = client;
		this.known = new KnownPaths(knownPathsCapacity);
		this.known.addLevelsAbove(ZKPaths.makePath(rootPath, "key"));
	}

	/**
	 * Create the lock znode. When ZooKeeper answers that its parent is missing (the first use of a
	 * key, or its container was reaped), send back to back, without waiting for an answer: a
	 * {@code create} of each missing level as a container, top down (a level that exists meanwhile
	 * answers "exists", which is fine), then the lock znode's create again, then run
	 * {@code resent}, where the caller sends its listing. ZooKeeper serves one session's requests in
	 * order, so the second create finds its parents and the listing finds the znode: two round trips
	 * for a cold key where Curator's {@code creatingParentContainersIfNeeded} waits for one per
	 * request (an {@code exists} and a {@code create} per level). The missing levels start below the
	 * deepest level of the path this client knows to exist ({@link KnownPaths}: the levels above a
	 * lock path it created parents for); when that knowledge was stale (ZooKeeper reaped a level
	 * meanwhile) the create is refused once more and every level is created. When a level's create
	 * is answered with another error (access denied, a lost connection), the lock znode's create
	 * answers with that.
	 */
	@Override
	public void create(String path, boolean parentMissing, Runnable resent, Answer<Created> answer) {
		AtomicInteger parentFailure = new AtomicInteger(OK);
		// A semaphore's path this client just created has no locks or leases yet.
		if (parentMissing || this.known.takeEmptyGrandparent(path)) {
			createContainers(ZKPaths.getPathAndNode(path).getPath(), true, parentFailure);
			parentMissing = true;
		}
		sendCreate(path, resent, answer, parentMissing ? 1 : 0, parentFailure);
	}

	/**
	 * Send the lock znode's create.
	 * @param resends how often it was sent again after creating its parents
	 * @param parentFailure the first error a parent's create answered other than "exists" or "no
	 * node", {@code OK} while none: ZooKeeper answers it before the lock znode's create sent after it
	 * @return whether it was sent ({@code answer} was told the error otherwise)
	 */
	private boolean sendCreate(String path, Runnable resent, Answer<Created> answer, int resends,
			AtomicInteger parentFailure) {
		Stat stat = new Stat();
		try {
			this.client.create()
				.storingStatIn(stat)
				.withProtection()
				.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
				.inBackground((client, event) -> {
					int code = event.getResultCode();
					String parent = ZKPaths.getPathAndNode(path).getPath();
					if (code == NONODE && parentFailure.get() != OK) {
						answer.answer(parentFailure.get(), null);
					}
					else if (code == NONODE && resends < MISSING_PARENT_ATTEMPTS) {
						// The levels known to exist are trusted the first time; refused again after its
						// parents' creates, a known level was reaped since: every level then.
						createContainers(parent, resends == 0, parentFailure);
						// Answered after the parents' creates: on the event thread, once this callback returned.
						if (sendCreate(path, resent, answer, resends + 1, parentFailure)) {
							resent.run();
						}
					}
					else {
						if (code == OK && resends > 0) {
							this.known.addLevelsAbove(parent);
						}
						answer.answer(code, (code == OK) ? new Created(event.getName(), stat.getCzxid(), resends > 0) : null);
					}
				})
				.forPath(path, LockNodeData.bytes());
			return true;
		}
		catch (Exception ex) {
			unsent(ex, answer);
			return false;
		}
	}

	/**
	 * Send a create of each missing level of a path as a container, top down, without waiting for
	 * their answers: the client's next request is served after them. The levels start below the
	 * deepest one known to exist. Their errors are not reported: the request that needs the path
	 * fails, and its caller finds the cause.
	 * @param path a path ZooKeeper said is missing
	 */
	void sendLevelCreates(String path) {
		createContainers(path, true, new AtomicInteger(OK));
	}

	/**
	 * Note that a path was just created, with no child: the levels above it exist, and the first
	 * create of a lock znode two levels below it (a semaphore's {@code locks/lock-}) creates its
	 * parent first rather than being refused.
	 * @param path the created znode's path
	 */
	void createdEmpty(String path) {
		this.known.addEmpty(path);
	}

	/**
	 * Send a create of each missing level of a parent path as a container, top down: the levels
	 * below the deepest one known to exist, or every level when {@code trustKnown} is false (the
	 * knowledge proved stale). An answer other than "created", "exists" or "no node" (a level above
	 * reaped meanwhile: the lock znode's create is refused and sent again) is noted in
	 * {@code parentFailure}.
	 */
	private void createContainers(String parent, boolean trustKnown, AtomicInteger parentFailure) {
		if (!trustKnown) {
			this.known.forgetLevelsOf(parent);
		}
		BackgroundCallback created = (client, event) -> {
			int code = event.getResultCode();
			if (code != OK && code != NODEEXISTS && code != NONODE) {
				parentFailure.compareAndSet(OK, code);
			}
		};
		try {
			for (String level : this.known.missingLevels(parent)) {
				// Without data, as Curator creates parents (its default data would be the local address).
				this.client.create().withMode(CreateMode.CONTAINER).inBackground(created).forPath(level, NO_DATA);
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
	public void watchKept(String path, Watcher watcher, Answer<Boolean> answer) {
		try {
			this.client.getData().usingWatcher(watcher).inBackground((client, event) -> {
				int code = event.getResultCode();
				boolean unmarked = code == OK && !Revocations.isRevocationMark(event.getData());
				answer.answer((code == NONODE) ? OK : code, (code == OK || code == NONODE) ? unmarked : null);
			}).forPath(path);
		}
		catch (Exception ex) {
			unsent(ex, answer);
		}
	}

	@Override
	public void exists(String path, Answer<Boolean> answer) {
		try {
			this.client.checkExists().inBackground((client, event) -> {
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
	public void deleteOnce(String path, Answer<Void> answer) {
		try {
			this.client.delete().inBackground((client, event) -> answer.answer(event.getResultCode(), null)).forPath(path);
		}
		catch (Exception ex) {
			unsent(ex, answer);
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
