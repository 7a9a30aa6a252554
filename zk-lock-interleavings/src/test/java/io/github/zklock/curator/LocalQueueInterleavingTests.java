package io.github.zklock.curator;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.Interleavings.SCHEDULES;
import static io.github.zklock.curator.Interleavings.explore;
import static io.github.zklock.curator.Interleavings.timeOut;
import static io.github.zklock.curator.Interleavings.twiceFoundAt;
import static io.github.zklock.curator.LocalQueueModel.check;

/**
 * The interleavings of one key's local queue ({@link LockKey}) and its znodes' acquisitions
 * ({@link ZnodeAcquisition}) explored systematically by Lincheck's model checker, on an in-memory
 * ZooKeeper ({@link LocalQueueModel}), so that no network timing is involved: the turn handed
 * over as it is revoked, as a ceiling falls, as a wait is given up or a request cancelled, a
 * reentrant turn's ceiling, and permits of one application queued behind each other on a
 * semaphore's internal mutex. Each test asserts the queue's invariants (see {@link LocalQueueModel})
 * in every schedule it explores, and that the key is free afterwards (a one-attempt request is
 * granted: no stalled key); a failure prints the schedule that broke one.
 * {@link LocalQueueEndInterleavingTests} explores the ends (session loss, a suspended connection,
 * refusals); {@code scripts/interleaving-reverts.sh} shows what both find when a fix is taken out.
 */
@ExtendWith(InterleavingsExtension.class)
class LocalQueueInterleavingTests {

	/**
	 * Schedules explored by {@link #ceilingThatFallsAsItsGrantIsReleasedLeavesTheTurnHandedOverAlone}:
	 * its reverted defect was found at the 240th (at the 101st before this round's changes to the
	 * key's release and to the loss of grants with their session; with twice 101 it was missed).
	 */
	private static final int CEILING_FALLS_SCHEDULES = twiceFoundAt(240);

	@Test
	void revocationAsTheTurnIsHandedOverLeavesNoTwoHoldersAndNoStalledKey() {
		// Found grant-registered-after-the-monitor at schedule 12, turn-taken-away-... at 4.
		explore(LockMode.EXCLUSIVE, false, twiceFoundAt(12), (run) -> {
			LocalQueueModel model = run.model;
			// Held by an asynchronous grant, another queued behind it: the release hands the turn
			// over, on the releasing thread, as a revocation of the znode comes in.
			LockHandle first = model.submit(model.async(LockMode.EXCLUSIVE)).join().orElseThrow();
			CompletableFuture<Optional<RegistryGrant>> second = model.submit(model.async(LockMode.EXCLUSIVE));
			String node = model.ownZnode();
			run.start("holder", () -> {
				model.enter(first);
				model.leave(first);
				first.release();
			});
			run.start("revoker", () -> model.grants.endZnode(node, "revoked", false));
			run.joinAll();
			try {
				// Granted on the revoked znode and told (LOST), or on a new znode: never HELD untold.
				model.hold(second.join());
			}
			catch (CompletionException ex) {
				check(ex.getCause() instanceof LockLostException, "failed otherwise: " + ex.getCause());
			}
		});
	}

	@Test
	void ceilingOfAReentrantTurnTakesItAwayFromItsThreadWhichIsTold() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			run.start("reentrant", () -> {
				LockHandle outer = model.acquire(model.request(LockMode.EXCLUSIVE, Duration.ofMillis(1))).orElseThrow();
				model.enter(outer);
				try {
					// A nested request rides the turn, or fails when the ceiling took the turn away.
					model.acquire(model.request(LockMode.EXCLUSIVE)).ifPresent(LockHandle::release);
				}
				catch (LockException ex) {
					check(outer.state() == LockState.LOST, "nested request refused while " + outer.state());
				}
				model.leave(outer);
				outer.release();
			});
			run.start("other", () -> model.hold(model.acquire(model.request(LockMode.EXCLUSIVE))));
			// The ceiling's task runs on the timer, once the grant was delivered and its ceiling set.
			run.start("timer", model::runTimers);
		});
	}

	@Test
	void ceilingThatFallsAsItsGrantIsReleasedLeavesTheTurnHandedOverAlone() {
		explore(LockMode.EXCLUSIVE, false, CEILING_FALLS_SCHEDULES, (run) -> {
			LocalQueueModel model = run.model;
			// Held by an asynchronous grant with a ceiling, another queued behind it without one: the
			// release hands the znode over as the first grant's ceiling falls.
			LockHandle first = model.submit(model.async(LockMode.EXCLUSIVE, Duration.ofMillis(1))).join().orElseThrow();
			CompletableFuture<Optional<RegistryGrant>> second = model.submit(model.async(LockMode.EXCLUSIVE));
			// The timer's task runs on the scenario's own thread: the schedule that matters (its
			// ceiling check passed, the key's monitor not yet taken, the release handing the znode
			// over meanwhile) is then one switch away, not two.
			run.start("holder", first::release);
			model.runTimers();
			run.joinAll();
			// A ceiling ends its own grant only: the second one, without a ceiling, is still held.
			Optional<RegistryGrant> granted = second.join();
			LockState state = granted.orElseThrow().state();
			check(state == LockState.HELD, "the grant handed over is " + state);
			model.hold(granted);
		});
	}

	@Test
	void waitGivenUpAsTheTurnIsHandedOverNeitherLeaksNorLosesTheGrant() {
		// Found short-wait-unqueued-fails at schedule 19.
		explore(LockMode.EXCLUSIVE, false, twiceFoundAt(19), (run) -> {
			LocalQueueModel model = run.model;
			// Held at the start by an asynchronous grant, which the holder thread releases.
			LockHandle first = model.submit(model.async(LockMode.EXCLUSIVE)).join().orElseThrow();
			AtomicReference<Waiter> waiting = new AtomicReference<>();
			Thread waiter = run.start("waiter", () -> {
				Waiter request = model.timedRequest(LockMode.EXCLUSIVE);
				waiting.set(request);
				// Its wait is shorter than any round trip: ended before ZooKeeper answered, it is "not
				// granted", never a LockException; granted, it is released.
				model.hold(model.acquire(request));
			});
			Thread timeout = run.start("timeout", () -> timeOut(model, waiting));
			Thread holder = run.start("holder", first::release);
			run.join(holder, timeout);
			// The holder is gone: a wait not given up is granted, or ends now.
			timeOut(model, waiting);
			run.join(waiter);
		});
	}

	@Test
	void asynchronousRequestsCancelledWhileTheTurnMovesOnLeaveNothingBehind() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			CompletableFuture<Optional<RegistryGrant>> first = model.submit(model.async(LockMode.EXCLUSIVE));
			CompletableFuture<Optional<RegistryGrant>> second = model.submit(model.async(LockMode.EXCLUSIVE));
			run.start("releaser", () -> model.hold(first.join()));
			run.start("canceller", () -> {
				if (!second.cancel(false)) {
					// Granted before the cancellation: released as any grant.
					model.hold(second.join());
				}
			});
			run.start("thread", () -> model.hold(model.acquire(model.request(LockMode.EXCLUSIVE))));
		});
	}

	@Test
	void ownPermitRequestsDrainInTurnWhileOneGivesUpAndNoneHoldsTwoPermitsOfOne() {
		// Three asynchronous permits of a semaphore of one queue on its internal mutex one behind the
		// other: each learns that it is first from the delete of its own granted predecessor (an
		// exists, no listing), while the middle one is cancelled, before, as or after it is granted.
		explore(false, SCHEDULES, LocalQueueModel::oneAttemptPermit, (run) -> {
			LocalQueueModel model = run.model;
			CompletableFuture<Optional<RegistryGrant>> first = model.submit(model.asyncPermit());
			CompletableFuture<Optional<RegistryGrant>> second = model.submit(model.asyncPermit());
			CompletableFuture<Optional<RegistryGrant>> third = model.submit(model.asyncPermit());
			run.start("releaser", () -> model.hold(first.join()));
			run.start("canceller", () -> {
				if (!second.cancel(false)) {
					// Granted before the cancellation: released as any grant.
					model.hold(second.join());
				}
			});
			run.start("third", () -> model.hold(third.join()));
		});
	}

}
