package io.github.zklock.curator;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * ZooKeeper requests of an uncontended asynchronous cycle made without a thread
 * ({@link CuratorLockRegistry#submit}, then the release), by kind, counted on the client
 * ({@link CountingZooKeeper}) once the key was used: what the synchronous cycle on Curator's recipe
 * sends, and for a lease one request fewer (the recipe removes the watch its listing left; here it
 * fires once, at the release, and is dropped).
 */
class AsyncRequestCountTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(30);

	private final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private CuratorLockRegistry registry;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		CuratorFramework client = zooKeeper
			.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.counts)));
		this.registry = new CuratorLockRegistry(client, "/locks", 100);
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() {
		this.registry.close();
	}

	@Test
	void exclusiveReadAndWriteCyclesSendCreateGetChildrenAndDelete() throws Exception {
		for (LockMode mode : LockMode.values()) {
			LockTarget target = new LockTarget(this.key + "-" + mode, mode, true, 0, Duration.ZERO);
			cycle(target);
			for (int i = 0; i < 3; i++) {
				assertThat(cycle(target)).as("%s cycle %d", mode, i)
					.isEqualTo(Map.of("create", 1L, "getChildren", 1L, "delete", 1L));
			}
		}
	}

	@Test
	void leaseCyclesSendTheRecipesRequestsButTheRemoveWatches() throws Exception {
		for (int permits : new int[] { 0, 2 }) {
			LockTarget target = new LockTarget(this.key + "-" + permits, LockMode.EXCLUSIVE, false, permits,
					Duration.ZERO);
			cycle(target);
			for (int i = 0; i < 3; i++) {
				assertThat(cycle(target)).as("permits %d, cycle %d", permits, i)
					.isEqualTo(Map.of("create", 2L, "getChildren", 2L, "delete", 2L));
			}
		}
	}

	/** One grant and release, and its requests once the release's deletes were answered. */
	private Map<String, Long> cycle(LockTarget target) throws Exception {
		this.counts.reset();
		Optional<RegistryGrant> grant = this.registry.submit(target).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		long deletes = (target.reentrant() || target.mode() == LockMode.READ) ? 1 : 2;
		grant.orElseThrow().release();
		await().atMost(BOUND).until(() -> this.counts.snapshot().getOrDefault("delete", 0L) >= deletes);
		// A request the cycle sent after the deletes would be counted within this.
		TimeUnit.MILLISECONDS.sleep(100);
		return this.counts.snapshot();
	}

}
