package io.github.zklock.test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.entry;

/**
 * Tests for {@link CountingZooKeeper}: a Curator client built with its factory counts each request
 * it sends once, by operation, and tells writes from reads. The lock cycle counted is the one of
 * Curator's own {@link InterProcessMutex} (curator-recipes, a test dependency of this module): an
 * uncontended acquire and release is a create of a sequential ephemeral znode, a list of the
 * lock's children and a delete of the znode, of which two are writes, each sent after the previous
 * one's answer: three round trips. Requests sent back to back share a round trip; to send them
 * before any answer can arrive, the tests send them from a callback, since ZooKeeper's event thread
 * runs one callback at a time.
 */
class CountingZooKeeperTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int PIPELINED = 5;

	private final CountingZooKeeper.Counts counts = new CountingZooKeeper.Counts();

	private CuratorFramework client;

	@BeforeEach
	void countingClient() throws Exception {
		CuratorFramework other = zooKeeper.newClient();
		if (other.checkExists().forPath("/lock") == null) {
			other.create().forPath("/lock");
		}
		this.client = zooKeeper
			.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.counts)));
	}

	@Test
	void countsNothingForConnecting() {
		assertThat(this.client.getZookeeperClient().isConnected()).isTrue();
		assertThat(this.counts.total()).isZero();
		assertThat(this.counts.snapshot()).isEmpty();
	}

	@Test
	void countsTheThreeRequestsAndTwoWritesOfALockCycle() throws Exception {
		CuratorFramework observer = zooKeeper.newClient();
		// Persistent: a parent the recipe makes is a container, which the server deletes once empty,
		// and a cycle that finds it gone creates it again. Every cycle, the first too, is then the
		// recipe's own.
		observer.create().forPath("/mutex");
		InterProcessMutex mutex = new InterProcessMutex(this.client, "/mutex");
		for (int i = 0; i < 3; i++) {
			this.counts.reset();
			assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
			try {
				assertThat(observer.getChildren().forPath("/mutex")).as("the holder's znode").hasSize(1);
			}
			finally {
				mutex.release();
			}
			assertThat(observer.getChildren().forPath("/mutex")).as("deleted on release").isEmpty();
			// Create a sequential ephemeral znode, list the lock's children, delete the znode.
			assertThat(this.counts.snapshot()).containsExactly(entry("create", 1L), entry("delete", 1L),
					entry("getChildren", 1L));
			assertThat(this.counts.total()).isEqualTo(3);
			assertThat(this.counts.writes()).isEqualTo(2);
			assertThat(this.counts.roundTrips()).as("each request waits for the previous one's answer").isEqualTo(3);
			assertThat(this.counts).hasToString("{create=1, delete=1, getChildren=1}");
		}
	}

	@Test
	void resetForgetsWhatWasCounted() throws Exception {
		this.client.create().withMode(CreateMode.EPHEMERAL).forPath("/lock/reset");
		assertThat(this.counts.writes()).isOne();
		assertThat(this.counts.roundTrips()).isOne();
		this.counts.reset();
		assertThat(this.counts.total()).isZero();
		assertThat(this.counts.writes()).isZero();
		assertThat(this.counts.roundTrips()).isZero();
		assertThat(this.counts.snapshot()).isEmpty();
		assertThat(this.client.checkExists().forPath("/lock/reset")).isNotNull();
		assertThat(this.counts.snapshot()).containsExactly(entry("exists", 1L));
		assertThat(this.counts.roundTrips()).isOne();
		assertThat(this.counts.writes()).as("a read").isZero();
	}

	@Test
	void countsBackgroundRequestsAndTransactionsOnce() throws Exception {
		CountDownLatch answered = new CountDownLatch(1);
		this.client.getData().inBackground((source, event) -> answered.countDown()).forPath("/lock");
		assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
		this.client.transaction()
			.forOperations(this.client.transactionOp().create().forPath("/lock/a"),
					this.client.transactionOp().delete().forPath("/lock/a"));
		assertThat(this.counts.snapshot()).containsExactly(entry("getData", 1L), entry("multi", 1L));
		assertThat(this.counts.writes()).as("the transaction").isOne();
		assertThat(this.counts.roundTrips()).as("the read answered before the transaction was sent").isEqualTo(2);
	}

	@Test
	void countsRequestsSentBeforeAnyAnswerAsOneRoundTrip() throws Exception {
		ZooKeeper zooKeeper = this.client.getZookeeperClient().getZooKeeper();
		CountDownLatch answered = new CountDownLatch(PIPELINED);
		// The reads go out back to back from the callback of a first request: no answer to them can
		// be noted before the callback returns.
		zooKeeper.exists("/lock", false, (rc, path, ctx, stat) -> {
			for (int i = 0; i < PIPELINED; i++) {
				zooKeeper.getData("/lock", false, (rc2, path2, ctx2, data, stat2) -> answered.countDown(), null);
			}
		}, null);
		assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.counts.snapshot()).containsExactly(entry("exists", 1L), entry("getData", (long) PIPELINED));
		assertThat(this.counts.roundTrips()).as("the first request, then the reads together").isEqualTo(2);
	}

	@Test
	void countsEachSynchronousRequestAsARoundTrip() throws Exception {
		ZooKeeper zooKeeper = this.client.getZookeeperClient().getZooKeeper();
		for (int i = 0; i < PIPELINED; i++) {
			zooKeeper.exists("/lock", false);
		}
		assertThatExceptionOfType(KeeperException.NoNodeException.class)
			.isThrownBy(() -> zooKeeper.getData("/lock/missing", false, null));
		assertThat(this.counts.total()).isEqualTo(PIPELINED + 1);
		assertThat(this.counts.roundTrips()).as("an exception is an answer too").isEqualTo(PIPELINED + 1);
	}

	@Test
	void countsAsynchronousRequestsSentOneAfterTheOthersAnswerAsOneRoundTripEach() throws Exception {
		ZooKeeper zooKeeper = this.client.getZookeeperClient().getZooKeeper();
		CountDownLatch done = new CountDownLatch(1);
		AtomicInteger sent = new AtomicInteger();
		AsyncCallback.StatCallback next = new AsyncCallback.StatCallback() {

			@Override
			public void processResult(int rc, String path, Object ctx, Stat stat) {
				if (sent.incrementAndGet() < PIPELINED) {
					zooKeeper.exists("/lock", false, this, null);
				}
				else {
					done.countDown();
				}
			}

		};
		zooKeeper.exists("/lock", false, next, null);
		assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.counts.snapshot()).containsExactly(entry("exists", (long) PIPELINED));
		assertThat(this.counts.roundTrips()).isEqualTo(PIPELINED);
	}

}
