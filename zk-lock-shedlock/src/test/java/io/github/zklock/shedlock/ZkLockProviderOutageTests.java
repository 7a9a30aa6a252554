package io.github.zklock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
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
 * {@link ZkLockProvider} while ZooKeeper is down and after it is back: an attempt throws
 * {@link LockException} instead of answering "busy" with an empty result, so that ShedLock's
 * executor fails the run (the job does not run, and the failure is seen) rather than skipping it
 * as if another instance held the lock. Once the server is back, locks work again. One server per
 * test: the test stops it.
 */
class ZkLockProviderOutageTests {

	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void serverDownIsALockExceptionNotBusyAndLocksWorkAgainOnceItIsBack() throws Exception {
		// A session that outlives the outage, and a client that gives up quickly while it lasts.
		Application application = Application.start(this.zooKeeper, (builder) -> builder.connectionTimeoutMs(1000)
			.sessionTimeoutMs(20_000)
			.retryPolicy(new RetryOneTime(100)));
		TestingServer server = this.zooKeeper.getServer();
		LockConfiguration config = new LockConfiguration(Instant.now(), "report", Duration.ofMinutes(5),
				Duration.ZERO);
		try {
			assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
				server.stop();
				AtomicBoolean ran = new AtomicBoolean();
				DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(application.provider());
				// ShedLock's executor passes the provider's exception on: the run fails, it is not skipped.
				assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> executor.executeWithLock((Runnable) () -> ran.set(true), config))
					.isNotInstanceOf(LockAcquisitionException.class)
					.withMessageContaining("ZooKeeper");
				assertThat(ran).as("the job ran without the lock").isFalse();

				server.restart();
				SimpleLock lock = await().atMost(Duration.ofSeconds(20))
					.ignoreExceptionsInstanceOf(LockException.class)
					.until(() -> application.provider().lock(config).orElse(null), (granted) -> granted != null);
				lock.unlock();
				executor.executeWithLock((Runnable) () -> ran.set(true), config);
				assertThat(ran).isTrue();
			});
			assertThat(new CuratorLockAdmin(application.registry()).heldLockCount()).isZero();
		}
		finally {
			application.registry().close();
		}
	}

}
