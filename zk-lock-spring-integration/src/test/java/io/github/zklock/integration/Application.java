package io.github.zklock.integration;

import java.time.Duration;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;

import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;


/**
 * One "application" of a test: its own Curator client (so its own ZooKeeper session), lock
 * registry, template and Spring Integration lock registry, as a separate process would have.
 * The extension closes the client after the test.
 *
 * @param client the application's client
 * @param registry its zk-lock registry, rooted at {@link #ROOT}
 * @param template its template
 * @param locks its Spring Integration lock registry, with the default key prefix
 */
record Application(CuratorFramework client, CuratorLockRegistry registry, LockTemplate template,
		ZkLockRegistry locks) {

	static final String ROOT = "/locks";

	static Application start(ZooKeeperExtension zooKeeper) throws InterruptedException {
		return start(zooKeeper, (builder) -> {
		}, 100);
	}

	static Application start(ZooKeeperExtension zooKeeper, Consumer<CuratorFrameworkFactory.Builder> customizer,
			int cacheCapacity) throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient(customizer);
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, cacheCapacity);
		LockTemplate template = new LockTemplate(registry, Duration.ofSeconds(10));
		return new Application(client, registry, template, new ZkLockRegistry(template));
	}

	/**
	 * Expire this application's session on the server, as a long pause or a partition would (see
	 * {@link ZooKeeperExtension#expireSession}); the client then reconnects with a new session.
	 */
	void expireSession(ZooKeeperExtension zooKeeper) throws Exception {
		zooKeeper.expireSession(this.client);
	}

	/**
	 * Return the full znode path of a Spring Integration lock key with the default prefix, for
	 * keys that need no encoding.
	 */
	static String lockPath(Object lockKey) {
		return ROOT + ZkLockRegistry.DEFAULT_KEY_PREFIX + "/" + lockKey;
	}

}
