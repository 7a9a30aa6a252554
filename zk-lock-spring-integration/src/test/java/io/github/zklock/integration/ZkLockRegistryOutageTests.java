package io.github.zklock.integration;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link ZkLockRegistry} while ZooKeeper is down and after it is back: the scenario of Spring
 * Integration's {@code voidLockFailsWhenServerDown}, with one deliberate difference. Their
 * {@code tryLock} answers {@code false} while the server is down; here it throws
 * {@link LockException}, since "ZooKeeper unreachable" is not "held by another owner" (a leader
 * initiator or a lock advice treats both alike: no lock, try again). One server per test: the
 * test stops it.
 */
class ZkLockRegistryOutageTests {

	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void serverDownIsALockExceptionAndLocksWorkAgainOnceItIsBack() throws Exception {
		// A session that outlives the outage, and a client that gives up quickly while it lasts.
		Application application = Application.start(this.zooKeeper, (builder) -> builder.connectionTimeoutMs(1000)
			.sessionTimeoutMs(20_000)
			.retryPolicy(new RetryOneTime(100)), 100);
		TestingServer server = this.zooKeeper.getServer();
		// Grants are bound to the thread: one thread from the first lock to the last unlock.
		assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
			Lock held = application.locks().obtain("foo");
			held.lock();

			server.stop();
			Lock other = application.locks().obtain("bar");
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> other.tryLock(1, TimeUnit.SECONDS))
				.isNotInstanceOf(LockAcquisitionException.class)
				.withMessageContaining("ZooKeeper");

			server.restart();
			// Back once the client has reconnected. A reconnection that reaches the restarting server
			// before it runs is closed by it ("ZooKeeperServer not running", then a NullPointerException
			// of the server's for its missing database, seen in a fresh-clone build); the client may then
			// wait out its read timeout (two thirds of the session timeout) before it connects again.
			await().atMost(Duration.ofSeconds(30)).until(() -> application.client().getZookeeperClient().isConnected());
			assertThat(other.tryLock(10, TimeUnit.SECONDS)).as("another key once the server is back").isTrue();
			assertThat(held.tryLock(1, TimeUnit.SECONDS)).as("the lock held through the outage, re-entered")
				.isTrue();
			Lock third = application.locks().obtain("foobar");
			assertThat(third.tryLock(1, TimeUnit.SECONDS)).as("a new key").isTrue();

			held.unlock();
			held.unlock();
			other.unlock();
			third.unlock();
		});
		assertThat(new CuratorLockAdmin(application.registry()).heldLockCount()).isZero();
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(application.client().getChildren().forPath(Application.lockPath("foo")))
				.isEmpty());
		application.registry().close();
	}

}
