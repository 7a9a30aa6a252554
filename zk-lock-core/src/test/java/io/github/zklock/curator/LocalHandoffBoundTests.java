package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A chain of local hand-offs is bounded while another application waits for the key: application
 * A keeps a chain going on {@value #THREADS} threads, application B asks for the key just after
 * the chain's znode was granted. With a finite {@code maxTime} (and {@code maxGrants} out of
 * reach) B is granted within {@code maxTime} and a hand-over; with a small {@code maxGrants} (and
 * {@code maxTime} out of reach) B is granted after {@code maxGrants} grants of the chain; with both
 * out of reach B is still waiting after two seconds, while the chain goes on: the bound is what lets
 * B in. Nobody is ever inside the key together with another holder. Each trial prints a
 * {@code LOCAL-HANDOFF bound} line with B's wait and the chain's grants.
 *
 * <p>The hand-over slack of the time bound is {@value #HAND_OVER_SLACK_MS} ms: the delete of A's
 * znode, the watch event to B and B's getChildren, on a machine whose two cores run other builds.
 */
class LocalHandoffBoundTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String ROOT = "/locks";

	private static final int THREADS = 4;

	private static final Duration MAX_TIME = Duration.ofMillis(300);

	private static final int MAX_GRANTS = 20;

	private static final long HAND_OVER_SLACK_MS = 1000;

	/** Out of reach of a test: an hour, or more grants than a test makes. */
	private static final Duration NEVER = Duration.ofHours(1);

	private static final int COUNTLESS = 1_000_000;

	private static final Duration LONG = Duration.ofSeconds(10);

	private final List<LockThread> threads = new ArrayList<>();

	private CuratorFramework observer;

	private CuratorLockRegistry processA;

	private CuratorLockRegistry processB;

	private String key;

	@BeforeEach
	void connect(TestInfo testInfo) throws Exception {
		this.processA = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.processB = new CuratorLockRegistry(zooKeeper.newClient(), ROOT, 100);
		this.observer = zooKeeper.newClient();
		this.key = "/" + testInfo.getTestMethod().orElseThrow().getName();
	}

	@AfterEach
	void close() throws InterruptedException {
		for (LockThread thread : this.threads) {
			thread.close();
		}
		this.processA.close();
		this.processB.close();
	}

	@Test
	void remoteWaiterIsGrantedWithinMaxTimeAndAHandOver() throws Exception {
		this.processA.setLocalHandoff(new LocalHandoff(true, COUNTLESS, MAX_TIME));
		for (int trial = 0; trial < 3; trial++) {
			Trial result = remoteWaiterDuringAChain(this.key + "-" + trial, LONG, Duration.ofMillis(1));
			result.report("max_time_ms=" + MAX_TIME.toMillis());
			assertThat(result.waitedMs()).as("trial %d: B's wait in ms", trial)
				.isLessThanOrEqualTo(MAX_TIME.toMillis() + HAND_OVER_SLACK_MS);
			assertThat(result.chainGrantsWhileWaiting()).as("trial %d: A's grants while B waited", trial)
				.isGreaterThan(1);
			assertThat(result.overlaps()).as("trial %d: holders inside at once", trial).isZero();
		}
	}

	@Test
	void remoteWaiterIsGrantedAfterMaxGrantsGrantsOfTheChain() throws Exception {
		this.processA.setLocalHandoff(new LocalHandoff(true, MAX_GRANTS, NEVER));
		for (int trial = 0; trial < 2; trial++) {
			// Held longer, so that the chain surely knows of B before its grants run out.
			Trial result = remoteWaiterDuringAChain(this.key + "-" + trial, LONG, Duration.ofMillis(5));
			result.report("max_grants=" + MAX_GRANTS);
			assertThat(result.waitedMs()).as("trial %d: B granted", trial).isNotNegative();
			// The znode's first grant came before B asked; the chain ends with its MAX_GRANTS-th.
			assertThat(result.chainLength()).as("trial %d: grants on the chain's znode", trial).isEqualTo(MAX_GRANTS);
			assertThat(result.chainGrantsWhileWaiting()).as("trial %d: A's grants while B waited", trial)
				.isEqualTo(MAX_GRANTS - 1);
			assertThat(result.overlaps()).as("trial %d: holders inside at once", trial).isZero();
		}
	}

	@Test
	void withoutABoundInReachTheRemoteWaiterIsStillWaitingWhileTheChainGoesOn() throws Exception {
		this.processA.setLocalHandoff(new LocalHandoff(true, COUNTLESS, NEVER));
		Duration bound = Duration.ofSeconds(2);
		Trial result = remoteWaiterDuringAChain(this.key, bound, Duration.ofMillis(1));
		result.report("control max_grants=" + COUNTLESS + " max_time=" + NEVER);
		assertThat(result.waitedMs()).as("B not granted within %s", bound).isNegative();
		// The chain went on all along on its first znode.
		assertThat(result.chainGrantsWhileWaiting()).isGreaterThan(MAX_GRANTS);
		assertThat(result.chainLength()).isEqualTo(result.chainGrants());
		assertThat(result.overlaps()).isZero();
		// Once A's threads stop, the chain ends and B is granted.
		this.processB.tryAcquire(exclusive(this.key, LONG)).orElseThrow().release();
	}

	/**
	 * What B saw.
	 * @param key the trial's key
	 * @param waitedMs how long B waited, or -1 if it was not granted within its wait time
	 * @param heldMs how long after B's request A's holder released: the chain started then
	 * @param chainGrants A's grants in all, the chain's first included
	 * @param chainLength A's grants on the chain's first znode (its token)
	 * @param chainGrantsWhileWaiting A's grants between B's request and B's grant (or the end of
	 * its wait)
	 * @param overlaps how often a holder entered while another was inside
	 */
	private record Trial(String key, long waitedMs, long heldMs, int chainGrants, long chainLength,
			long chainGrantsWhileWaiting, int overlaps) {

		void report(String settings) {
			System.out.printf("LOCAL-HANDOFF bound %s key=%s b_wait_ms=%d first_holder_released_after_ms=%d "
					+ "chain_length=%d a_grants_while_b_waited=%d a_grants=%d%n", settings, this.key, this.waitedMs,
					this.heldMs, this.chainLength, this.chainGrantsWhileWaiting, this.chainGrants);
		}

	}

	/**
	 * Run a trial: A's holder is granted the key through ZooKeeper (the chain's znode), B asks for
	 * the key at once and queues its znode behind, A's load threads queue behind the holder locally,
	 * then the holder releases and the chain runs until B is granted (or gives up); then A's threads
	 * stop.
	 * @param remoteWait B's wait time
	 * @param hold how long each of A's grants is held
	 */
	private Trial remoteWaiterDuringAChain(String key, Duration remoteWait, Duration hold) throws Exception {
		ChainLoad.Section section = new ChainLoad.Section();
		LockThread holder = thread("holder");
		LockThread remote = thread("remote");
		LockHandle first = holder.acquire(this.processA, exclusive(key, LONG));
		long asked = System.nanoTime();
		CompletableFuture<Long> remoteGrant = remote.submit(() -> {
			Optional<RegistryGrant> granted = this.processB.tryAcquire(exclusive(key, remoteWait));
			if (granted.isEmpty()) {
				return -1L;
			}
			long at = System.nanoTime();
			section.hold(Duration.ofMillis(20));
			granted.get().release();
			return at;
		});
		long token = first.fencingToken();
		long grantedAt;
		long releasedAt;
		List<ChainLoad.Grant> grants;
		try (ChainLoad chain = ChainLoad.start(this.processA, exclusive(key, LONG), THREADS, hold, section)) {
			// Polled often: the chain's time runs from the holder's grant.
			await().pollInterval(Duration.ofMillis(2))
				.atMost(LONG)
				.until(() -> admin(this.processA).describeWaitingLocks().size() == THREADS
						&& this.observer.getChildren().forPath(ROOT + key).size() == 2);
			releasedAt = System.nanoTime();
			holder.release(first);
			grantedAt = remoteGrant.get(remoteWait.plus(LONG).toMillis(), TimeUnit.MILLISECONDS);
			grants = chain.grants();
		}
		long end = (grantedAt > 0) ? grantedAt : Long.MAX_VALUE;
		long whileWaiting = grants.stream().filter((grant) -> grant.grantedAt() > asked && grant.grantedAt() < end)
			.count();
		long chainLength = 1 + grants.stream().filter((grant) -> grant.token() == token).count();
		long waitedMs = (grantedAt > 0) ? TimeUnit.NANOSECONDS.toMillis(grantedAt - asked) : -1;
		return new Trial(key, waitedMs, TimeUnit.NANOSECONDS.toMillis(releasedAt - asked), grants.size() + 1,
				chainLength, whileWaiting, section.overlaps());
	}

	private LockThread thread(String name) {
		LockThread thread = new LockThread(name);
		this.threads.add(thread);
		return thread;
	}

	private static LockTarget exclusive(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.EXCLUSIVE, true, 0, waitTime);
	}

}
