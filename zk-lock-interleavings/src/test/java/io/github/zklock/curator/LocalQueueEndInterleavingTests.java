package io.github.zklock.curator;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.Interleavings.explore;
import static io.github.zklock.curator.Interleavings.timeOut;
import static io.github.zklock.curator.Interleavings.twiceFoundAt;
import static io.github.zklock.curator.LocalQueueModel.check;

/**
 * The interleavings of one key's local queue ({@link LockKey}) and its znodes' acquisitions
 * ({@link ZnodeAcquisition}) as waits and grants end, explored systematically by Lincheck's model
 * checker on an in-memory ZooKeeper ({@link LocalQueueModel}), as {@link LocalQueueInterleavingTests}
 * explores the hand-over: READ under WRITE when a revocation ends both, a one-attempt request after
 * an ended grant is released, session loss while one thread holds and another waits, a suspended
 * connection as a wait ends, a refused one-attempt request. Each test asserts the queue's
 * invariants in every schedule it explores, and that the key is free afterwards.
 */
@ExtendWith(InterleavingsExtension.class)
class LocalQueueEndInterleavingTests {

	@Test
	void readUnderWriteRidesTheTurnThatARevocationEndsForBoth() {
		explore(LockMode.WRITE, false, (run) -> {
			LocalQueueModel model = run.model;
			run.start("writer", () -> {
				LockHandle write;
				try {
					write = model.acquire(model.request(LockMode.WRITE)).orElseThrow();
				}
				catch (LockLostException ex) {
					// Revoked just as its grant was handed out: told, and the wait fails.
					return;
				}
				model.enter(write);
				Optional<RegistryGrant> read;
				try {
					read = model.acquire(model.request(LockMode.READ));
				}
				catch (LockException ex) {
					// Taken away before the nested request.
					read = Optional.empty();
					check(write.state() == LockState.LOST, "nested READ refused while " + write.state());
				}
				write.release();
				read.ifPresent(LockHandle::release);
				model.leave(write);
			});
			run.start("other-writer", () -> {
				try {
					model.hold(model.acquire(model.request(LockMode.WRITE)));
				}
				catch (LockLostException ex) {
					// Revoked just as its grant was handed out: told, and the wait fails.
				}
			});
			run.start("revoker", () -> model.endHeldZnode("revoked", false));
		});
	}

	@Test
	void oneAttemptOnceTheEndedGrantIsReleasedFindsTheKeyFree() {
		// Found start-before-an-earlier-end at schedule 30 (22 before this round's changes to the key).
		explore(LockMode.EXCLUSIVE, false, twiceFoundAt(30), (run) -> {
			LocalQueueModel model = run.model;
			// Held by an asynchronous grant whose znode another application revokes.
			LockHandle first = model.submit(model.async(LockMode.EXCLUSIVE)).join().orElseThrow();
			String node = model.ownZnode();
			run.start("revoker", () -> model.grants.endZnode(node, "revoked", false));
			run.start("holder", () -> {
				// The holder learns that its grant ended, lets it go and tries once: the key is free,
				// so it is granted. (ZooKeeper applies a session's requests in order: the ended
				// znode's delete must go before the new create, or the listing finds it ahead.)
				while (first.state() != LockState.LOST) {
					Thread.yield();
				}
				first.release();
				model.hold(Optional.of(model.acquire(model.oneAttempt(LockMode.EXCLUSIVE)).orElseThrow()));
			});
		});
	}

	@Test
	void sessionLostWhileOneThreadHoldsAndAnotherWaits() {
		explore(LockMode.EXCLUSIVE, true, (run) -> {
			LocalQueueModel model = run.model;
			// Held at the start by an asynchronous grant, which the holder thread releases.
			LockHandle first = model.submit(model.async(LockMode.EXCLUSIVE)).join().orElseThrow();
			run.start("holder", () -> {
				model.enter(first);
				model.leave(first);
				first.release();
			});
			run.start("waiter", () -> {
				try {
					model.hold(model.acquire(model.request(LockMode.EXCLUSIVE)));
				}
				catch (LockLostException ex) {
					// Lost with the session just as its grant was handed out: told, and the wait fails.
				}
			});
			run.start("expiry", () -> {
				model.zooKeeper.expireSession();
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
			});
		});
	}

	@Test
	void connectionSuspendedAsAWaitEndsAndTheTurnIsHandedOverLeavesNothingBehind() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			// Held at the start by an asynchronous grant, which the holder thread releases.
			LockHandle first = model.submit(model.async(LockMode.EXCLUSIVE)).join().orElseThrow();
			AtomicReference<Waiter> waiting = new AtomicReference<>();
			Thread waiter = run.start("waiter", () -> {
				Waiter request = model.timedRequest(LockMode.EXCLUSIVE);
				waiting.set(request);
				try {
					model.hold(model.acquire(request));
				}
				catch (LockException ex) {
					// Its wait ended while not connected: told, never "busy".
				}
			});
			Thread holder = run.start("holder", first::release);
			Thread connection = run.start("connection", () -> {
				model.suspend();
				// What was sent meanwhile fails for the connection: the waits go on, queued again.
				model.zooKeeper.connectionTimedOut();
				// The wait ends while the connection is suspended.
				timeOut(model, waiting);
				model.reconnect();
			});
			run.join(holder, connection);
			timeOut(model, waiting);
			run.join(waiter);
		});
	}

	@Test
	void refusedAttemptHasSentItsDeleteBeforeItsAnswer() {
		// Found owner-told-before-the-delete at schedule 2.
		explore(LockMode.EXCLUSIVE, false, twiceFoundAt(2), (run) -> {
			LocalQueueModel model = run.model;
			String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, "lock-");
			List<String> leftAtAnswer = new CopyOnWriteArrayList<>();
			run.start("thread", () -> {
				Waiter refused = model.oneAttempt(LockMode.EXCLUSIVE);
				// Whoever tells the refusal, the refused znode's delete was sent before (ZooKeeper
				// applies a session's requests in order: the next attempt never finds it).
				// A plain loop: a stream's classes, transformed by the model checker inside the first
				// schedule that uses them, made that schedule pass its fixed 30 s bound on a busy machine
				// (reported as a hang).
				refused.thenAccept((granted) -> {
					for (String node : model.zooKeeper.ownZnodes()) {
						if (granted.isEmpty() && node.startsWith(LocalQueueModel.PATH + "/")) {
							leftAtAnswer.add(node);
						}
					}
				});
				check(model.acquire(refused).isEmpty(), "granted while another holds");
				model.zooKeeper.deleteAsOther(other);
				// Nothing else queues: the next attempt is granted, never refused by its own predecessor.
				model.hold(Optional.of(model.acquire(model.oneAttempt(LockMode.EXCLUSIVE)).orElseThrow()));
			});
			// Another key's requests, whose thread may deliver the first thread's answers (one event
			// thread delivers a session's answers in order).
			run.start("other-key", () -> model.hold(model.acquire(LocalQueueModel.OTHER_PATH,
					model.oneAttempt(LockMode.EXCLUSIVE))));
			run.joinAll();
			check(leftAtAnswer.isEmpty(), "refused with its znode not deleted yet: " + leftAtAnswer);
		});
	}

}
