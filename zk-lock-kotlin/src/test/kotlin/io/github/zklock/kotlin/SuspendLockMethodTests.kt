package io.github.zklock.kotlin

import io.github.zklock.LockMode
import io.github.zklock.LockTemplate
import io.github.zklock.OnBusy
import io.github.zklock.annotation.DistributedLock
import io.github.zklock.annotation.DistributedSemaphore
import io.github.zklock.annotation.EnableDistributedLocks
import io.github.zklock.curator.CuratorLockAdmin
import io.github.zklock.curator.CuratorLockRegistry
import io.github.zklock.test.ZooKeeperExtension
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Supplier
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.apache.curator.framework.CuratorFramework
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * `@DistributedLock` and `@DistributedSemaphore` on Kotlin `suspend` functions and on functions
 * returning a `Flow`, in plain Spring applications (each a context with its own Curator client,
 * so its own ZooKeeper session) on a real ZooKeeper server: the lock is held until the function
 * returns (for a `Flow`, while it is collected), two applications never overlap, cancelling the
 * calling coroutine gives up the wait or releases the grant, `onBusy = SKIP` returns `null`.
 */
class SuspendLockMethodTests {

	companion object {
		@JvmField
		@RegisterExtension
		val zooKeeper = ZooKeeperExtension()

		private val BOUND: Duration = Duration.ofSeconds(20)

		private lateinit var first: AnnotationConfigApplicationContext

		private lateinit var second: AnnotationConfigApplicationContext

		@BeforeAll
		@JvmStatic
		fun start() {
			first = application()
			second = application()
		}

		@AfterAll
		@JvmStatic
		fun stop() {
			if (::first.isInitialized) {
				first.close()
			}
			if (::second.isInitialized) {
				second.close()
			}
		}

		private fun application(): AnnotationConfigApplicationContext {
			val client = zooKeeper.newClient()
			val context = AnnotationConfigApplicationContext()
			context.registerBean(CuratorFramework::class.java, Supplier { client })
			context.register(Infrastructure::class.java, StockService::class.java)
			context.refresh()
			return context
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	open class Infrastructure {

		@Bean(destroyMethod = "close")
		open fun lockRegistry(client: CuratorFramework) = CuratorLockRegistry(client, "/locks", 100)

		@Bean
		open fun lockTemplate(registry: CuratorLockRegistry) = LockTemplate(registry, Duration.ofSeconds(10))

	}

	/** Counters shared by both applications' services, so that an overlap across them shows. */
	object Counters {
		/** The stock of each SKU, as a shared database would keep it. */
		val stock = ConcurrentHashMap<String, Int>()
		val inside = AtomicInteger()
		val mostInside = AtomicInteger()
		val ran = AtomicInteger()
	}

	open class StockService(private val locks: LockTemplate) {

		private val stock = Counters.stock

		// Open, as every member a test calls: the proxy (a subclass) forwards only open members to the target.
		open val entered = CompletableDeferred<Unit>()

		// tag::suspend[]
		@DistributedLock(path = ["/kotlin/stock/#{#sku}"], waitTime = "5s")
		open suspend fun buy(sku: String): Int {
			val left = stock.getValue(sku) // read
			delay(5) // any suspending call: the lock stays held, no thread waits meanwhile
			stock[sku] = left - 1 // write
			return left - 1
		}
		// end::suspend[]

		@DistributedLock(path = ["/kotlin/hold"])
		open suspend fun hold(): String {
			entered.complete(Unit)
			awaitCancellation()
		}

		@DistributedLock(path = ["/kotlin/busy"], waitTime = "0", onBusy = OnBusy.SKIP)
		open suspend fun skipWhenBusy(): String? {
			Counters.ran.incrementAndGet()
			return "ran"
		}

		@DistributedSemaphore(path = "/kotlin/permits", permits = 2)
		open suspend fun permit(): Int {
			Counters.mostInside.accumulateAndGet(Counters.inside.incrementAndGet(), ::maxOf)
			delay(20)
			Counters.inside.decrementAndGet()
			return Counters.ran.incrementAndGet()
		}

		/** Emits whether another application could take the lock at the time of each element. */
		@DistributedLock(path = ["/kotlin/flow"])
		open fun otherCouldLock(other: LockTemplate): Flow<Boolean> = flow {
			repeat(3) {
				val handle = other.tryAcquire("/kotlin/flow", LockMode.EXCLUSIVE, Duration.ZERO)
				handle.ifPresent { it.release() }
				emit(handle.isPresent)
			}
		}

		/** A suspend function returning a Flow: the lock is held while the flow is collected. */
		@DistributedLock(path = ["/kotlin/flow"])
		open suspend fun otherCouldLockLater(other: LockTemplate): Flow<Boolean> {
			delay(1)
			return otherCouldLock(other)
		}

		open fun template() = locks

	}

	private fun service(context: AnnotationConfigApplicationContext) = context.getBean(StockService::class.java)

	private fun admin(context: AnnotationConfigApplicationContext) =
		CuratorLockAdmin(context.getBean(CuratorLockRegistry::class.java))

	private fun resetCounters() {
		Counters.inside.set(0)
		Counters.mostInside.set(0)
		Counters.ran.set(0)
	}

	@Test
	fun suspendMethodsOfTwoApplicationsNeverOverlap(): Unit = runBlocking {
		Counters.stock["apple"] = 30
		val left = withTimeout(BOUND.toMillis() * 3) {
			(1..30).map { i ->
				val service = service(if (i % 2 == 0) first else second)
				async(Dispatchers.Default) { service.buy("apple") }
			}.map { it.await() }
		}
		// Each read-modify-write saw the previous one's write: no update lost, none overlapped.
		assertThat(left).containsExactlyInAnyOrderElementsOf(0..29)
		assertThat(Counters.stock["apple"]).isZero()
		assertThat(admin(first).heldLockCount()).isZero()
		assertThat(admin(second).heldLockCount()).isZero()
	}

	@Test
	fun lockIsHeldUntilTheSuspendFunctionEndsAndCancellingReleasesIt(): Unit = runBlocking {
		val service = service(first)
		val other = service(second).template()
		val call = launch(Dispatchers.Default) { service.hold() }
		withTimeout(BOUND.toMillis()) { service.entered.await() }
		// The function has suspended (awaitCancellation): the lock is still held.
		assertThat(other.tryAcquire("/kotlin/hold", LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty()
		assertThat(admin(first).heldLockCount()).isEqualTo(1)

		withTimeout(BOUND.toMillis()) { call.cancelAndJoinSafely() }
		await().atMost(BOUND).until { admin(first).heldLockCount() == 0 }
		other.acquire("/kotlin/hold", LockMode.EXCLUSIVE, Duration.ofSeconds(5)).release()
	}

	@Test
	fun cancellingWhileWaitingGivesTheWaitUp(): Unit = runBlocking {
		Counters.stock["pear"] = 1
		val held = service(second).template().acquire("/kotlin/stock/pear", LockMode.EXCLUSIVE, Duration.ZERO)
		try {
			val call = launch(Dispatchers.Default) { service(first).buy("pear") }
			await().atMost(BOUND).until { admin(first).describeWaitingLocks().isNotEmpty() }
			withTimeout(BOUND.toMillis()) { call.cancelAndJoinSafely() }
			await().atMost(BOUND).until { admin(first).describeWaitingLocks().isEmpty() }
		}
		finally {
			held.release()
		}
		val client = first.getBean(CuratorFramework::class.java)
		await().atMost(BOUND).until { ZooKeeperExtension.ephemeralZnodes(client, "/locks/kotlin/stock/pear").isEmpty() }
		assertThat(Counters.stock["pear"]).isEqualTo(1)
	}

	@Test
	fun busySuspendFunctionIsSkippedWithNull(): Unit = runBlocking {
		resetCounters()
		val held = service(second).template().acquire("/kotlin/busy", LockMode.EXCLUSIVE, Duration.ZERO)
		try {
			assertThat(service(first).skipWhenBusy()).isNull()
			assertThat(Counters.ran).hasValue(0)
		}
		finally {
			held.release()
		}
		assertThat(service(first).skipWhenBusy()).isEqualTo("ran")
	}

	@Test
	fun semaphoreLetsTwoSuspendFunctionsInAtOnce(): Unit = runBlocking {
		resetCounters()
		withTimeout(BOUND.toMillis() * 3) {
			(1..12).map { i ->
				val service = service(if (i % 2 == 0) first else second)
				async(Dispatchers.Default) { service.permit() }
			}.forEach { it.await() }
		}
		assertThat(Counters.ran).hasValue(12)
		assertThat(Counters.mostInside.get()).isBetween(1, 2)
	}

	@Test
	fun flowIsLockedWhileItIsCollected(): Unit = runBlocking {
		val other = service(second).template()
		val seen = withTimeout(BOUND.toMillis()) { service(first).otherCouldLock(other).toList() }
		assertThat(seen).containsExactly(false, false, false)
		assertThat(admin(first).heldLockCount()).isZero()

		val later = withTimeout(BOUND.toMillis()) { service(first).otherCouldLockLater(other).toList() }
		assertThat(later).containsExactly(false, false, false)
		await().atMost(BOUND).until { admin(first).heldLockCount() == 0 }

		// A collection that stops early (cancelling the rest of the flow) releases too.
		val one = withTimeout(BOUND.toMillis()) { service(first).otherCouldLock(other).take(1).toList() }
		assertThat(one).containsExactly(false)
		await().atMost(BOUND).until { admin(first).heldLockCount() == 0 }
		other.acquire("/kotlin/flow", LockMode.EXCLUSIVE, Duration.ofSeconds(5)).release()
	}

}
