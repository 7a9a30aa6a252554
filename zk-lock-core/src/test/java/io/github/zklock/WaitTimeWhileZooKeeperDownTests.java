package io.github.zklock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A synchronous request's wait time bounds the call while ZooKeeper is down, on a client with the
 * starter's defaults (a 15 s connection timeout, a 60 s session, three retries from 1 s): the
 * template's {@code tryAcquire} in every mode, and {@code java.util.concurrent}'s {@code tryLock},
 * on keys never used before and on keys used just before the outage, each answer a {@link LockException}
 * naming ZooKeeper (never "busy") once the wait has passed. Once the server is back, nothing they
 * sent is left behind and each key is granted again.
 */
class WaitTimeWhileZooKeeperDownTests {

	private static final Duration WAIT = Duration.ofSeconds(1);

	/** One server per test: the test stops it. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	@BeforeEach
	void start() throws Exception {
		this.client = this.zooKeeper.newClient((builder) -> builder.sessionTimeoutMs(60_000)
			.connectionTimeoutMs(15_000)
			.retryPolicy(new ExponentialBackoffRetry(1000, 3)));
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
		this.template = new LockTemplate(this.registry, Duration.ofSeconds(30));
	}

	@AfterEach
	void stop() {
		this.registry.close();
	}

	@Test
	void synchronousRequestAnswersWithinItsWaitTimeAndLeavesNothingOnceTheServerIsBack() throws Exception {
		Map<String, Callable<Boolean>> requests = new LinkedHashMap<>();
		for (String seen : List.of("cached", "new")) {
			requests.put(seen + " EXCLUSIVE", () -> granted(this.template.tryAcquire("/" + seen + "/exclusive",
					LockMode.EXCLUSIVE, WAIT)));
			requests.put(seen + " READ", () -> granted(this.template.tryAcquire("/" + seen + "/read", LockMode.READ, WAIT)));
			requests.put(seen + " WRITE", () -> granted(this.template.tryAcquire("/" + seen + "/write", LockMode.WRITE, WAIT)));
			requests.put(seen + " permit", () -> granted(this.template
				.tryAcquire(LockRequest.permit("/" + seen + "/permit", 2).withWaitTime(WAIT))));
			requests.put(seen + " non-reentrant", () -> granted(this.template
				.tryAcquire(LockRequest.of("/" + seen + "/nonreentrant").withReentrant(false).withWaitTime(WAIT))));
			requests.put(seen + " Lock.tryLock", () -> tryLock("/" + seen + "/juc"));
		}
		// The cached keys are used once while the server is up.
		requests.forEach((name, request) -> {
			if (name.startsWith("cached")) {
				assertThat(call(request)).as(name + " before the outage").isEqualTo(Boolean.TRUE);
			}
		});
		TestingServer server = this.zooKeeper.getServer();
		server.stop();
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.client.getZookeeperClient().isConnected());

		List<String> answers = new ArrayList<>();
		requests.forEach((name, request) -> {
			long start = System.nanoTime();
			Object outcome = call(request);
			long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			System.out.println("WAIT_WHILE_DOWN request='" + name + "' wait_ms=" + WAIT.toMillis() + " answered_after_ms="
					+ elapsedMs + " outcome=" + outcome.getClass().getSimpleName());
			answers.add(name + ": " + elapsedMs + " ms");
			assertThat(outcome).as(name).isInstanceOf(LockException.class).isNotInstanceOf(LockAcquisitionException.class);
			assertThat(((Throwable) outcome).getMessage()).as(name).contains("ZooKeeper");
			assertThat(Duration.ofMillis(elapsedMs)).as(name).isLessThan(WAIT.plusMillis(500));
		});

		server.restart();
		await().atMost(Duration.ofSeconds(30)).until(() -> this.client.getZookeeperClient().isConnected());
		// What the abandoned requests sent is deleted once answered; then every key is granted again.
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, "/locks")).isEmpty());
		requests.forEach((name, request) -> assertThat(call(request)).as(name + " after the restart").isEqualTo(Boolean.TRUE));
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.client, "/locks")).isEmpty();
		assertThat(answers).hasSize(requests.size());
	}

	private boolean tryLock(String key) throws InterruptedException {
		java.util.concurrent.locks.Lock lock = this.template.lock(key);
		if (!lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
			return false;
		}
		lock.unlock();
		return true;
	}

	private static boolean granted(java.util.Optional<LockHandle> handle) {
		handle.ifPresent(LockHandle::release);
		return handle.isPresent();
	}

	/** The request's answer, or what it threw. */
	private static Object call(Callable<Boolean> request) {
		try {
			return request.call();
		}
		catch (Exception ex) {
			return ex;
		}
	}

}
