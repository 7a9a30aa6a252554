package io.github.zklock.curator;

import java.time.Duration;
import java.util.Optional;

import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.Interleavings.explore;
import static io.github.zklock.curator.LocalQueueModel.check;

/**
 * The transitions of a kept znode ({@link KeptLocks}) explored by Lincheck's model checker, on the
 * in-memory ZooKeeper of {@link LocalQueueModel}: a local grant from a kept znode racing its give-up
 * (another participant queues, and its watch fires), a revocation, the maximum idle time (the
 * timer, the clock moved past half a session timeout so that the grant confirms the znode first),
 * the session's loss and the new session; and another participant's one attempt waiting for a
 * znode that may be kept, racing its give-up and the end of its wait. Besides the invariants every
 * scenario of the model asserts (no untold overlap, every znode deleted once, none left, no
 * request stalled), each asserts that a grant says HELD only while its znode is there, and that no
 * grant of the application is HELD once the other participant's znode is first.
 */
@ExtendWith(InterleavingsExtension.class)
class KeptLockInterleavingTests {

	/**
	 * A maximum idle time past half the in-memory session timeout (10 s): once the timer moved the
	 * clock there, a grant on the kept znode is confirmed by a read first.
	 */
	private static final Duration IDLE_PAST_HALF_SESSION = Duration.ofSeconds(6);

	/** A maximum idle time the scenario does not reach (no timer runs). */
	private static final Duration LONG_IDLE = Duration.ofSeconds(30);

	@Test
	void keptGrantRacingItsGiveUpNeverOverlapsTheParticipantThatAsked() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = keptOnce(run, LONG_IDLE, LockMode.EXCLUSIVE);
			run.start("requester", () -> holdChecked(model, model.acquire(model.keptRequest(LockMode.EXCLUSIVE))));
			run.start("other", () -> {
				String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, "lock-");
				// Granted in ZooKeeper once it is first: the application gave its znode up.
				while (!Protocol.MUTEX.first(model.zooKeeper.childrenOf(LocalQueueModel.PATH), name(other))) {
					Thread.yield();
				}
				model.checkNoneHeld();
				model.zooKeeper.deleteAsOther(other);
			});
		});
	}

	@Test
	void revocationOfAKeptZnodeRacingALocalGrant() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = keptOnce(run, LONG_IDLE, LockMode.EXCLUSIVE);
			String node = model.ownZnode();
			run.start("requester", () -> {
				try {
					holdChecked(model, model.acquire(model.keptRequest(LockMode.EXCLUSIVE)));
				}
				catch (LockLostException ex) {
					// Revoked just as its grant was handed out: told, and the wait fails.
				}
			});
			run.start("revoker", () -> model.grants.endZnode(node, "revoked", false));
		});
	}

	@Test
	void maximumIdleTimeRacingALocalGrant() {
		explore(LockMode.WRITE, false, (run) -> {
			LocalQueueModel model = keptOnce(run, IDLE_PAST_HALF_SESSION, LockMode.WRITE);
			run.start("requester", () -> holdChecked(model, model.acquire(model.keptRequest(LockMode.WRITE))));
			// The sweep gives the znode up unless it was used again meanwhile; with the clock moved on,
			// a later grant confirms the kept znode with a read first.
			run.start("timer", model::runTimers);
		});
	}

	@Test
	void sessionLostWhileAZnodeIsKeptAndALocalRequestComes() {
		explore(LockMode.EXCLUSIVE, true, (run) -> {
			LocalQueueModel model = keptOnce(run, LONG_IDLE, LockMode.EXCLUSIVE);
			run.start("requester", () -> {
				try {
					holdChecked(model, model.acquire(model.keptRequest(LockMode.EXCLUSIVE)));
				}
				catch (LockLostException ex) {
					// Lost with the session just as its grant was handed out: told, and the wait fails.
				}
			});
			run.start("expiry", () -> {
				model.zooKeeper.expireSession();
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
				// What the registry's listener does on LOST.
				model.grants.giveUpKept(KeptKeys.Cause.SESSION);
			});
		});
	}

	@Test
	void oneAttemptBehindAZnodeThatMayBeKeptIsGrantedOnceGivenUpOrRefusedAfterItsWait() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			// Another application's znode, marked as one it may keep.
			String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, Protocol.KEEP_MARK + "lock-");
			run.start("attempt", () -> {
				Optional<RegistryGrant> granted = model.acquire(model.oneAttempt(LockMode.EXCLUSIVE));
				granted.ifPresent((grant) -> check(!model.zooKeeper.childrenOf(LocalQueueModel.PATH).contains(name(other)),
						"granted while the other application's znode is there"));
				model.hold(granted);
			});
			run.start("keeper", () -> model.zooKeeper.deleteAsOther(other));
			run.start("timer", model::runTimers);
		});
	}

	/** A model that keeps znodes, with the key's znode kept after one grant. */
	private static LocalQueueModel keptOnce(Interleavings.Run run, Duration maxIdle, LockMode mode) {
		LocalQueueModel model = run.model;
		model.grants.keptLocks(new KeptLocks(true, maxIdle, 10, KeptLocks.DEFAULT_GIVE_UP_WAIT));
		model.hold(model.acquire(model.keptRequest(mode)));
		check(model.grants.keptKeys().keptCount() == 1, "kept: " + model.grants.kept());
		return model;
	}

	/** One holder's turn, checking that its znode is there while it is inside. */
	private static void holdChecked(LocalQueueModel model, Optional<RegistryGrant> granted) {
		granted.ifPresent((handle) -> {
			model.enter(handle);
			model.checkZnodeThere(handle);
			model.leave(handle);
			model.checkTold(handle);
			handle.release();
		});
	}

	private static String name(String path) {
		return path.substring(path.lastIndexOf('/') + 1);
	}

}
