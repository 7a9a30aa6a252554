package io.github.zklock.curator;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * The numbers of permits checked against the ones stored with their keys ({@link SemaphorePermits})
 * for asynchronous permit requests, per semaphore path and number: one check per key and number
 * however many requests arrive meanwhile (they wait for the same outcome), run on one daemon thread
 * ({@code zk-lock-permits}, started on demand, ended after 30 s idle) since the check's requests
 * are synchronous. A check is forgotten, and made again by the next request, when it failed, or
 * when ZooKeeper tells (through the watch the check left) that the semaphore's znode was deleted
 * (reaped) or the session ended.
 */
final class CheckedPermits {

	private final CuratorFramework client;

	private final CuratorZnodes znodes;

	private final ConcurrentHashMap<Key, Check> checks = new ConcurrentHashMap<>();

	private final ThreadPoolExecutor executor;

	CheckedPermits(CuratorFramework client, CuratorZnodes znodes) {
		this.client = client;
		this.znodes = znodes;
		this.executor = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), (task) -> {
			Thread thread = new Thread(task, "zk-lock-permits");
			thread.setDaemon(true);
			return thread;
		});
		this.executor.allowCoreThreadTimeOut(true);
	}

	/**
	 * Check the number of permits a request names against the key's, once.
	 * @param lockPath the semaphore's znode path
	 * @param permits the number the request names
	 * @return completes when the number matches, exceptionally with what
	 * {@link SemaphorePermits#check} threw (a {@link io.github.zklock.PermitsMismatchException}, say)
	 */
	CompletableFuture<Void> check(String lockPath, int permits) {
		Key key = new Key(lockPath, permits);
		Check check = this.checks.get(key);
		if (check != null) {
			return check.outcome;
		}
		Check created = new Check(key);
		check = this.checks.putIfAbsent(key, created);
		if (check != null) {
			return check.outcome;
		}
		try {
			this.executor.execute(created::run);
		}
		catch (RuntimeException ex) {
			created.failed(ex);
		}
		return created.outcome;
	}

	/** Stop the check thread; checks not started fail. */
	void close() {
		for (Runnable pending : this.executor.shutdownNow()) {
			pending.run();
		}
	}

	private record Key(String lockPath, int permits) {
	}

	private final class Check implements Watcher {

		private final Key key;

		private final CompletableFuture<Void> outcome = new CompletableFuture<>();

		Check(Key key) {
			this.key = key;
		}

		void run() {
			if (CheckedPermits.this.executor.isShutdown()) {
				failed(new IllegalStateException("The lock registry is closed"));
				return;
			}
			try {
				SemaphorePermits.check(CheckedPermits.this.client, CheckedPermits.this.znodes, this.key.lockPath(), this.key.permits(), this);
				this.outcome.complete(null);
			}
			catch (Exception ex) {
				failed(ex);
			}
		}

		void failed(Throwable ex) {
			forget();
			this.outcome.completeExceptionally(ex);
		}

		/** The znode was deleted, or the session ended: the next request checks again. */
		@Override
		public void process(WatchedEvent event) {
			if (event.getType() != Event.EventType.NodeDataChanged) {
				forget();
			}
		}

		private void forget() {
			CheckedPermits.this.checks.remove(this.key, this);
		}

	}

}
