package io.github.zklock.shedlock;

import java.time.Duration;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;

import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

/**
 * One "application" of a test: its own Curator client (so its own ZooKeeper session), lock
 * registry, template and ShedLock provider, as a separate process would have. The extension
 * closes the client after the test; the test closes the registry.
 *
 * @param client the application's client
 * @param registry its zk-lock registry, rooted at {@link #ROOT}
 * @param template its template
 * @param provider its ShedLock provider, with the default key prefix
 */
record Application(CuratorFramework client, CuratorLockRegistry registry, LockTemplate template,
		ZkLockProvider provider) {

	static final String ROOT = "/locks";

	static Application start(ZooKeeperExtension zooKeeper) throws InterruptedException {
		return start(zooKeeper, (builder) -> {
		});
	}

	static Application start(ZooKeeperExtension zooKeeper, Consumer<CuratorFrameworkFactory.Builder> customizer)
			throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient(customizer);
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 100);
		LockTemplate template = new LockTemplate(registry, Duration.ofSeconds(10));
		return new Application(client, registry, template, new ZkLockProvider(template));
	}

	/**
	 * Return the full znode path of a ShedLock lock name with the default prefix, for names that
	 * need no encoding.
	 */
	static String lockPath(String lockName) {
		return ROOT + ZkLockProvider.DEFAULT_KEY_PREFIX + "/" + lockName;
	}

}
