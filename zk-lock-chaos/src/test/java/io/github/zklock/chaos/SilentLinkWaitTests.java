package io.github.zklock.chaos;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A wait that ends while ZooKeeper is silent but the client still counts itself connected: the
 * link to the server is frozen by a {@link TcpProxy} (a server that stopped or a network that
 * drops packets looks the same until the client's read timeout, two thirds of the session timeout,
 * passes). Such a wait is a {@link LockException} that names ZooKeeper, never "busy": nothing
 * showed the lock held. A wait queued behind a holder of this application is busy, whatever the
 * link does, since the lock was seen held. Once the link heals, nothing sent during the freeze is
 * left behind and the key is granted again.
 */
class SilentLinkWaitTests {

	private static final String ROOT = "/silent";

	/** Its read timeout (two thirds) is far longer than any wait here: the client stays "connected". */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration WAIT = Duration.ofMillis(500);

	private static final Duration BOUND = Duration.ofSeconds(30);

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private TcpProxy proxy;

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	@BeforeEach
	void start() throws Exception {
		this.proxy = TcpProxy.start(zooKeeper.getPort());
		this.client = zooKeeper.newClient(Chaos.clientSettings(SESSION_TIMEOUT, Chaos.ClientSocket.NIO)
			.andThen((builder) -> builder.connectString(this.proxy.connectString())));
		this.registry = new CuratorLockRegistry(this.client, ROOT, 100);
	}

	@AfterEach
	void stop() {
		Chaos.closeQuietly(this.registry);
		// The client before its proxy: through a closed proxy its session's close cannot reach the
		// server, and the client retries until it gives up (about 1.5 s).
		Chaos.closeQuietly(this.client);
		Chaos.closeQuietly(this.proxy);
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void waitOnASilentLinkIsALockExceptionNotBusy(Kind kind) throws Exception {
		String key = "/never-seen-" + kind;
		this.proxy.freeze();
		long start = System.nanoTime();
		assertThatExceptionOfType(LockException.class).isThrownBy(() -> this.registry.tryAcquire(kind.target(key)))
			.isNotInstanceOf(LockAcquisitionException.class)
			.withMessageContaining("ZooKeeper is unreachable")
			.withMessageContaining("connected, but no answer within the wait time");
		long tookMs = Chaos.millisSince(start);
		assertThat(this.client.getZookeeperClient().isConnected()).as("still counted connected").isTrue();
		// The asynchronous request ends the same way.
		CompletableFuture<Optional<RegistryGrant>> async = this.registry.submit(kind.target(key));
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> async.get(BOUND.toSeconds(), TimeUnit.SECONDS))
			.havingCause()
			.isInstanceOf(LockException.class)
			.isNotInstanceOf(LockAcquisitionException.class)
			.withMessageContaining("connected, but no answer within the wait time");
		Chaos.report("silent_link kind=%s wait_ms=%d sync_answer_ms=%d", kind, WAIT.toMillis(), tookMs);
		assertThat(tookMs).as("answered within its wait time and a margin").isLessThan(WAIT.toMillis() + 1_000);

		this.proxy.heal();
		assertNothingLeftAndGrantedAgain(kind, key);
	}

	@Test
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void waitBehindAHolderOfThisApplicationIsBusyWhenTheLinkFreezes() throws Exception {
		String key = "/held-here";
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(1);
		Thread holder = new Thread(() -> {
			// On a live link: waits as long as the machine needs (a cold key's round trips, the first
			// requests of a test JVM), not the silent-link wait under test.
			LockHandle handle = this.registry.tryAcquire(Kind.EXCLUSIVE.target(key, BOUND)).orElseThrow();
			held.countDown();
			try {
				done.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			handle.release();
		}, "holder");
		holder.start();
		assertThat(held.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
		this.proxy.freeze();
		// Queued behind a turn held here: the lock was seen held, so the wait is busy.
		assertThat(this.registry.tryAcquire(Kind.EXCLUSIVE.target(key))).isEmpty();
		this.proxy.heal();
		done.countDown();
		holder.join(BOUND.toMillis());
		assertThat(holder.isAlive()).isFalse();
		assertNothingLeftAndGrantedAgain(Kind.EXCLUSIVE, key);
	}

	@Test
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void busyWaitWhoseLinkFreezesAnswersWithinTwiceItsWaitTime() throws Exception {
		String key = "/held-elsewhere";
		Duration wait = Duration.ofSeconds(2);
		CuratorFramework otherClient = zooKeeper.newClient();
		try (CuratorLockRegistry other = new CuratorLockRegistry(otherClient, ROOT, 10)) {
			LockHandle held = other.tryAcquire(Kind.EXCLUSIVE.target(key, BOUND)).orElseThrow();
			long start = System.nanoTime();
			CompletableFuture<Optional<RegistryGrant>> attempt = CompletableFuture.supplyAsync(
					() -> this.registry.tryAcquire(new LockTarget(key, LockMode.EXCLUSIVE, true, 0, wait)));
			// Its znode is queued behind the holder's; its listing (which shows the holder) answers
			// within the second before the link freezes.
			await().atMost(BOUND).until(() -> otherClient.getChildren().forPath(ROOT + key).size() == 2);
			Thread.sleep(1_000);
			this.proxy.freeze();
			// Busy (the lock was seen held); the delete of its znode goes unanswered into the frozen
			// link, and is waited for at most the wait time again, not the connection timeout (30 s).
			assertThat(attempt.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEmpty();
			long tookMs = Chaos.millisSince(start);
			Chaos.report("silent_link_busy wait_ms=%d answer_ms=%d", wait.toMillis(), tookMs);
			assertThat(tookMs).isLessThan(2 * wait.toMillis() + 1_000);
			assertThat(this.client.getZookeeperClient().isConnected()).as("still counted connected").isTrue();
			this.proxy.heal();
			held.release();
		}
		assertNothingLeftAndGrantedAgain(Kind.EXCLUSIVE, key);
	}

	private void assertNothingLeftAndGrantedAgain(Kind kind, String key) throws Exception {
		CuratorFramework observer = zooKeeper.newClient();
		// What was sent during the freeze reached the server after it and is deleted on its answer.
		await().atMost(BOUND).until(() -> ZooKeeperExtension.ephemeralZnodes(observer, ROOT).isEmpty());
		this.registry.tryAcquire(kind.target(key, BOUND)).orElseThrow().release();
		assertThat(new CuratorLockAdmin(this.registry).heldLockCount()).isZero();
		assertThat(new CuratorLockAdmin(this.registry).describeWaitingLocks()).isEmpty();
	}

	/** Each protocol a request can queue in. */
	enum Kind {

		EXCLUSIVE(LockMode.EXCLUSIVE, true, 0), NON_REENTRANT(LockMode.EXCLUSIVE, false, 0),
		READ(LockMode.READ, true, 0), WRITE(LockMode.WRITE, true, 0), PERMIT(LockMode.EXCLUSIVE, false, 2);

		final LockMode mode;

		final boolean reentrant;

		final int permits;

		Kind(LockMode mode, boolean reentrant, int permits) {
			this.mode = mode;
			this.reentrant = reentrant;
			this.permits = permits;
		}

		LockTarget target(String key) {
			return target(key, WAIT);
		}

		LockTarget target(String key, Duration waitTime) {
			return new LockTarget(key, this.mode, this.reentrant, this.permits, waitTime);
		}

	}

}
