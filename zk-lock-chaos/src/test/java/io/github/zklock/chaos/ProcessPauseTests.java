package io.github.zklock.chaos;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockHandle;
import io.github.zklock.LockTemplate;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A JVM whose threads take a key in turns (local hand-off on, the default) is paused with SIGSTOP
 * for longer than its session timeout, as a long garbage-collection pause would: the server expires
 * its session, deletes its lock znode and grants the key to another client (B). The paused JVM is
 * resumed while B holds the key. Its holder of the moment is a zombie until its client notices the
 * expiry (the known case, which fencing tokens are for), but no new grant may be made on the dead
 * znode: no thread of the paused JVM may start a grant it believes held while B holds the key.
 * A thread of the paused JVM that waits on the lock's condition must come back without the lock
 * ({@link io.github.zklock.LockLostException}), whatever B signalled meanwhile.
 */
@Tag("chaos")
class ProcessPauseTests {

	private static final String PATH = "/process-pause";

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(3);

	/** How long B keeps the key after the paused JVM was resumed: B's work under the lock. */
	private static final Duration B_HOLDS = Duration.ofSeconds(2);

	/** A server per test, with the chaos tick. The paused application is a child JVM. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	@Test
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void resumedJvmHandsNoGrantOverOnItsExpiredZnode() throws Exception {
		pauseAndResume("process-pause", "4", "1", "false", "0");
	}

	/**
	 * Kept locks on: one thread takes the key every 50 ms, and the znode is kept (held by nobody)
	 * between its grants, so the pause most likely falls while it is kept. Resumed with that thread
	 * asking again at once, the JVM grants nothing on its expired znode while B holds the key, and
	 * its next grant has a higher token than B's.
	 */
	@Test
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void resumedJvmGrantsNothingOnItsExpiredKeptZnode() throws Exception {
		List<String[]> records = pauseAndResume("kept-pause", "1", "1", "true", "50");
		assertThat(records).as("grants from the kept znode before the pause").anyMatch((r) -> Boolean.parseBoolean(r[3]));
	}

	/**
	 * A child JVM holds the lock of a key and waits on its condition ({@code awaitUninterruptibly()}),
	 * which queues its waiter znode and releases the lock; it is paused for longer than its session
	 * timeout. The server expires its session and deletes the waiter znode with it. Meanwhile this
	 * test's registry takes the lock and signals all, finding no waiter: a signal sent to the paused
	 * JVM's dead waiter would have gone nowhere. Resumed while the test still holds the lock, the
	 * child's wait must end in {@link io.github.zklock.LockLostException} without the lock, never
	 * return as if signalled and held; its {@code unlock()} then does nothing, and it takes the lock
	 * again in its new session once the test let it go.
	 */
	@Test
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void resumedConditionWaiterFailsWithLockLostAndNoSignalWakesItsGhost() throws Exception {
		String key = "/process-pause-condition";
		String lockPath = LockWorker.ROOT + key;
		CuratorFramework observer = this.zooKeeper.newClient();
		CuratorLockRegistry contender = new CuratorLockRegistry(
				this.zooKeeper.newClient(Chaos.clientSettings(Duration.ofSeconds(10), ClientSocket.NIO)), LockWorker.ROOT,
				16);
		Lock lock = new LockTemplate(contender, Duration.ofSeconds(30)).lock(key);
		long pausedMs;
		long expiredAfterMs;
		long outcomeAfterResumeMs;
		String outcome;
		int woken;
		try (ChildJvm child = ChildJvm.start("condition-pause", "await", this.zooKeeper.getConnectString(), key,
				Long.toString(SESSION_TIMEOUT.toMillis()))) {
			String childSession = child.awaitLine("HELD", Duration.ofSeconds(90));
			child.awaitLine("AWAITING", Duration.ofSeconds(30));
			// Queued, and the lock released: the waiter's znode is the one ephemeral below the lock path.
			await().atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> ZooKeeperExtension.ephemeralZnodes(observer, lockPath),
						(znodes) -> znodes.size() == 1 && znodes.get(0).substring(lockPath.length()).contains("condition"));
			long stoppedAt = System.nanoTime();
			signal(child, "STOP");
			try {
				// The server expires the paused JVM's session: its waiter znode goes with it.
				await().atMost(Duration.ofSeconds(30))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> ZooKeeperExtension.ephemeralZnodes(observer, lockPath).isEmpty());
				expiredAfterMs = Chaos.millisSince(stoppedAt);
				assertThat(lock.tryLock(30, TimeUnit.SECONDS)).as("the test's registry takes the key meanwhile").isTrue();
				long resumedAt;
				try {
					lock.newCondition().signalAll();
					woken = contender.conditions().signalAll(key);
					pausedMs = Chaos.millisSince(stoppedAt);
					signal(child, "CONT");
					resumedAt = System.nanoTime();
					// Resumed while the key is held here: a waiter that wrongly took the signal
					// would now wait for the lock, and report only once it is let go.
					outcome = outcome(child, Duration.ofSeconds(15));
				}
				finally {
					lock.unlock();
				}
				if (outcome == null) {
					outcome = outcome(child, Duration.ofSeconds(15));
				}
				outcomeAfterResumeMs = Chaos.millisSince(resumedAt);
			}
			finally {
				signal(child, "CONT");
			}
			Chaos.report("condition_pause session_timeout_ms=%d paused_ms=%d expired_after_ms=%d woken_by_signal=%d "
					+ "outcome_after_resume_ms=%d outcome=%s", SESSION_TIMEOUT.toMillis(), pausedMs, expiredAfterMs,
					woken, outcomeAfterResumeMs, outcome);
			assertThat(woken).as("waiters the signal sent during the pause found").isZero();
			assertThat(outcome).as("the resumed child's await (session %s)", childSession)
				.isNotNull()
				.startsWith("LOST held=0 ");
			assertThat(child.awaitLine("UNLOCK", Duration.ofSeconds(10)))
				.as("the child's unlock() after the lost wait").isEqualTo("OK");
			assertThat(child.awaitLine("RELOCKED", Duration.ofSeconds(60))).as("the child takes the lock again")
				.startsWith("true ")
				.doesNotEndWith(" " + childSession);
			child.awaitLine("DONE", Duration.ofSeconds(30));
			assertThat(child.awaitExit(Duration.ofSeconds(30))).isZero();
		}
		finally {
			contender.close();
		}
	}

	/** The child's OUTCOME line, or null if none comes in time. */
	private static String outcome(ChildJvm child, Duration timeout) throws InterruptedException {
		try {
			return child.awaitLine("OUTCOME", timeout);
		}
		catch (TimeoutException ex) {
			return null;
		}
	}

	private List<String[]> pauseAndResume(String name, String threads, String holdMs, String keep, String idleMs)
			throws Exception {
		CuratorFramework contenderClient = this.zooKeeper.newClient(Chaos.clientSettings(Duration.ofSeconds(10),
				ClientSocket.NIO));
		CuratorLockRegistry contender = new CuratorLockRegistry(contenderClient, LockWorker.ROOT, 16);
		Path grants = Chaos.OUTPUT_DIR.resolve(name + "-grants.csv").toAbsolutePath();
		long bStart;
		long bEnd;
		long bToken;
		long pausedMs;
		try (ChildJvm chain = ChildJvm.start(name, "chain", this.zooKeeper.getConnectString(), PATH,
				Long.toString(SESSION_TIMEOUT.toMillis()), threads, holdMs, grants.toString(), keep, idleMs)) {
			chain.awaitLine("GRANTING", Duration.ofSeconds(90));
			long stoppedAt = System.nanoTime();
			signal(chain, "STOP");
			try {
				// The server expires the paused JVM's session after its timeout: B is granted.
				LockHandle held = contender.tryAcquire(Chaos.exclusive(PATH, Duration.ofSeconds(30))).orElseThrow();
				bStart = System.currentTimeMillis();
				bToken = held.fencingToken();
				pausedMs = Chaos.millisSince(stoppedAt);
				signal(chain, "CONT");
				LockSupport.parkNanos(B_HOLDS.toNanos());
				bEnd = System.currentTimeMillis();
				held.release();
			}
			finally {
				signal(chain, "CONT");
			}
			chain.send("STOP");
			chain.awaitLine("DONE", Duration.ofSeconds(60));
			assertThat(chain.awaitExit(Duration.ofSeconds(30))).isZero();
		}
		finally {
			contender.close();
		}
		List<String[]> records = Files.readAllLines(grants, StandardCharsets.UTF_8)
			.stream()
			.map((line) -> line.split(","))
			.toList();
		// decidedMs,endMs,token,local,held,toldMs: a grant decided while B held the key, held, is what
		// must never be; one decided before the pause and returned after it is the known zombie.
		List<String[]> duringB = records.stream()
			.filter((r) -> Long.parseLong(r[0]) >= bStart && Long.parseLong(r[0]) < bEnd && Boolean.parseBoolean(r[4]))
			.toList();
		long zombieHolders = records.stream()
			.filter((r) -> Long.parseLong(r[0]) < bStart && Long.parseLong(r[1]) > bStart)
			.count();
		List<String[]> afterB = records.stream()
			.filter((r) -> Long.parseLong(r[0]) >= bEnd && Boolean.parseBoolean(r[4]))
			.toList();
		Chaos.report("%s session_timeout_ms=%d paused_ms=%d b_token=%d a_grants=%d zombie_holders=%d "
				+ "a_grants_started_held_while_b_held=%d (local %d) first=%s", name.replace('-', '_'),
				SESSION_TIMEOUT.toMillis(), pausedMs, bToken,
				records.size(), zombieHolders, duringB.size(),
				duringB.stream().filter((r) -> Boolean.parseBoolean(r[3])).count(),
				duringB.isEmpty() ? "-" : String.join(",", duringB.get(0)));
		assertThat(duringB).as("grants of the resumed JVM decided, as held, while B held the key (token %d)", bToken)
			.isEmpty();
		assertThat(afterB).as("grants of the resumed JVM after B")
			.allSatisfy((r) -> assertThat(Long.parseLong(r[2])).as("token after B's").isGreaterThan(bToken));
		return records;
	}

	private static void signal(ChildJvm jvm, String signal) throws Exception {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(jvm.pid())).inheritIO().start();
		assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
		assertThat(kill.exitValue()).as("kill -%s %d", signal, jvm.pid()).isZero();
	}

}
