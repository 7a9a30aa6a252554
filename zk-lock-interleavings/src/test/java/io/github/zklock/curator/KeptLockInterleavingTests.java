package io.github.zklock.curator;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * the session's loss and the new session (also with a request forced between the new session and
 * the give-up, and another participant forced to queue while a grant rides the kept znode); and
 * another participant's one attempt waiting for a
 * znode that may be kept, racing its give-up and the end of its wait; another participant queuing
 * while the first turn holds a keepable znode (the granting listing's children watch firing before
 * or after the znode is kept); and a znode granted behind another participant's, which is not kept. Besides the invariants every
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
			run.start("other", () -> otherParticipantTakesItsTurn(model));
		});
	}

	/**
	 * The other participant queues while a grant rides the kept znode: the znode, in use, is not
	 * given up under its holder, and is not kept once released (the holder's release lets the other
	 * participant in). The two threads wait for each other at those points, so that every schedule
	 * has them; the model checker explores the rest.
	 */
	@Test
	void anotherParticipantQueuesWhileAGrantRidesTheKeptZnode() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = keptOnce(run, LONG_IDLE, LockMode.EXCLUSIVE);
			AtomicBoolean riding = new AtomicBoolean();
			AtomicBoolean queued = new AtomicBoolean();
			run.start("requester", () -> model.acquire(model.keptRequest(LockMode.EXCLUSIVE)).ifPresent((grant) -> {
				check(fromKept(grant), "granted from the kept znode");
				riding.set(true);
				model.enter(grant);
				while (!queued.get()) {
					Thread.yield();
				}
				model.checkZnodeThere(grant);
				model.leave(grant);
				model.checkTold(grant);
				grant.release();
			}));
			run.start("other", () -> {
				while (!riding.get()) {
					Thread.yield();
				}
				String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, "lock-");
				queued.set(true);
				while (!Protocol.MUTEX.first(model.zooKeeper.childrenOf(LocalQueueModel.PATH), name(other))) {
					Thread.yield();
				}
				model.checkNoneHeld();
				model.zooKeeper.deleteAsOther(other);
			});
		});
	}

	/**
	 * A local request after the session expired and the client has a new one, and before the
	 * registry's connection-state listener gives the kept znode up: it must not ride the znode of
	 * the expired session (gone with it, another application may hold the lock), but have one on
	 * the new session (neither granted on the old znode nor failed as lost with the old session, as
	 * the registry's check of each new grant's session would make it). The expiry waits for the
	 * request at that point, so that every schedule has it.
	 */
	@Test
	void requestAfterTheSessionChangedBeforeTheKeptZnodeIsGivenUp() {
		explore(LockMode.EXCLUSIVE, true, (run) -> {
			LocalQueueModel model = keptOnce(run, LONG_IDLE, LockMode.EXCLUSIVE);
			AtomicBoolean expired = new AtomicBoolean();
			AtomicBoolean answered = new AtomicBoolean();
			run.start("requester", () -> {
				while (!expired.get()) {
					Thread.yield();
				}
				// The new session is there before the request: nothing may be lost with the old one.
				model.acquire(model.keptRequest(LockMode.EXCLUSIVE)).ifPresent((grant) -> {
					check(!fromKept(grant), "granted on the kept znode of an expired session");
					holdChecked(model, Optional.of(grant));
				});
				answered.set(true);
			});
			run.start("expiry", () -> {
				model.zooKeeper.expireSession();
				expired.set(true);
				while (!answered.get()) {
					Thread.yield();
				}
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
				// What the registry's listener does on LOST.
				model.grants.giveUpKept(KeptKeys.Cause.SESSION);
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

	/**
	 * The session expires (its client hears only of the expiry, as ZooKeeper tells an expired
	 * session's watches) while a request comes. A grant made before the expiry is HELD on a znode
	 * that is gone until the client tells it (here the connection-state listener's steps): that is
	 * the window fencing tokens are for, so this scenario checks that it is told then, not that its
	 * znode is there; a grant from the kept znode once the session has changed is a defect.
	 */
	@Test
	void sessionLostWhileAZnodeIsKeptAndALocalRequestComes() {
		explore(LockMode.EXCLUSIVE, true, (run) -> {
			LocalQueueModel model = keptOnce(run, LONG_IDLE, LockMode.EXCLUSIVE);
			AtomicBoolean expired = new AtomicBoolean();
			run.start("requester", () -> {
				boolean expiredBefore = expired.get();
				try {
					model.acquire(model.keptRequest(LockMode.EXCLUSIVE)).ifPresent((grant) -> {
						check(!(expiredBefore && fromKept(grant)), "granted on the kept znode of an expired session");
						model.hold(Optional.of(grant));
					});
				}
				catch (LockLostException ex) {
					// Lost with the session just as its grant was handed out: told, and the wait fails.
				}
			});
			run.start("expiry", () -> {
				model.zooKeeper.expireSession();
				expired.set(true);
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

	/**
	 * Another participant queues while the first turn holds a keepable znode, whose granting listing
	 * set the children watch: the watch fires while the turn holds it, at its release, or after the
	 * znode is kept. Whatever the order, the znode is not kept past the other participant's request
	 * (the other is granted: no request stalled) and no grant is HELD once the other is first.
	 */
	@Test
	void anotherParticipantQueuesWhileTheFirstTurnHoldsAKeepableZnode() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			model.grants.keptLocks(new KeptLocks(true, LONG_IDLE, 10, KeptLocks.DEFAULT_GIVE_UP_WAIT));
			run.start("holder", () -> holdChecked(model, model.acquire(model.keptRequest(LockMode.EXCLUSIVE))));
			run.start("other", () -> otherParticipantTakesItsTurn(model));
		});
	}

	/**
	 * A keepable znode granted after waiting for another participant's znode (the key moved here
	 * from elsewhere, and this line never rode a kept znode) is not kept at its release: the other
	 * participant leaves once the application watches its znode, racing the application's steps
	 * after that (the watch event, the listing, the grant).
	 */
	@Test
	void znodeGrantedBehindAnotherParticipantIsNotKept() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			model.grants.keptLocks(new KeptLocks(true, LONG_IDLE, 10, KeptLocks.DEFAULT_GIVE_UP_WAIT));
			String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, Protocol.KEEP_MARK + "lock-");
			run.start("requester", () -> model.acquire(model.keptRequest(LockMode.EXCLUSIVE)).ifPresent((grant) -> {
				check(!fromKept(grant), "granted from a kept znode");
				holdChecked(model, Optional.of(grant));
				check(model.grants.keptKeys().keptCount() == 0, "kept after waiting: " + model.grants.kept());
			}));
			run.start("other", () -> {
				while (!model.zooKeeper.watched(other)) {
					Thread.yield();
				}
				model.zooKeeper.deleteAsOther(other);
			});
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

	/**
	 * Another participant queues, and once ZooKeeper grants it (it is first: the application gave its
	 * znode up) checks that no grant of the application is HELD, then releases.
	 */
	private static void otherParticipantTakesItsTurn(LocalQueueModel model) {
		String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, "lock-");
		while (!Protocol.MUTEX.first(model.zooKeeper.childrenOf(LocalQueueModel.PATH), name(other))) {
			Thread.yield();
		}
		model.checkNoneHeld();
		model.zooKeeper.deleteAsOther(other);
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

	private static boolean fromKept(RegistryGrant grant) {
		return grant.isFromKeptZnode();
	}

	private static String name(String path) {
		return path.substring(path.lastIndexOf('/') + 1);
	}

}
