package io.github.zklock.chaos;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;

import io.github.zklock.LockHandle;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

/**
 * The other application of a chaos test, the one that is not harmed: its own client on the
 * test's server (NIO socket, 10 s session), a registry on {@link LockWorker#ROOT}, and one thread
 * on which it waits for a grant while the test harms the holder. The extension that made the
 * client closes it; {@link #close()} closes the rest.
 */
final class Contender implements AutoCloseable {

	private final CuratorFramework client;

	private final CuratorLockRegistry registry;

	private final ExecutorService thread = Executors.newSingleThreadExecutor();

	Contender(ZooKeeperExtension zooKeeper) throws Exception {
		this.client = zooKeeper.newClient(Chaos.clientSettings(Duration.ofSeconds(10), ClientSocket.NIO));
		this.registry = new CuratorLockRegistry(this.client, LockWorker.ROOT, 16);
	}

	CuratorFramework client() {
		return this.client;
	}

	CuratorLockRegistry registry() {
		return this.registry;
	}

	/**
	 * Queue for the key (exclusive, waiting up to 30 s) on the contender's thread, and return once
	 * its znode is queued behind the holder's.
	 * @param key the key below {@link LockWorker#ROOT}
	 * @return the grant, released at once: {@code System.nanoTime()} when it was granted, and its
	 * fencing token
	 */
	Future<long[]> queueBehindHolder(String key) {
		Future<long[]> next = this.thread.submit(() -> {
			LockHandle handle = this.registry.tryAcquire(Chaos.exclusive(key, Duration.ofSeconds(30))).orElseThrow();
			long grantedAt = System.nanoTime();
			try {
				return new long[] { grantedAt, handle.fencingToken() };
			}
			finally {
				handle.release();
			}
		});
		Chaos.awaitLockNodes(this.client, LockWorker.ROOT + key, 2);
		return next;
	}

	/** Run a task on the contender's thread. */
	<T> Future<T> submit(Callable<T> task) {
		return this.thread.submit(task);
	}

	@Override
	public void close() throws InterruptedException {
		this.thread.shutdownNow();
		this.thread.awaitTermination(10, TimeUnit.SECONDS);
		Chaos.closeQuietly(this.registry);
	}

}
