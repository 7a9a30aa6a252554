package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockHandle;
import io.github.zklock.LockState;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The holder's link to the server is cut by a {@link TcpProxy} while another client, connected
 * directly, waits for the lock. Frozen link: the holder's client stops hearing the server and
 * suspends after its read timeout (two thirds of the session timeout), the server expires the
 * session after the full timeout and only then grants the other client. Dropped link: the holder
 * hears of it at once. The margin between the holder going in doubt and the other grant must be
 * positive in every trial.
 */
@Tag("chaos")
class ConnectionCutTests {

	private static final int TRIALS = 5;

	private static final String PATH = "/connection-cut";

	/**
	 * The holder's session timeout; each trial waits for the server to expire it. The margin it
	 * leaves by design is a third of it less the NIO socket's 100 ms (the holder's client gives up
	 * after two thirds of it without an answer, the server after all of it since it last heard from
	 * the holder): 0.9 s at 3 s (at 4 s, 1.23 s by design and 1.27 to 1.40 s measured). Not 2 s
	 * (0.57 s by design): under stress-ng the first trial of a JVM went in doubt 0.3 s late and
	 * kept 0.18 s.
	 */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(3);

	/** A server per test, with the chaos tick; it stops after the proxy is closed. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private TcpProxy proxy;

	private Contender contender;

	@BeforeEach
	void start() throws Exception {
		this.proxy = TcpProxy.start(this.zooKeeper.getPort());
		this.contender = new Contender(this.zooKeeper);
	}

	@AfterEach
	void stop() throws Exception {
		// The extension closes the clients and the server after this.
		this.contender.close();
		Chaos.closeQuietly(this.proxy);
	}

	@Test
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void holderIsInDoubtBeforeAnotherClientIsGrantedWhenTheLinkFreezes() throws Exception {
		List<Long> margins = runTrials("freeze", TRIALS, TcpProxy::freeze);
		Chaos.report("connection_cut cut=freeze trials=%d session_timeout_ms=%d margin_ms %s", TRIALS,
				SESSION_TIMEOUT.toMillis(), Chaos.stats(margins));
	}

	/**
	 * The link drops instead (connections closed, new ones refused for longer than the session
	 * timeout): the holder hears of it at once, so the margin is about the whole session timeout.
	 */
	@Test
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void holderIsInDoubtBeforeAnotherClientIsGrantedWhenTheLinkDrops() throws Exception {
		List<Long> margins = runTrials("drop", 3, (proxy) -> proxy.drop(SESSION_TIMEOUT.multipliedBy(3)));
		Chaos.report("connection_cut cut=drop trials=%d session_timeout_ms=%d margin_ms %s", 3,
				SESSION_TIMEOUT.toMillis(), Chaos.stats(margins));
	}

	/**
	 * Each trial: the holder, connected through the proxy, holds the lock while the contender
	 * waits; the link is cut; the contender's grant must come after the holder went in doubt.
	 * @return the margins in milliseconds
	 */
	private List<Long> runTrials(String cutName, int trials, Consumer<TcpProxy> cut) throws Exception {
		List<Long> margins = new ArrayList<>();
		for (int trial = 1; trial <= trials; trial++) {
			this.proxy.heal();
			// Through the proxy: the extension's client with the proxy's connect string.
			CuratorFramework holderClient = this.zooKeeper.newClient(Chaos
				.clientSettings(SESSION_TIMEOUT, ClientSocket.NIO)
				.andThen((builder) -> builder.connectString(this.proxy.connectString())));
			CuratorLockRegistry holder = new CuratorLockRegistry(holderClient, LockWorker.ROOT, 16);
			AtomicLong inDoubtAt = new AtomicLong();
			AtomicLong lostAt = new AtomicLong();
			holder.addLockStateListener((event) -> {
				if (event.state() == LockState.IN_DOUBT) {
					inDoubtAt.compareAndSet(0, System.nanoTime());
				}
				else if (event.state() == LockState.LOST) {
					lostAt.compareAndSet(0, System.nanoTime());
				}
			});
			try {
				LockHandle handle = holder.tryAcquire(Chaos.exclusive(PATH, Duration.ofSeconds(10))).orElseThrow();
				long holderToken = handle.fencingToken();
				Future<long[]> next = this.contender.queueBehindHolder(PATH);

				long cutAt = System.nanoTime();
				cut.accept(this.proxy);
				long[] granted = next.get(30, TimeUnit.SECONDS);
				this.proxy.heal();
				await().atMost(Duration.ofSeconds(30)).until(() -> handle.state() == LockState.LOST);

				long inDoubt = inDoubtAt.get();
				assertThat(inDoubt).as("trial %d: holder told it is in doubt", trial).isPositive();
				long marginMs = TimeUnit.NANOSECONDS.toMillis(granted[0] - inDoubt);
				Chaos.report("connection_cut cut=%s trial=%d in_doubt_after_ms=%d granted_after_ms=%d lost_after_ms=%d "
						+ "margin_ms=%d tokens=%d->%d", cutName, trial, TimeUnit.NANOSECONDS.toMillis(inDoubt - cutAt),
						TimeUnit.NANOSECONDS.toMillis(granted[0] - cutAt),
						TimeUnit.NANOSECONDS.toMillis(lostAt.get() - cutAt), marginMs, holderToken, granted[1]);
				assertThat(granted[0] - inDoubt).as("trial %d: margin between in doubt and the next grant", trial)
					.isPositive();
				assertThat(granted[1]).isGreaterThan(holderToken);
				margins.add(marginMs);
				handle.release();
			}
			finally {
				this.proxy.heal();
				holder.close();
				holderClient.close();
			}
		}
		return margins;
	}

}
