package io.github.zklock.aop;

import java.time.Duration;
import java.util.Optional;

import org.apache.curator.framework.CuratorFramework;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Another application on the same ZooKeeper server, for the tests of asynchronous methods: its own
 * client and registry, which ask for the keys the application under test locks, without waiting.
 * The extension closes the client.
 */
final class OtherApplication implements AutoCloseable {

	private final CuratorFramework client;

	private final CuratorLockRegistry registry;

	OtherApplication(ZooKeeperExtension zooKeeper) throws InterruptedException {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, "/locks", 10);
	}

	CuratorFramework client() {
		return this.client;
	}

	CuratorLockRegistry registry() {
		return this.registry;
	}

	/** Try the key without waiting, releasing at once if granted. */
	boolean canTake(String key, LockMode mode) {
		Optional<RegistryGrant> handle = this.registry.tryAcquire(new LockTarget(key, mode, true, 0, Duration.ZERO));
		handle.ifPresent(LockHandle::release);
		return handle.isPresent();
	}

	/** Take the key EXCLUSIVE without waiting; fails if it is held. */
	LockHandle take(String key) {
		return this.registry.tryAcquire(new LockTarget(key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO)).orElseThrow();
	}

	/** Wait, within 10 s, until no ephemeral znode is left below the path. */
	void assertNoZnodes(String path) {
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, path)).isEmpty());
	}

	@Override
	public void close() {
		this.registry.close();
	}

}
