package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connection loss in the middle of asynchronous grants made without a thread: the connection of
 * the application is cut (through a {@link TcpProxy}) right after each request is sent, so the
 * cut falls on its create, its listing, its grant or its release's delete. Whatever it hits, the
 * session survives (the cut is far shorter than its timeout), and once the requests are done no
 * znode of that session is left: a create cut before its answer is found again by its protected
 * name (Curator's recovery) rather than left behind, and a cut delete is finished by Curator's
 * guaranteed delete after the reconnection.
 */
class AsyncConnectionLossTests {

	private static final String ROOT = "/async-cut";

	/** Longer than any cut here, so that the session survives them all. */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(20);

	private static final Duration BOUND = Duration.ofSeconds(60);

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private TcpProxy proxy;

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	@BeforeEach
	void start() throws Exception {
		this.proxy = TcpProxy.start(zooKeeper.getPort());
		this.client = zooKeeper.newClient((builder) -> builder.connectString(this.proxy.connectString())
			.sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
			.connectionTimeoutMs(5_000)
			.retryPolicy(new ExponentialBackoffRetry(100, 10, 1_000)));
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

	@Test
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void cutsDuringCreatesListingsAndDeletesLeaveNoZnodeOfTheSession() throws Exception {
		long session = this.client.getZookeeperClient().getZooKeeper().getSessionId();
		LockTemplate template = new LockTemplate(this.registry, BOUND);
		AtomicInteger granted = new AtomicInteger();
		AtomicInteger failed = new AtomicInteger();
		List<CompletableFuture<Void>> cycles = new ArrayList<>();
		for (int round = 0; round < 12; round++) {
			// A key of its own per round, so that each round's request creates a znode.
			CompletableFuture<Void> cycle = template.async()
				.acquire(LockRequest.of("/key-" + round))
				.thenAccept((AsyncLockHandle handle) -> {
					granted.incrementAndGet();
					handle.release();
				})
				.exceptionally((ex) -> {
					// A request may fail when the retries run out: never as busy, never with a znode left.
					assertThat(ex).hasRootCauseInstanceOf(LockException.class);
					failed.incrementAndGet();
					return null;
				});
			cycles.add(cycle);
			// Vary where the cut falls: at once, or after a round trip or two.
			Thread.sleep(round % 4);
			this.proxy.drop(Duration.ofMillis(100 + 20 * (round % 5)));
			cycle.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}
		CompletableFuture.allOf(cycles.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		Chaos.report("async_connection_cuts rounds=%d granted=%d failed=%d", cycles.size(), granted.get(), failed.get());

		assertThat(granted.get() + failed.get()).isEqualTo(cycles.size());
		assertThat(granted).as("grants despite the cuts").hasPositiveValue();
		await().atMost(BOUND).until(() -> this.client.getZookeeperClient().isConnected());
		// The same session all along: a znode left behind would still be there.
		assertThat(this.client.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
		CuratorFramework observer = zooKeeper.newClient();
		await().atMost(BOUND).until(() -> ZooKeeperExtension.ephemeralZnodes(observer, ROOT).isEmpty());
		assertThat(new CuratorLockAdmin(this.registry).heldLockCount()).isZero();
		assertThat(new CuratorLockAdmin(this.registry).describeWaitingLocks()).isEmpty();
	}

}
