package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.zklock.LockHandle;
import io.github.zklock.LockState;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.ClosedTogether;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Polling.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server closes the session of a holder while another client waits for the lock (a second
 * connection takes the session over, which makes the server close the holder's connection, and
 * closes it, which ends the session and deletes its lock znode). Measured per trial, with each
 * ZooKeeper client socket of the holder (NIO, the default, and Netty): when the holder's handle
 * leaves HELD, going in doubt when its connection is closed and lost once its client hears that
 * the session expired, relative to the other client's grant. Asserted: what must always hold (the
 * other client is granted, with a higher token; the holder's handle goes in doubt and then lost,
 * and is no longer held shortly after the other grant; no lock znode is left, also once the lost
 * holder released). The order of the holder being told and the other grant is only reported, as a
 * {@code FAULT session-close ...} line per socket: nothing orders the two, and store-side fencing
 * must make either order safe. A holder hears that its session is lost only when its client
 * reconnects (a second or two later), so each trial uses a key of its own and the next trial starts
 * meanwhile; the losses are awaited at the end. {@link SessionExpiryTests} covers the same fault
 * with local hand-off and for a waiter.
 */
@Tag("chaos")
class SessionCloseTests {

	private static final int TRIALS = 20;

	private static final String PATH = "/session-close";

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	/** Longest the holder may still be HELD after the other grant (the NIO socket alone takes 100 ms). */
	private static final Duration MAX_TOLD_LAG = Duration.ofSeconds(1);

	/** A server per socket, with the chaos tick. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	private Contender contender;

	@BeforeEach
	void start() throws Exception {
		this.contender = new Contender(this.zooKeeper);
	}

	@AfterEach
	void stop() throws Exception {
		// The extension closes the clients and the server after this.
		this.contender.close();
	}

	@ParameterizedTest
	@EnumSource(ClientSocket.class)
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void holderIsToldAndNothingIsLeftWhenTheServerClosesItsSession(ClientSocket socket) throws Exception {
		List<Closed> closed = new ArrayList<>();
		try {
			for (int trial = 1; trial <= TRIALS; trial++) {
				closed.add(closeHolderSession(socket, trial));
			}
			List<Long> inDoubtLeads = new ArrayList<>();
			List<Long> lostLeads = new ArrayList<>();
			int toldFirst = 0;
			for (Closed trial : closed) {
				Trial result = awaitLost(socket, trial);
				inDoubtLeads.add(result.inDoubtLead());
				lostLeads.add(result.lostLead());
				// In doubt comes first: told before the grant if in doubt before it.
				if (result.inDoubtLead() > 0) {
					toldFirst++;
				}
			}
			Chaos.fault("session-close socket=%s trials=%d holder_told_first=%d in_doubt_lead_ms(min/median/max)=%s "
					+ "lost_lead_ms(min/median/max)=%s", socket.name().toLowerCase(Locale.ROOT), TRIALS, toldFirst,
					leads(inDoubtLeads), leads(lostLeads));
		}
		finally {
			for (Closed trial : closed) {
				trial.holder.close();
			}
			// At once: a client on the NIO socket takes 100 ms to close (2 s for the 20).
			ClosedTogether.close(closed.stream().map((trial) -> trial.holderClient).toList());
		}
	}

	/**
	 * The first part of a trial: a new holder client on the socket takes the lock, the contender
	 * queues, the server closes the holder's session, the contender is granted (with a higher
	 * token) and releases, and no lock znode is left.
	 */
	private Closed closeHolderSession(ClientSocket socket, int trial) throws Exception {
		String key = PATH + "/" + trial;
		String lockPath = LockWorker.ROOT + key;
		CuratorFramework holderClient = this.zooKeeper.newClient(Chaos.clientSettings(SESSION_TIMEOUT, socket));
		CuratorLockRegistry holder = new CuratorLockRegistry(holderClient, LockWorker.ROOT, 16);
		List<Event> events = new CopyOnWriteArrayList<>();
		holder.addLockStateListener((event) -> events.add(new Event(event.state(), System.nanoTime())));
		// Closed by the extension if the trial fails before it is recorded.
		LockHandle handle = holder.tryAcquire(Chaos.exclusive(key, Duration.ofSeconds(10))).orElseThrow();
		Closed closed = new Closed(trial, lockPath, holderClient, holder, handle, events, handle.fencingToken());
		Future<long[]> next = this.contender.queueBehindHolder(key);

		closed.closing = System.nanoTime();
		closed.attempts = Chaos.expireSession(holderClient, this.zooKeeper.getConnectString(), Duration.ofSeconds(20));
		closed.granted = next.get(30, TimeUnit.SECONDS);
		assertThat(closed.granted[1]).as("trial %d: next token", trial).isGreaterThan(closed.holderToken);
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.contender.client(), lockPath))
			.as("trial %d: lock znodes left", trial)
			.isEmpty();
		return closed;
	}

	/**
	 * The second part of a trial: the holder is lost (its client reconnected and heard of the
	 * expiry), was in doubt before, and no longer held {@link #MAX_TOLD_LAG} after the other grant.
	 * @return how long before the contender's grant the holder went in doubt and was lost, in
	 * microseconds (negative: after the grant)
	 */
	private Trial awaitLost(ClientSocket socket, Closed closed) throws Exception {
		int trial = closed.trial;
		List<Event> events = closed.events;
		// The handle's state changes before its listeners are told: wait for both.
		await().atMost(Duration.ofSeconds(20))
			.until(() -> closed.handle.state() == LockState.LOST && !events.isEmpty()
					&& events.get(events.size() - 1).state() == LockState.LOST);
		closed.handle.release();
		long grantedAt = closed.granted[0];
		// Every event is in: lost is for good.
		LockState atGrantPlusLag = stateAt(events, grantedAt + MAX_TOLD_LAG.toNanos());
		// The told events of the session's end: the last IN_DOUBT (the client may take the session
		// back in between, HELD again, before the server closes it), then LOST.
		long lostAt = lastAt(events, LockState.LOST);
		long inDoubtAt = lastAt(events, LockState.IN_DOUBT);
		long inDoubtLead = TimeUnit.NANOSECONDS.toMicros(grantedAt - inDoubtAt);
		long lostLead = TimeUnit.NANOSECONDS.toMicros(grantedAt - lostAt);
		Chaos.report("session_close socket=%s trial=%d in_doubt_after_ms=%d granted_after_ms=%d lost_after_ms=%d "
				+ "in_doubt_lead_us=%d lost_lead_us=%d holder_events=%s close_attempts=%d tokens=%d->%d", socket,
				trial, TimeUnit.NANOSECONDS.toMillis(inDoubtAt - closed.closing),
				TimeUnit.NANOSECONDS.toMillis(grantedAt - closed.closing),
				TimeUnit.NANOSECONDS.toMillis(lostAt - closed.closing), inDoubtLead, lostLead,
				events.stream().map(Event::state).toList(), closed.attempts, closed.holderToken, closed.granted[1]);

		assertThat(events).as("trial %d: holder events", trial)
			.extracting(Event::state)
			.startsWith(LockState.IN_DOUBT)
			.endsWith(LockState.LOST);
		assertThat(inDoubtAt).as("trial %d: in doubt before lost", trial).isLessThanOrEqualTo(lostAt);
		assertThat(atGrantPlusLag)
			.as("trial %d: holder's state %d ms after the other grant", trial, MAX_TOLD_LAG.toMillis())
			.isNotEqualTo(LockState.HELD);
		assertThat(admin(closed.holder).heldLockCount()).as("trial %d: grants the holder still tracks", trial).isZero();
		assertThat(ZooKeeperExtension.ephemeralZnodes(this.contender.client(), closed.lockPath))
			.as("trial %d: lock znodes left after the holder's release", trial)
			.isEmpty();
		return new Trial(inDoubtLead, lostLead);
	}

	/** The holder's state at a time, from the events (HELD before the first). */
	private static LockState stateAt(List<Event> events, long nanoTime) {
		LockState state = LockState.HELD;
		for (Event event : events) {
			if (event.at() - nanoTime > 0) {
				break;
			}
			state = event.state();
		}
		return state;
	}

	private static long lastAt(List<Event> events, LockState state) {
		long at = 0;
		for (Event event : events) {
			if (event.state() == state) {
				at = event.at();
			}
		}
		assertThat(at).as("holder told %s", state).isNotZero();
		return at;
	}

	/** "min/median/max" in milliseconds with one decimal, from microseconds. */
	private static String leads(List<Long> micros) {
		List<Long> sorted = new ArrayList<>(micros);
		Collections.sort(sorted);
		long median = sorted.get(sorted.size() / 2);
		if (sorted.size() % 2 == 0) {
			median = (sorted.get(sorted.size() / 2 - 1) + median) / 2;
		}
		return millis(sorted.get(0)) + "/" + millis(median) + "/" + millis(sorted.get(sorted.size() - 1));
	}

	private static String millis(long micros) {
		return String.format(Locale.ROOT, "%.1f", micros / 1000.0);
	}

	private record Event(LockState state, long at) {
	}

	private record Trial(long inDoubtLead, long lostLead) {
	}

	/** A trial whose holder session the server closed, the holder still to be told it is lost. */
	private static final class Closed {

		private final int trial;

		private final String lockPath;

		private final CuratorFramework holderClient;

		private final CuratorLockRegistry holder;

		private final LockHandle handle;

		private final List<Event> events;

		private final long holderToken;

		private long closing;

		private int attempts;

		/** The contender's grant: its {@link System#nanoTime()} and fencing token. */
		private long[] granted;

		Closed(int trial, String lockPath, CuratorFramework holderClient, CuratorLockRegistry holder,
				LockHandle handle, List<Event> events, long holderToken) {
			this.trial = trial;
			this.lockPath = lockPath;
			this.holderClient = holderClient;
			this.holder = holder;
			this.handle = handle;
			this.events = events;
			this.holderToken = holderToken;
		}

	}

}
