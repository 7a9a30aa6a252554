package io.github.zklock.test;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.jspecify.annotations.Nullable;

/**
 * A ZooKeeper client that counts the requests it sends, by operation, then sends them unchanged.
 * Every public request method of {@link ZooKeeper} is counted (synchronous and asynchronous);
 * connection pings are not requests and are not counted. Install it with
 * {@code CuratorFrameworkFactory.builder().zookeeperFactory(CountingZooKeeper.factory(counts))}.
 * <p>
 * It also counts round trips: a request starts one when it is the first counted, or when an answer
 * arrived since the previous request was sent; requests sent back to back, before any answer, share
 * one. An answer is the return (or exception) of a synchronous method, or the invocation of an
 * asynchronous method's callback, noted before the callback runs so that a request the callback
 * sends starts a new round trip. An asynchronous request sent without a callback still has its
 * answer noted.
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

	/**
	 * Request counts by operation name, and round trips. Safe for concurrent use: requests are
	 * counted on the threads that send them, answers noted on those threads (synchronous requests)
	 * or ZooKeeper's event thread (callbacks). Round trips are counted for the client as a whole,
	 * so requests that several threads send before any answer share one.
	 */
	public static final class Counts {

		private final Map<String, AtomicLong> byOperation = new ConcurrentHashMap<>();

		private final AtomicLong roundTrips = new AtomicLong();

		/** Whether an answer arrived since the last request was counted (or nothing was counted). */
		private final AtomicBoolean answerSinceLastRequest = new AtomicBoolean(true);

		void count(String operation) {
			this.byOperation.computeIfAbsent(operation, (key) -> new AtomicLong()).incrementAndGet();
			if (this.answerSinceLastRequest.getAndSet(false)) {
				this.roundTrips.incrementAndGet();
			}
		}

		void answered() {
			this.answerSinceLastRequest.set(true);
		}

		/**
		 * Forget everything counted so far: the next request counted starts a round trip, even when
		 * the answer to one sent before is still to come.
		 */
		public void reset() {
			this.byOperation.clear();
			this.roundTrips.set(0);
			this.answerSinceLastRequest.set(true);
		}

		/**
		 * Return the round trips: requests that waited for an answer before they were sent, plus one
		 * for the first. Requests sent back to back before any answer count one together; requests
		 * sent one after the other's answer count one each.
		 * @return the round trips since the last {@link #reset()}
		 */
		public long roundTrips() {
			return this.roundTrips.get();
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
	 * overloads delegate, and the request must be counted once. The outermost call's return or
	 * exception is the answer.
	 */
	private <T> T counted(String operation, Call<T> call) throws KeeperException, InterruptedException {
		enter(operation);
		try {
			return call.call();
		}
		finally {
			if (--depth.get()[0] == 0) {
				this.counts.answered();
			}
		}
	}

	/**
	 * Count one asynchronous request (once, as {@link #counted}); its answer is noted by the callback
	 * that {@code notingAnswer} wrapped.
	 */
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

	/**
	 * Whether the request method being entered is called by the application, not by another
	 * overload: only that call's callback is wrapped, so that an answer is noted once.
	 */
	private static boolean outermost() {
		return depth.get()[0] == 0;
	}

	// One wrapper per callback type: ZooKeeper's event thread picks the callback's method by the
	// response's type and casts the callback to the matching interface, so each wrapper implements
	// exactly the interface it wraps.

	private AsyncCallback.@Nullable StringCallback notingAnswer(AsyncCallback.@Nullable StringCallback cb) {
		return outermost() ? (rc, path, ctx, name) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, name);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable Create2Callback notingAnswer(AsyncCallback.@Nullable Create2Callback cb) {
		return outermost() ? (rc, path, ctx, name, stat) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, name, stat);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable VoidCallback notingAnswer(AsyncCallback.@Nullable VoidCallback cb) {
		return outermost() ? (rc, path, ctx) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable MultiCallback notingAnswer(AsyncCallback.@Nullable MultiCallback cb) {
		return outermost() ? (rc, path, ctx, results) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, results);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable StatCallback notingAnswer(AsyncCallback.@Nullable StatCallback cb) {
		return outermost() ? (rc, path, ctx, stat) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, stat);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable DataCallback notingAnswer(AsyncCallback.@Nullable DataCallback cb) {
		return outermost() ? (rc, path, ctx, data, stat) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, data, stat);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable ACLCallback notingAnswer(AsyncCallback.@Nullable ACLCallback cb) {
		return outermost() ? (rc, path, ctx, acl, stat) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, acl, stat);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable ChildrenCallback notingAnswer(AsyncCallback.@Nullable ChildrenCallback cb) {
		return outermost() ? (rc, path, ctx, children) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, children);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable Children2Callback notingAnswer(AsyncCallback.@Nullable Children2Callback cb) {
		return outermost() ? (rc, path, ctx, children, stat) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, children, stat);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable AllChildrenNumberCallback notingAnswer(AsyncCallback.@Nullable AllChildrenNumberCallback cb) {
		return outermost() ? (rc, path, ctx, number) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, path, ctx, number);
			}
		} : cb;
	}

	private AsyncCallback.@Nullable EphemeralsCallback notingAnswer(AsyncCallback.@Nullable EphemeralsCallback cb) {
		return outermost() ? (rc, ctx, paths) -> {
			this.counts.answered();
			if (cb != null) {
				cb.processResult(rc, ctx, paths);
			}
		} : cb;
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
		AsyncCallback.StringCallback callback = notingAnswer(cb);
		countedAsync("create", () -> super.create(path, data, acl, createMode, callback, ctx));
	}

	@Override
	public void create(String path, byte[] data, List<ACL> acl, CreateMode createMode,
			AsyncCallback.Create2Callback cb, Object ctx) {
		AsyncCallback.Create2Callback callback = notingAnswer(cb);
		countedAsync("create", () -> super.create(path, data, acl, createMode, callback, ctx));
	}

	@Override
	public void create(String path, byte[] data, List<ACL> acl, CreateMode createMode,
			AsyncCallback.Create2Callback cb, Object ctx, long ttl) {
		AsyncCallback.Create2Callback callback = notingAnswer(cb);
		countedAsync("create", () -> super.create(path, data, acl, createMode, callback, ctx, ttl));
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
		AsyncCallback.VoidCallback callback = notingAnswer(cb);
		countedAsync("delete", () -> super.delete(path, version, callback, ctx));
	}

	@Override
	public List<OpResult> multi(Iterable<Op> ops) throws InterruptedException, KeeperException {
		return counted("multi", () -> super.multi(ops));
	}

	@Override
	public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
		AsyncCallback.MultiCallback callback = notingAnswer(cb);
		countedAsync("multi", () -> super.multi(ops, callback, ctx));
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
		AsyncCallback.StatCallback callback = notingAnswer(cb);
		countedAsync("exists", () -> super.exists(path, watcher, callback, ctx));
	}

	@Override
	public void exists(String path, boolean watch, AsyncCallback.StatCallback cb, Object ctx) {
		AsyncCallback.StatCallback callback = notingAnswer(cb);
		countedAsync("exists", () -> super.exists(path, watch, callback, ctx));
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
		AsyncCallback.DataCallback callback = notingAnswer(cb);
		countedAsync("getData", () -> super.getData(path, watcher, callback, ctx));
	}

	@Override
	public void getData(String path, boolean watch, AsyncCallback.DataCallback cb, Object ctx) {
		AsyncCallback.DataCallback callback = notingAnswer(cb);
		countedAsync("getData", () -> super.getData(path, watch, callback, ctx));
	}

	@Override
	public Stat setData(String path, byte[] data, int version) throws KeeperException, InterruptedException {
		return counted("setData", () -> super.setData(path, data, version));
	}

	@Override
	public void setData(String path, byte[] data, int version, AsyncCallback.StatCallback cb, Object ctx) {
		AsyncCallback.StatCallback callback = notingAnswer(cb);
		countedAsync("setData", () -> super.setData(path, data, version, callback, ctx));
	}

	@Override
	public List<ACL> getACL(String path, Stat stat) throws KeeperException, InterruptedException {
		return counted("getACL", () -> super.getACL(path, stat));
	}

	@Override
	public void getACL(String path, Stat stat, AsyncCallback.ACLCallback cb, Object ctx) {
		AsyncCallback.ACLCallback callback = notingAnswer(cb);
		countedAsync("getACL", () -> super.getACL(path, stat, callback, ctx));
	}

	@Override
	public Stat setACL(String path, List<ACL> acl, int aclVersion) throws KeeperException, InterruptedException {
		return counted("setACL", () -> super.setACL(path, acl, aclVersion));
	}

	@Override
	public void setACL(String path, List<ACL> acl, int version, AsyncCallback.StatCallback cb, Object ctx) {
		AsyncCallback.StatCallback callback = notingAnswer(cb);
		countedAsync("setACL", () -> super.setACL(path, acl, version, callback, ctx));
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
		AsyncCallback.ChildrenCallback callback = notingAnswer(cb);
		countedAsync("getChildren", () -> super.getChildren(path, watcher, callback, ctx));
	}

	@Override
	public void getChildren(String path, boolean watch, AsyncCallback.ChildrenCallback cb, Object ctx) {
		AsyncCallback.ChildrenCallback callback = notingAnswer(cb);
		countedAsync("getChildren", () -> super.getChildren(path, watch, callback, ctx));
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
		AsyncCallback.Children2Callback callback = notingAnswer(cb);
		countedAsync("getChildren", () -> super.getChildren(path, watcher, callback, ctx));
	}

	@Override
	public void getChildren(String path, boolean watch, AsyncCallback.Children2Callback cb, Object ctx) {
		AsyncCallback.Children2Callback callback = notingAnswer(cb);
		countedAsync("getChildren", () -> super.getChildren(path, watch, callback, ctx));
	}

	@Override
	public int getAllChildrenNumber(String path) throws KeeperException, InterruptedException {
		return counted("getAllChildrenNumber", () -> super.getAllChildrenNumber(path));
	}

	@Override
	public void getAllChildrenNumber(String path, AsyncCallback.AllChildrenNumberCallback cb, Object ctx) {
		AsyncCallback.AllChildrenNumberCallback callback = notingAnswer(cb);
		countedAsync("getAllChildrenNumber", () -> super.getAllChildrenNumber(path, callback, ctx));
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
		AsyncCallback.EphemeralsCallback callback = notingAnswer(cb);
		countedAsync("getEphemerals", () -> super.getEphemerals(prefixPath, callback, ctx));
	}

	@Override
	public void getEphemerals(AsyncCallback.EphemeralsCallback cb, Object ctx) {
		AsyncCallback.EphemeralsCallback callback = notingAnswer(cb);
		countedAsync("getEphemerals", () -> super.getEphemerals(callback, ctx));
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
		AsyncCallback.VoidCallback callback = notingAnswer(cb);
		countedAsync("sync", () -> super.sync(path, callback, ctx));
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
		AsyncCallback.VoidCallback callback = notingAnswer(cb);
		countedAsync("removeWatches", () -> super.removeWatches(path, watcher, watcherType, local, callback, ctx));
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
		AsyncCallback.VoidCallback callback = notingAnswer(cb);
		countedAsync("removeWatches", () -> super.removeAllWatches(path, watcherType, local, callback, ctx));
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
		AsyncCallback.VoidCallback callback = notingAnswer(cb);
		countedAsync("addWatch", () -> super.addWatch(basePath, watcher, mode, callback, ctx));
	}

	@Override
	public void addWatch(String basePath, AddWatchMode mode, AsyncCallback.VoidCallback cb, Object ctx) {
		AsyncCallback.VoidCallback callback = notingAnswer(cb);
		countedAsync("addWatch", () -> super.addWatch(basePath, mode, callback, ctx));
	}

}
