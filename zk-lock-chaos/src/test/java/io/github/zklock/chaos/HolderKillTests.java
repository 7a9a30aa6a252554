package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder JVM is killed with SIGKILL: nothing releases its lock but the server's expiry of its
 * session, so another client is granted within the session timeout plus a second (the server
 * expires sessions one tick late at most, then the waiter needs a round trip).
 */
@Tag("chaos")
class HolderKillTests {

	private static final int TRIALS = 3;

	private static final String PATH = "/holder-kill";

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(3);

	/** A server per test, with the chaos tick. The holders are child JVMs with clients of their own. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private Contender contender;

	@BeforeEach
	void start() throws Exception {
		this.contender = new Contender(this.zooKeeper);
	}

	@AfterEach
	void stop() throws Exception {
		// The extension closes the client and the server after this.
		this.contender.close();
	}

	@Test
	@Timeout(value = 4, unit = TimeUnit.MINUTES)
	void lockOfAKilledHolderIsFreeWithinSessionTimeoutPlusOneSecond() throws Exception {
		List<Long> releaseTimes = new ArrayList<>();
		for (int trial = 1; trial <= TRIALS; trial++) {
			try (ChildJvm holder = ChildJvm.start("holder-kill-" + trial, "hold", this.zooKeeper.getConnectString(), PATH,
					Long.toString(SESSION_TIMEOUT.toMillis()))) {
				long holderToken = Long.parseLong(holder.awaitLine("HELD", Duration.ofSeconds(90)));
				Future<long[]> next = this.contender.queueBehindHolder(PATH);

				long killedAt = System.nanoTime();
				holder.kill();
				long[] granted = next.get(30, TimeUnit.SECONDS);

				long releaseMs = TimeUnit.NANOSECONDS.toMillis(granted[0] - killedAt);
				Chaos.report("sigkill trial=%d pid=%d session_timeout_ms=%d sigkill_release_ms=%d tokens=%d->%d", trial,
						holder.pid(), SESSION_TIMEOUT.toMillis(), releaseMs, holderToken, granted[1]);
				assertThat(releaseMs).as("trial %d: free again after SIGKILL", trial)
					.isLessThanOrEqualTo(SESSION_TIMEOUT.plusSeconds(1).toMillis());
				assertThat(granted[1]).isGreaterThan(holderToken);
				releaseTimes.add(releaseMs);
			}
		}
		Chaos.report("sigkill trials=%d session_timeout_ms=%d sigkill_release_ms %s", TRIALS,
				SESSION_TIMEOUT.toMillis(), Chaos.stats(releaseTimes));
	}

}
