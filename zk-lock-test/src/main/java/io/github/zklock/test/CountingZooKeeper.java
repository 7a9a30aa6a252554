package io.github.zklock.test;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * A ZooKeeper client that counts the requests it sends, by operation, then sends them unchanged.
 * Every public request method of {@link ZooKeeper} is counted (synchronous and asynchronous);
 * connection pings are not requests and are not counted. Install it with
 * {@code CuratorFrameworkFactory.builder().zookeeperFactory(CountingZooKeeper.factory(counts))}.
 */
public class CountingZooKeeper extends ZooKeeper {

	private static final Set<String> WRITES = Set.of("create", "delete", "setData", "setACL", "multi");

	private static final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);

	private final Counts counts;

	CountingZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly, Counts counts)
			throws IOException {
		super(connectString, sessionTimeout, watcher, canBeReadOnly);
		this.counts = counts;
	}

	/**
	 * Return a factory for Curator that creates counting clients.
	 * @param counts where to count
	 * @return the factory
	 */
	public static ZookeeperFactory factory(Counts counts) {
		return (connectString, sessionTimeout, watcher, canBeReadOnly) -> new CountingZooKeeper(connectString,
				sessionTimeout, watcher, canBeReadOnly, counts);
	}

	/** Request counts by operation name. */
	public static final class Counts {

		private final Map<String, AtomicLong> byOperation = new ConcurrentHashMap<>();

		void count(String operation) {
			this.byOperation.computeIfAbsent(operation, (key) -> new AtomicLong()).incrementAndGet();
		}

		/** Forget everything counted so far. */
		public void reset() {
			this.byOperation.clear();
		}

		/** @return requests of every kind */
		public long total() {
			return this.byOperation.values().stream().mapToLong(AtomicLong::get).sum();
		}

		/** @return requests that change the tree */
		public long writes() {
			return this.byOperation.entrySet()
				.stream()
				.filter((entry) -> WRITES.contains(entry.getKey()))
				.mapToLong((entry) -> entry.getValue().get())
				.sum();
		}

		/** @return a snapshot by operation name */
		public Map<String, Long> snapshot() {
			Map<String, Long> snapshot = new java.util.TreeMap<>();
			this.byOperation.forEach((operation, count) -> snapshot.put(operation, count.get()));
			return snapshot;
		}

		@Override
		public String toString() {
			return snapshot().toString();
		}

	}

	/**
	 * Count one request, unless an overload of {@link ZooKeeper} calls another one: some
	 * overloads delegate, and the request must be counted once.
	 */
	private <T> T counted(String operation, Call<T> call) throws KeeperException, InterruptedException {
		enter(operation);
		try {
			return call.call();
		}
		finally {
			depth.get()[0]--;
		}
	}

	private void countedAsync(String operation, Runnable call) {
		enter(operation);
		try {
			call.run();
		}
		finally {
			depth.get()[0]--;
		}
	}

	private void enter(String operation) {
		if (depth.get()[0]++ == 0) {
			this.counts.count(operation);
		}
	}

	@FunctionalInterface
	private interface Call<T> {

		T call() throws KeeperException, InterruptedException;

	}

	@Override
	public String create(String path, byte[] data, List<ACL> acl, CreateMode createMode)
			throws KeeperException, InterruptedException {
		return counted("create", () -> super.create(path, data, acl, createMode));
	}

	@Override
	public String create(String path, byte[] data, List<ACL> acl, CreateMode createMode, Stat stat)
			throws KeeperException, InterruptedException {
		return counted("create", () -> super.create(path, data, acl, createMode, stat));
	}

	@Override
	public String create(String path, byte[] data, List<ACL> acl, CreateMode createMode, Stat stat, long ttl)
			throws KeeperException, InterruptedException {
		return counted("create", () -> super.create(path, data, acl, createMode, stat, ttl));
	}

	@Override
	public void create(String path, byte[] data, List<ACL> acl, CreateMode createMode, AsyncCallback.StringCallback cb,
			Object ctx) {
		countedAsync("create", () -> super.create(path, data, acl, createMode, cb, ctx));
	}

	@Override
	public void create(String path, byte[] data, List<ACL> acl, CreateMode createMode,
			AsyncCallback.Create2Callback cb, Object ctx) {
		countedAsync("create", () -> super.create(path, data, acl, createMode, cb, ctx));
	}

	@Override
	public void create(String path, byte[] data, List<ACL> acl, CreateMode createMode,
			AsyncCallback.Create2Callback cb, Object ctx, long ttl) {
		countedAsync("create", () -> super.create(path, data, acl, createMode, cb, ctx, ttl));
	}

	@Override
	public void delete(String path, int version) throws InterruptedException, KeeperException {
		counted("delete", () -> {
			super.delete(path, version);
			return null;
		});
	}

	@Override
	public void delete(String path, int version, AsyncCallback.VoidCallback cb, Object ctx) {
		countedAsync("delete", () -> super.delete(path, version, cb, ctx));
	}

	@Override
	public List<OpResult> multi(Iterable<Op> ops) throws InterruptedException, KeeperException {
		return counted("multi", () -> super.multi(ops));
	}

	@Override
	public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
		countedAsync("multi", () -> super.multi(ops, cb, ctx));
	}

	@Override
	public Stat exists(String path, Watcher watcher) throws KeeperException, InterruptedException {
		return counted("exists", () -> super.exists(path, watcher));
	}

	@Override
	public Stat exists(String path, boolean watch) throws KeeperException, InterruptedException {
		return counted("exists", () -> super.exists(path, watch));
	}

	@Override
	public void exists(String path, Watcher watcher, AsyncCallback.StatCallback cb, Object ctx) {
		countedAsync("exists", () -> super.exists(path, watcher, cb, ctx));
	}

	@Override
	public void exists(String path, boolean watch, AsyncCallback.StatCallback cb, Object ctx) {
		countedAsync("exists", () -> super.exists(path, watch, cb, ctx));
	}

	@Override
	public byte[] getData(String path, Watcher watcher, Stat stat) throws KeeperException, InterruptedException {
		return counted("getData", () -> super.getData(path, watcher, stat));
	}

	@Override
	public byte[] getData(String path, boolean watch, Stat stat) throws KeeperException, InterruptedException {
		return counted("getData", () -> super.getData(path, watch, stat));
	}

	@Override
	public void getData(String path, Watcher watcher, AsyncCallback.DataCallback cb, Object ctx) {
		countedAsync("getData", () -> super.getData(path, watcher, cb, ctx));
	}

	@Override
	public void getData(String path, boolean watch, AsyncCallback.DataCallback cb, Object ctx) {
		countedAsync("getData", () -> super.getData(path, watch, cb, ctx));
	}

	@Override
	public Stat setData(String path, byte[] data, int version) throws KeeperException, InterruptedException {
		return counted("setData", () -> super.setData(path, data, version));
	}

	@Override
	public void setData(String path, byte[] data, int version, AsyncCallback.StatCallback cb, Object ctx) {
		countedAsync("setData", () -> super.setData(path, data, version, cb, ctx));
	}

	@Override
	public List<ACL> getACL(String path, Stat stat) throws KeeperException, InterruptedException {
		return counted("getACL", () -> super.getACL(path, stat));
	}

	@Override
	public void getACL(String path, Stat stat, AsyncCallback.ACLCallback cb, Object ctx) {
		countedAsync("getACL", () -> super.getACL(path, stat, cb, ctx));
	}

	@Override
	public Stat setACL(String path, List<ACL> acl, int aclVersion) throws KeeperException, InterruptedException {
		return counted("setACL", () -> super.setACL(path, acl, aclVersion));
	}

	@Override
	public void setACL(String path, List<ACL> acl, int version, AsyncCallback.StatCallback cb, Object ctx) {
		countedAsync("setACL", () -> super.setACL(path, acl, version, cb, ctx));
	}

	@Override
	public List<String> getChildren(String path, Watcher watcher) throws KeeperException, InterruptedException {
		return counted("getChildren", () -> super.getChildren(path, watcher));
	}

	@Override
	public List<String> getChildren(String path, boolean watch) throws KeeperException, InterruptedException {
		return counted("getChildren", () -> super.getChildren(path, watch));
	}

	@Override
	public void getChildren(String path, Watcher watcher, AsyncCallback.ChildrenCallback cb, Object ctx) {
		countedAsync("getChildren", () -> super.getChildren(path, watcher, cb, ctx));
	}

	@Override
	public void getChildren(String path, boolean watch, AsyncCallback.ChildrenCallback cb, Object ctx) {
		countedAsync("getChildren", () -> super.getChildren(path, watch, cb, ctx));
	}

	@Override
	public List<String> getChildren(String path, Watcher watcher, Stat stat)
			throws KeeperException, InterruptedException {
		return counted("getChildren", () -> super.getChildren(path, watcher, stat));
	}

	@Override
	public List<String> getChildren(String path, boolean watch, Stat stat)
			throws KeeperException, InterruptedException {
		return counted("getChildren", () -> super.getChildren(path, watch, stat));
	}

	@Override
	public void getChildren(String path, Watcher watcher, AsyncCallback.Children2Callback cb, Object ctx) {
		countedAsync("getChildren", () -> super.getChildren(path, watcher, cb, ctx));
	}

	@Override
	public void getChildren(String path, boolean watch, AsyncCallback.Children2Callback cb, Object ctx) {
		countedAsync("getChildren", () -> super.getChildren(path, watch, cb, ctx));
	}

	@Override
	public int getAllChildrenNumber(String path) throws KeeperException, InterruptedException {
		return counted("getAllChildrenNumber", () -> super.getAllChildrenNumber(path));
	}

	@Override
	public void getAllChildrenNumber(String path, AsyncCallback.AllChildrenNumberCallback cb, Object ctx) {
		countedAsync("getAllChildrenNumber", () -> super.getAllChildrenNumber(path, cb, ctx));
	}

	@Override
	public List<String> getEphemerals() throws KeeperException, InterruptedException {
		return counted("getEphemerals", () -> super.getEphemerals());
	}

	@Override
	public List<String> getEphemerals(String prefixPath) throws KeeperException, InterruptedException {
		return counted("getEphemerals", () -> super.getEphemerals(prefixPath));
	}

	@Override
	public void getEphemerals(String prefixPath, AsyncCallback.EphemeralsCallback cb, Object ctx) {
		countedAsync("getEphemerals", () -> super.getEphemerals(prefixPath, cb, ctx));
	}

	@Override
	public void getEphemerals(AsyncCallback.EphemeralsCallback cb, Object ctx) {
		countedAsync("getEphemerals", () -> super.getEphemerals(cb, ctx));
	}

	@Override
	public void sync(String path) throws KeeperException, InterruptedException {
		counted("sync", () -> {
			super.sync(path);
			return null;
		});
	}

	@Override
	public void sync(String path, AsyncCallback.VoidCallback cb, Object ctx) {
		countedAsync("sync", () -> super.sync(path, cb, ctx));
	}

	@Override
	public void removeWatches(String path, Watcher watcher, Watcher.WatcherType watcherType, boolean local)
			throws InterruptedException, KeeperException {
		counted("removeWatches", () -> {
			super.removeWatches(path, watcher, watcherType, local);
			return null;
		});
	}

	@Override
	public void removeWatches(String path, Watcher watcher, Watcher.WatcherType watcherType, boolean local,
			AsyncCallback.VoidCallback cb, Object ctx) {
		countedAsync("removeWatches", () -> super.removeWatches(path, watcher, watcherType, local, cb, ctx));
	}

	@Override
	public void removeAllWatches(String path, Watcher.WatcherType watcherType, boolean local)
			throws InterruptedException, KeeperException {
		counted("removeWatches", () -> {
			super.removeAllWatches(path, watcherType, local);
			return null;
		});
	}

	@Override
	public void removeAllWatches(String path, Watcher.WatcherType watcherType, boolean local,
			AsyncCallback.VoidCallback cb, Object ctx) {
		countedAsync("removeWatches", () -> super.removeAllWatches(path, watcherType, local, cb, ctx));
	}

	@Override
	public void addWatch(String basePath, Watcher watcher, AddWatchMode mode)
			throws KeeperException, InterruptedException {
		counted("addWatch", () -> {
			super.addWatch(basePath, watcher, mode);
			return null;
		});
	}

	@Override
	public void addWatch(String basePath, AddWatchMode mode) throws KeeperException, InterruptedException {
		counted("addWatch", () -> {
			super.addWatch(basePath, mode);
			return null;
		});
	}

	@Override
	public void addWatch(String basePath, Watcher watcher, AddWatchMode mode, AsyncCallback.VoidCallback cb,
			Object ctx) {
		countedAsync("addWatch", () -> super.addWatch(basePath, watcher, mode, cb, ctx));
	}

	@Override
	public void addWatch(String basePath, AddWatchMode mode, AsyncCallback.VoidCallback cb, Object ctx) {
		countedAsync("addWatch", () -> super.addWatch(basePath, mode, cb, ctx));
	}

}
