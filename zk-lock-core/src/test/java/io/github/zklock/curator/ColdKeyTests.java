package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for a cold key's znodes through {@link CuratorZnodes} on a real ZooKeeper server whose
 * container reaper runs every 100 ms: the missing levels are created as containers (the server
 * reaps them once empty), the create refused for them is sent again with its listing right behind,
 * only the levels below one the client knows to exist are created, a lease whose internal mutex
 * created the semaphore's path creates its leases without a refused create, and a level the server
 * reaped since the client saw it is created again.
 */
class ColdKeyTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension()
		.withContainerCheckInterval(Duration.ofMillis(100));

	private static final long BOUND_MS = 20_000;

	private final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private CuratorFramework client;

	private CuratorFramework otherClient;

	private Znodes znodes;

	private String base;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.client = zooKeeper.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.counts)));
		this.otherClient = zooKeeper.newClient();
		this.counts.reset();
		this.znodes = new CuratorZnodes(this.client, "/", 100);
		this.base = "/cold-" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@Test
	void everyMissingLevelIsAContainerThatTheServerReapsOnceEmpty() throws Exception {
		String lockPath = this.base + "/tenant-1/order/42";
		ZnodeAcquisition znode = grant(lockPath);
		assertThat(znode.node()).startsWith(lockPath + "/_c_").contains("-lock-");
		for (String level : List.of(this.base, this.base + "/tenant-1", this.base + "/tenant-1/order", lockPath)) {
			Stat stat = this.otherClient.checkExists().forPath(level);
			assertThat(stat).as(level).isNotNull();
			assertThat(stat.getEphemeralOwner()).as(level).isZero();
			assertThat(this.otherClient.getData().forPath(level)).as(level).isEmpty();
		}
		znode.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		// Containers: the reaper deletes each once it has no child, bottom up.
		await().atMost(Duration.ofMillis(BOUND_MS)).until(() -> this.otherClient.checkExists().forPath(this.base) == null);
	}

	@Test
	void aKeyBelowALevelTheClientCreatedCreatesOnlyItsOwnZnodeWithTheListingBehindTheCreate() throws Exception {
		ZnodeAcquisition held = grant(this.base + "/orders/1");

		this.counts.reset();
		ZnodeAcquisition second = grant(this.base + "/orders/2");
		// The refused create and its listing, then the one missing level, the create and the listing.
		assertThat(this.counts.snapshot()).isEqualTo(Map.of("create", 3L, "getChildren", 2L));
		second.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		held.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
	}

	@Test
	void aColdLeaseCreatesTheSemaphoresLeasesWithItsCreateOnceItsInternalMutexCreatedTheSemaphore()
			throws Exception {
		ZnodeAcquisition held = grant(this.base + "/semaphores/0", Protocol.LEASE);

		this.counts.reset();
		ZnodeAcquisition lease = grant(this.base + "/semaphores/1", Protocol.LEASE);
		assertThat(lease.node()).startsWith(this.base + "/semaphores/1/leases/_c_").contains("-lease-");
		// The internal mutex: the refused create and its listing; the semaphore's path and its locks,
		// the create and the listing. The lease: its leases, the create and the listing (no create
		// refused first). The internal mutex's delete.
		assertThat(this.counts.snapshot()).isEqualTo(Map.of("create", 6L, "getChildren", 3L, "delete", 1L));
		lease.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		held.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		// The reaper may have deleted the emptied containers already.
		for (String queue : List.of(this.base + "/semaphores/1/leases", this.base + "/semaphores/1/locks")) {
			assertThat(this.otherClient.checkExists().forPath(queue) == null
					|| this.otherClient.getChildren().forPath(queue).isEmpty()).as(queue).isTrue();
		}
	}

	@Test
	void aLevelReapedSinceTheClientCreatedItIsCreatedAgain() throws Exception {
		grant(this.base + "/tenant-1/order/1").end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		await().atMost(Duration.ofMillis(BOUND_MS))
			.until(() -> this.otherClient.checkExists().forPath(this.base + "/tenant-1") == null);

		String lockPath = this.base + "/tenant-1/order/2";
		ZnodeAcquisition second = grant(lockPath);
		assertThat(second.node()).startsWith(lockPath + "/_c_");
		assertThat(this.otherClient.getChildren().forPath(lockPath)).hasSize(1);
		second.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
		assertThat(this.otherClient.checkExists().forPath(lockPath) == null
				|| this.otherClient.getChildren().forPath(lockPath).isEmpty()).isTrue();
	}

	@Test
	void aRootPathTakenToExistThatIsMissingIsCreatedOnTheNextAttempt() throws Exception {
		this.znodes = new CuratorZnodes(this.client, this.base + "/root", 100);
		String lockPath = this.base + "/root/orders/1";
		ZnodeAcquisition znode = grant(lockPath);
		assertThat(znode.node()).startsWith(lockPath + "/_c_");
		// Refused, then refused again below the missing root, then created with every level.
		assertThat(this.counts.snapshot().get("create")).isEqualTo(1L + 2 + 1 + 4 + 1);
		znode.end().get(BOUND_MS, TimeUnit.MILLISECONDS);
	}

	private ZnodeAcquisition grant(String lockPath) throws Exception {
		return grant(lockPath, Protocol.MUTEX);
	}

	private ZnodeAcquisition grant(String lockPath, Protocol protocol) throws Exception {
		CompletableFuture<ZnodeAcquisition> decided = new CompletableFuture<>();
		ZnodeAcquisition acquisition = new ZnodeAcquisition(this.znodes, lockPath, protocol, 1, false,
				(znode) -> {
					if (znode.failure() != null) {
						decided.completeExceptionally(znode.failure());
					}
					else {
						decided.complete(znode);
					}
				}, System::nanoTime, new OwnZnodes());
		acquisition.start();
		ZnodeAcquisition znode = decided.get(BOUND_MS, TimeUnit.MILLISECONDS);
		assertThat(znode.granted()).as("granted").isTrue();
		return znode;
	}

}
