package io.github.zklock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LockAssert} against a real ZooKeeper: it passes inside a locked callback of
 * every kind that fills {@link LockContext} (sync, nested, multi-lock, the synchronous part of an
 * asynchronous action), fails with {@link IllegalStateException} outside one (the self-invocation
 * case: the code runs with no grant) and after the release, and with {@link LockLostException}
 * once the grant's session has expired; the test helper switches the check off.
 */
class LockAssertTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	@BeforeEach
	void connect() throws Exception {
		this.client = zooKeeper.newClient();
		this.registry = new CuratorLockRegistry(this.client, "/locks", 100);
		this.template = new LockTemplate(this.registry, Duration.ofSeconds(10));
	}

	@AfterEach
	void close() {
		LockAssert.TestHelper.makeAllAssertsPass(false);
		this.registry.close();
	}

	@Test
	void failsOutsideAnyLock() {
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(LockAssert::assertHeld)
			.withMessageContaining("bypasses the proxy");
	}

	@Test
	void passesInsideEveryKindOfLockedCallback() {
		for (LockMode mode : LockMode.values()) {
			this.template.execute("/assert/" + mode, mode, null, (handle) -> {
				assertThatNoException().isThrownBy(LockAssert::assertHeld);
				return null;
			});
		}
		this.template.execute(LockRequest.of("/assert/non-reentrant").withReentrant(false), (handle) -> {
			assertThatNoException().isThrownBy(LockAssert::assertHeld);
			return null;
		});
		this.template.execute(LockRequest.permit("/assert/permit", 2), (handle) -> {
			assertThatNoException().isThrownBy(LockAssert::assertHeld);
			return null;
		});
		this.template.execute(LockRequest.of(List.of("/assert/a", "/assert/b")), (handle) -> {
			assertThatNoException().isThrownBy(LockAssert::assertHeld);
			return null;
		}).result();
	}

	@Test
	void failsAgainOnceTheCallbackHasReturned() {
		this.template.execute("/assert/released", (handle) -> {
			LockAssert.assertHeld();
			return null;
		});
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(LockAssert::assertHeld);
	}

	@Test
	void passesInTheSynchronousPartOfAnAsynchronousAction() throws Exception {
		CompletableFuture<Boolean> result = this.template.executeAsync("/assert/async", LockMode.EXCLUSIVE, null,
				(handle) -> {
					LockAssert.assertHeld();
					return CompletableFuture.completedFuture(true);
				});
		assertThat(result.get(10, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void failsWithLockLostOnceTheSessionHasExpired() throws Exception {
		CountDownLatch lost = new CountDownLatch(1);
		this.registry.addLockStateListener((event) -> {
			if (event.state() == LockState.LOST) {
				lost.countDown();
			}
		});
		this.template.execute("/assert/lost", (handle) -> {
			zooKeeper.expireSession(this.client);
			assertThat(lost.await(20, TimeUnit.SECONDS)).isTrue();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(LockAssert::assertHeld);
			return null;
		});
	}

	@Test
	void testHelperMakesEveryAssertionPassUntilReset() {
		LockAssert.TestHelper.makeAllAssertsPass(true);
		assertThatNoException().isThrownBy(LockAssert::assertHeld);
		LockAssert.TestHelper.makeAllAssertsPass(false);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(LockAssert::assertHeld);
	}

	@Test
	void aTaskOnAnotherThreadDoesNotInheritTheGrant() {
		this.template.execute("/assert/other-thread", (handle) -> {
			CompletableFuture<Void> elsewhere = CompletableFuture.runAsync(LockAssert::assertHeld);
			await().atMost(Duration.ofSeconds(10)).until(elsewhere::isDone);
			assertThat(elsewhere).isCompletedExceptionally();
			return null;
		});
	}

}
