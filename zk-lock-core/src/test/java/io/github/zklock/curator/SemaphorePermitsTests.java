package io.github.zklock.curator;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.PermitsMismatchException;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.CountingZooKeeper;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The number of permits stored with a semaphore's key ({@code SemaphorePermits}), on a real
 * ZooKeeper server with clients standing for applications: it lives in the data of the lock path
 * znode (a container) as {@code permits=N}; an application, or the same registry, naming another
 * number fails with {@link PermitsMismatchException} before acquiring anything; a znode found
 * without data (created by raw Curator or by hand) takes the number of the first zk-lock
 * participant; foreign data fails with a {@link LockException}; participants racing to store
 * different numbers agree on one; once the znode is gone a new number may be used. That ZooKeeper
 * reaps the znode, a container, is covered by {@link SemaphoreReapingTests}.
 */
class SemaphorePermitsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final Duration LONG = Duration.ofSeconds(10);

	private final CountingZooKeeper.Counts countsB = new CountingZooKeeper.Counts();

	private final List<CuratorLockRegistry> registries = new ArrayList<>();

	private CuratorFramework observer;

	private CuratorLockRegistry applicationA;

	private CuratorLockRegistry applicationB;

	private String key;

	private String lockPath;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.observer = zooKeeper.newClient();
		this.applicationA = newApplication();
		this.applicationB = registry(
				zooKeeper.newClient((builder) -> builder.zookeeperFactory(CountingZooKeeper.factory(this.countsB))));
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
		this.lockPath = ROOT + this.key;
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.registries.forEach(CuratorLockRegistry::close);
	}

	@Test
	void applicationNamingAnotherNumberFailsBeforeAcquiringAnything() throws Exception {
		LockHandle held = this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow();

		this.countsB.reset();
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> this.applicationB.tryAcquire(permits(3, LONG)))
			.satisfies((ex) -> {
				assertThat(ex.getPath()).isEqualTo(this.lockPath);
				assertThat(ex.getRequestedPermits()).isEqualTo(3);
				assertThat(ex.getStoredPermits()).isEqualTo(2);
			})
			.withMessageContaining("'" + this.lockPath + "' has 2 permits")
			.withMessageContaining("this request names 3");
		// Only the number was read: the create of the znode refused, then its data.
		assertThat(this.countsB.snapshot()).isEqualTo(Map.of("create", 1L, "getData", 1L));
		// Through the template as well, and again: a refused number is checked at every request.
		LockTemplate templateB = new LockTemplate(this.applicationB, LONG);
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> templateB.acquire(LockRequest.permit(this.key, 3).withWaitTime(Duration.ZERO)))
			.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(2));
		assertNothingAcquiredBy(this.applicationB);
		assertThat(leaseZnodes()).containsExactly(((CuratorLockHandle) held).nodePath());
		assertThat(internalLockZnodes()).isEmpty();
		assertThat(storedData()).isEqualTo("permits=2");

		// The agreeing number is granted to the same application.
		LockHandle agreeing = templateB.acquire(LockRequest.permit(this.key, 2).withWaitTime(Duration.ZERO));
		agreeing.release();
		held.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void sameRegistryNamingAnotherNumberForOneKeyFails() throws Exception {
		this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> this.applicationA.tryAcquire(permits(3, Duration.ZERO)))
			.satisfies((ex) -> {
				assertThat(ex.getRequestedPermits()).isEqualTo(3);
				assertThat(ex.getStoredPermits()).isEqualTo(2);
			});
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> this.applicationA.tryAcquire(permits(1, Duration.ZERO)));
		assertNothingAcquiredBy(this.applicationA);
		this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
		assertThat(storedData()).isEqualTo("permits=2");
	}

	@Test
	void numberIsStoredInTheDataOfTheLockPathZnode() throws Exception {
		LockHandle held = this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		Stat stat = new Stat();
		byte[] data = this.observer.getData().storingStatIn(stat).forPath(this.lockPath);
		assertThat(new String(data, StandardCharsets.UTF_8)).isEqualTo("permits=2");
		assertThat(ZKPaths.getPathAndNode(((CuratorLockHandle) held).nodePath()).getPath())
			.isEqualTo(ZKPaths.makePath(this.lockPath, Protocol.LEASES));
		// The other participants agree and leave the number as it is.
		this.applicationB.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
		assertThat(this.observer.checkExists().forPath(this.lockPath).getVersion()).isEqualTo(stat.getVersion());
		held.release();
	}

	@Test
	void znodeOfARawCuratorSemaphoreGetsTheNumberOfTheFirstParticipant() throws Exception {
		InterProcessSemaphoreV2 raw = new InterProcessSemaphoreV2(this.observer, this.lockPath, 2);
		Lease rawLease = raw.acquire(0, TimeUnit.MILLISECONDS);
		assertThat(rawLease).isNotNull();
		assertThat(storedData()).as("data of the znode made by Curator").isEmpty();

		LockHandle permit = this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow();
		assertThat(storedData()).isEqualTo("permits=2");
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> this.applicationB.tryAcquire(permits(3, Duration.ZERO)))
			.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(2));
		// Raw Curator and zk-lock hold the two permits together.
		assertThat(this.applicationB.tryAcquire(permits(2, Duration.ZERO))).isEmpty();
		raw.returnLease(rawLease);
		permit.release();
		assertThat(leaseZnodes()).isEmpty();
	}

	@Test
	void znodeCreatedWithoutDataGetsTheNumberOfTheFirstParticipant() throws Exception {
		this.observer.create().creatingParentsIfNeeded().forPath(this.lockPath, new byte[0]);

		this.applicationA.tryAcquire(permits(3, Duration.ZERO)).orElseThrow().release();
		assertThat(storedData()).isEqualTo("permits=3");
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> this.applicationB.tryAcquire(permits(2, Duration.ZERO)))
			.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(3));
	}

	@ParameterizedTest
	@ValueSource(strings = { "owner=billing", "permits=0", "permits=-2", "permits=two", "permits=", "2" })
	void foreignDataInTheZnodeIsALockException(String foreign) throws Exception {
		String path = this.lockPath + "-" + Integer.toHexString(foreign.hashCode());
		this.observer.create().creatingParentsIfNeeded().forPath(path, foreign.getBytes(StandardCharsets.UTF_8));
		String key = path.substring(ROOT.length());

		assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> this.applicationA.tryAcquire(
					new LockTarget(key, LockMode.EXCLUSIVE, false, 2, Duration.ZERO)))
			.isNotInstanceOf(PermitsMismatchException.class)
			.withMessageContaining("'" + path + "'")
			.withMessageContaining("not a number of permits ('" + foreign + "')");
		assertNothingAcquiredBy(this.applicationA);
		// Left as it was, and no recipe znode created below it.
		assertThat(new String(this.observer.getData().forPath(path), StandardCharsets.UTF_8)).isEqualTo(foreign);
		assertThat(this.observer.getChildren().forPath(path)).isEmpty();
	}

	@Test
	void participantsRacingOnANewKeyAgreeOnTheNumberOfOne() throws Exception {
		List<CuratorLockRegistry> racers = List.of(this.applicationA, this.applicationB, newApplication());
		CountDownLatch start = new CountDownLatch(1);
		List<CompletableFuture<Integer>> outcomes = new ArrayList<>();
		for (int i = 0; i < racers.size(); i++) {
			CuratorLockRegistry racer = racers.get(i);
			int permits = i + 1;
			outcomes.add(CompletableFuture.supplyAsync(() -> {
				try {
					assertThat(start.await(10, TimeUnit.SECONDS)).isTrue();
					racer.tryAcquire(permits(permits, Duration.ZERO)).orElseThrow().release();
					return permits;
				}
				catch (PermitsMismatchException ex) {
					return -ex.getStoredPermits();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
			}, (task) -> new Thread(task).start()));
		}
		start.countDown();
		List<Integer> results = new ArrayList<>();
		for (CompletableFuture<Integer> outcome : outcomes) {
			results.add(outcome.get(10, TimeUnit.SECONDS));
		}
		// One number was stored; its participant was granted, the others were told that number.
		int stored = Integer.parseInt(storedData().substring("permits=".length()));
		assertThat(results).containsOnlyOnce(stored).containsOnly(stored, -stored);
	}

	@Test
	void participantsOfOneNumberRacingOnANewKeyAreAllGranted() throws Exception {
		List<CuratorLockRegistry> racers = List.of(this.applicationA, this.applicationB, newApplication(),
				newApplication());
		CountDownLatch start = new CountDownLatch(1);
		List<CompletableFuture<LockHandle>> grants = new ArrayList<>();
		for (CuratorLockRegistry racer : racers) {
			grants.add(CompletableFuture.supplyAsync(() -> {
				try {
					assertThat(start.await(10, TimeUnit.SECONDS)).isTrue();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				return racer.tryAcquire(permits(4, LONG)).orElseThrow();
			}, (task) -> new Thread(task).start()));
		}
		start.countDown();
		for (CompletableFuture<LockHandle> grant : grants) {
			grant.get(10, TimeUnit.SECONDS).release();
		}
		assertThat(storedData()).isEqualTo("permits=4");
	}

	@Test
	void newNumberMayBeUsedOnceTheSemaphoreZnodeIsGone() throws Exception {
		this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
		// What ZooKeeper's container reaper does once the semaphore is unused (every minute by default).
		this.observer.delete().deletingChildrenIfNeeded().forPath(this.lockPath);

		LockHandle three = this.applicationB.tryAcquire(permits(3, Duration.ZERO)).orElseThrow();
		assertThat(storedData()).isEqualTo("permits=3");
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> newApplication().tryAcquire(permits(2, Duration.ZERO)))
			.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(3));
		three.release();
	}

	@Test
	void registryThatCheckedBeforeTheZnodeWentComparesWithTheNumberStoredAnew() throws Exception {
		this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
		this.observer.delete().deletingChildrenIfNeeded().forPath(this.lockPath);
		this.applicationB.tryAcquire(permits(3, Duration.ZERO)).orElseThrow().release();
		assertThat(storedData()).isEqualTo("permits=3");

		// A checked its number before the znode went: ZooKeeper tells it (asynchronously) of the
		// deletion, and it checks again.
		await().atMost(LONG).untilAsserted(() -> assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> this.applicationA.tryAcquire(permits(2, Duration.ZERO)).ifPresent(LockHandle::release))
			.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(3)));
	}

	@Test
	void registryThatCheckedBeforeTheZnodeWentStoresItsNumberAgain() throws Exception {
		this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
		this.observer.delete().deletingChildrenIfNeeded().forPath(this.lockPath);
		await().atMost(LONG).until(() -> {
			this.applicationA.tryAcquire(permits(2, Duration.ZERO)).orElseThrow().release();
			return "permits=2".equals(storedDataOrNull());
		});
		assertThatExceptionOfType(PermitsMismatchException.class)
			.isThrownBy(() -> newApplication().tryAcquire(permits(5, Duration.ZERO)))
			.satisfies((ex) -> assertThat(ex.getStoredPermits()).isEqualTo(2));
	}

	private void assertNothingAcquiredBy(CuratorLockRegistry registry) {
		assertThat(admin(registry).heldLockCount()).isZero();
		assertThat(admin(registry).describeWaitingLocks()).isEmpty();
	}

	private LockTarget permits(int permits, Duration waitTime) {
		return new LockTarget(this.key, LockMode.EXCLUSIVE, false, permits, waitTime);
	}

	private CuratorLockRegistry newApplication() throws InterruptedException {
		return registry(zooKeeper.newClient());
	}

	private CuratorLockRegistry registry(CuratorFramework client) {
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 100);
		this.registries.add(registry);
		return registry;
	}

	private String storedData() throws Exception {
		return new String(this.observer.getData().forPath(this.lockPath), StandardCharsets.UTF_8);
	}

	private String storedDataOrNull() throws Exception {
		try {
			return storedData();
		}
		catch (KeeperException.NoNodeException ex) {
			return null;
		}
	}

	private List<String> leaseZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ZKPaths.makePath(this.lockPath, Protocol.LEASES));
	}

	private List<String> internalLockZnodes() throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, ZKPaths.makePath(this.lockPath, Protocol.LOCKS));
	}

}
