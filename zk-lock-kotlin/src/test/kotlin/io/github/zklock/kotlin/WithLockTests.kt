package io.github.zklock.kotlin

import io.github.zklock.LockAcquisitionException
import io.github.zklock.LockLostException
import io.github.zklock.LockMode
import io.github.zklock.LockRequest
import io.github.zklock.LockTemplate
import io.github.zklock.curator.CuratorLockAdmin
import io.github.zklock.curator.CuratorLockRegistry
import io.github.zklock.test.ZooKeeperExtension
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.withTimeout
import org.apache.curator.framework.CuratorFramework
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInfo
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * Tests for [withLock] on a real ZooKeeper server: two applications (two registries, each on a
 * client and session of its own) never overlap; busy fails; cancelling while waiting gives the
 * wait up and leaves no znode; cancelling while holding releases; a lost grant cancels the work,
 * coroutines the block launched in its scope included, and throws [LockLostException].
 */
class WithLockTests {

	companion object {
		@JvmField
		@RegisterExtension
		val zooKeeper = ZooKeeperExtension()

		private val BOUND: Duration = Duration.ofSeconds(20)
	}

	private lateinit var client: CuratorFramework

	private lateinit var registry: CuratorLockRegistry

	private lateinit var locks: LockTemplate

	private lateinit var otherRegistry: CuratorLockRegistry

	private lateinit var otherApplication: LockTemplate

	private lateinit var key: String

	@BeforeEach
	fun connect(testInfo: TestInfo) {
		client = zooKeeper.newClient()
		registry = CuratorLockRegistry(client, "/locks", 100)
		locks = LockTemplate(registry, Duration.ofSeconds(10))
		otherRegistry = CuratorLockRegistry(zooKeeper.newClient(), "/locks", 100)
		otherApplication = LockTemplate(otherRegistry, Duration.ofSeconds(10))
		key = "/" + testInfo.testMethod.orElseThrow().name
	}

	@AfterEach
	fun close() {
		registry.close()
		otherRegistry.close()
	}

	@Test
	fun twoApplicationsNeverOverlap(): Unit = runBlocking {
		val inside = AtomicInteger()
		val mostInside = AtomicInteger()
		val runs = AtomicInteger()
		withTimeout(BOUND.toMillis() * 3) {
			val calls = (1..40).map { i ->
				val template = if (i % 2 == 0) locks else otherApplication
				async(Dispatchers.Default) {
					template.withLock(LockRequest.of(key)) { handle ->
						assertThat(handle.isHeld).isTrue()
						mostInside.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
						delay(2)
						inside.decrementAndGet()
						runs.incrementAndGet()
					}
				}
			}
			calls.forEach { it.await() }
		}
		assertThat(runs).hasValue(40)
		assertThat(mostInside).hasValue(1)
		assertReleased()
	}

	@Test
	fun returnsWhatTheBlockReturnsWithTheGrantsFencingToken(): Unit = runBlocking {
		// tag::with-lock[]
		val first = locks.withLock(LockRequest.of(key)) { handle -> handle.fencingToken() }
		// end::with-lock[]
		val second = locks.withLock(LockRequest.of(key)) { it.fencingToken() }
		assertThat(second).isGreaterThan(first)
		assertReleased()
	}

	@Test
	fun busyLockFailsAfterTheWaitTime(): Unit = runBlocking {
		val held = otherApplication.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO)
		val ran = AtomicInteger()
		try {
			val failure = runCatching {
				locks.withLock(LockRequest.of(key).withWaitTime(Duration.ofMillis(50))) { ran.incrementAndGet() }
			}
			assertThat(failure.exceptionOrNull()).isInstanceOf(LockAcquisitionException::class.java)
		}
		finally {
			held.release()
		}
		assertThat(ran).hasValue(0)
		assertReleased()
	}

	@Test
	fun cancellingWhileWaitingGivesTheWaitUp(): Unit = runBlocking {
		val held = otherApplication.acquire(key, LockMode.EXCLUSIVE, Duration.ZERO)
		val ran = AtomicInteger()
		val waiting = launch(Dispatchers.Default) {
			locks.withLock(LockRequest.of(key).withWaitTime(Duration.ofSeconds(60))) { ran.incrementAndGet() }
		}
		await().atMost(BOUND).until { admin().describeWaitingLocks().isNotEmpty() }

		withTimeout(BOUND.toMillis()) { waiting.cancelAndJoinSafely() }
		await().atMost(BOUND).until { admin().describeWaitingLocks().isEmpty() }
		held.release()
		await().atMost(BOUND).until { ZooKeeperExtension.ephemeralZnodes(client, "/locks$key").isEmpty() }
		assertThat(ran).hasValue(0)
		assertReleased()
	}

	@Test
	fun cancellingWhileHoldingReleases(): Unit = runBlocking {
		val holding = launch(Dispatchers.Default, start = CoroutineStart.UNDISPATCHED) {
			locks.withLock(LockRequest.of(key)) { awaitCancellation() }
		}
		await().atMost(BOUND).until { admin().heldLockCount() == 1 }
		assertThat(otherApplication.tryAcquire(key, LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty()

		withTimeout(BOUND.toMillis()) { holding.cancelAndJoinSafely() }
		assertReleased()
	}

	@Test
	fun lostGrantCancelsTheBlockAndThrows(): Unit = runBlocking {
		registry.setInterruptOnLost(true)
		val cancelled = AtomicInteger()
		// Outside this test's scope: the failure it expects must not cancel the test's coroutine.
		val holding = CoroutineScope(Dispatchers.Default + SupervisorJob()).async {
			locks.withLock(LockRequest.of(key)) {
				try {
					awaitCancellation()
				}
				finally {
					cancelled.incrementAndGet()
				}
			}
		}
		await().atMost(BOUND).until { admin().heldLockCount() == 1 }
		zooKeeper.expireSession(client)

		val failure = runCatching { withTimeout(BOUND.toMillis()) { holding.await() } }.exceptionOrNull()
		assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("/locks$key")
		assertThat(cancelled).hasValue(1)
		await().atMost(BOUND).until { client.zookeeperClient.isConnected }
		assertReleased()
	}

	@Test
	fun lostGrantCancelsWhatTheBlockLaunchedAfterTheBlockReturned(): Unit = runBlocking {
		registry.setInterruptOnLost(true)
		val cancelled = AtomicInteger()
		val holding = CoroutineScope(Dispatchers.Default + SupervisorJob()).async {
			locks.withLock(LockRequest.of(key)) {
				// The block returns at once; the coroutine it launched in its scope is its work too.
				launch {
					try {
						awaitCancellation()
					}
					finally {
						cancelled.incrementAndGet()
					}
				}
				"returned"
			}
		}
		await().atMost(BOUND).until { admin().heldLockCount() == 1 }
		zooKeeper.expireSession(client)

		val failure = runCatching { withTimeout(BOUND.toMillis()) { holding.await() } }.exceptionOrNull()
		assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("/locks$key")
			.hasMessageContaining("its work was cancelled")
		assertThat(cancelled).hasValue(1)
		await().atMost(BOUND).until { client.zookeeperClient.isConnected }
		assertReleased()
	}

	private fun admin() = CuratorLockAdmin(registry)

	private fun assertReleased() {
		await().atMost(BOUND).until { admin().heldLockCount() == 0 }
		otherApplication.acquire(key, LockMode.EXCLUSIVE, Duration.ofSeconds(5)).release()
	}

}

/** Cancel and wait for the job, which ends with the cancellation (not an error of its own). */
internal suspend fun kotlinx.coroutines.Job.cancelAndJoinSafely() {
	cancel()
	join()
	assertThat(isCancelled).isTrue()
}
