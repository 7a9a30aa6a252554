package io.github.zklock.curator;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.spi.LockCondition;
import io.github.zklock.spi.LockConditions;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.Interleavings.explore;
import static io.github.zklock.curator.Interleavings.twiceFoundAt;
import static io.github.zklock.curator.LocalQueueModel.PATH;
import static io.github.zklock.curator.LocalQueueModel.check;

/**
 * The distributed condition ({@link LockCondition} on {@link ConditionQueues}) explored by Lincheck's
 * model checker on the in-memory ZooKeeper of {@link LocalQueueModel}: awaits, signals and the
 * lock's releases and grants of one key interleaved on one JVM. Each thread holds the key through
 * its own {@link Holds} (EXCLUSIVE, reentrant, the model's grants), as a lock view keeps a thread's
 * holds for its condition. The scenarios: a signal sent once the waiter let the lock go is never
 * lost (at any point of the await, and right between the waiter's release and its wait); a single
 * signal wakes the longest waiter; {@code signalAll} wakes every waiter there is; a waiter whose
 * session expires while it waits fails as lost, without the lock, and its signaller ends; a signal
 * that went to a waiter lost with its session is passed on; a waiter that leaves the queue (its time
 * ran out) before a signal, between its listing and its delete, or after its delete is either left
 * or signalled, never both nor neither, and a signal that finds it gone goes to the next waiter; a
 * waiter whose lock is lost between {@code await}'s check and its waiter's create fails as lost,
 * rather than waiting in the next session for a signal that came before it queued; a waiter lost
 * once its znode's deletion was delivered does not delete it again.
 *
 * <p>Besides the invariants every scenario of the model asserts (no untold overlap of the holders
 * inside the critical section, every znode, the waiters' too, deleted once by the application or
 * gone with its session, none left, no request stalled, the key free at the end), each asserts that
 * an {@code await} that returns holds the lock again, every hold it had. A lost wake-up shows as a
 * thread that never ends, which the model checker reports as hung. Scenarios force an order by
 * starting a thread where its turn comes (from a hook of the holds: right after an await's check or
 * its release), not by threads that wait long for each other: the model checker counts each wake-up
 * of a waiting thread, spinning or parked, as a loop iteration, and reports a thread past its loop
 * bound (50 iterations) as hung. The few waits left, on the in-memory ZooKeeper's state
 * ({@link #spinUntil}) or on a point ({@link #waitFor}), are short. The model has no spurious
 * wake-up (a waiter's watch finds its znode gone only once deleted), and explores no timed wait: a
 * wait whose time runs out is driven through the SPI ({@link LockConditions.Waiter#leave()}).
 */
@ExtendWith(InterleavingsExtension.class)
class ConditionInterleavingTests {

	/**
	 * Transform the condition's classes before the first test, whose first schedule would otherwise
	 * pay for it (see {@link Interleavings#warmUp}): each kind of step of a condition, on one thread,
	 * none that waits (a waiter is looked at, not waited for).
	 */
	@BeforeAll
	static void transformTheConditionClasses() {
		Interleavings.warmUp((run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			Holds holds = new Holds(model);
			holds.lock();
			holds.lock();
			LockCondition condition = holds.condition(conditions);
			try {
				condition.awaitNanos(0);
				LockConditions.Waiter signalled = conditions.enqueue(PATH, LockMode.EXCLUSIVE);
				condition.signal();
				signalled.await(0);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
			conditions.enqueue(PATH, LockMode.EXCLUSIVE).leave();
			conditions.enqueue(PATH, LockMode.EXCLUSIVE);
			condition.signalAll();
			once(() -> reach(point())).run();
			waitFor(CompletableFuture.completedFuture(null));
			holds.releaseAll().reacquire();
			holds.unlockAll();
		});
	}

	/**
	 * The waiter checks the flag under the lock, holding it twice, and awaits while it is false;
	 * the signaller takes the lock, sets the flag, signals and lets the lock go, at any point of the
	 * waiter's turn: before the waiter checked the flag (it then sees it set), as the waiter queues
	 * and lets the lock go, while it waits. Each await returns with both holds taken again.
	 */
	@Test
	void signalSentOnceTheWaiterLetTheLockGoIsNeverLost() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicBoolean ready = new AtomicBoolean();
			run.start("waiter", () -> awaitReady(new Holds(model), conditions, ready, 2));
			run.start("signaller", () -> signalReady(new Holds(model), conditions, ready));
		});
	}

	/**
	 * The signal comes right between the waiter's release and its wait: the signaller asks for the
	 * lock once the waiter found the flag false, and the waiter is held up right after it let the
	 * lock go until the signaller has signalled (a thread paused there). Queued before its release,
	 * the waiter is found by the signal and wakes; queued after, it would wait forever.
	 */
	@Test
	void signalBetweenTheWaitersReleaseAndItsWaitIsNotLost() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicBoolean ready = new AtomicBoolean();
			CompletableFuture<Void> signalled = point();
			run.start("waiter", () -> {
				Holds holds = new Holds(model);
				holds.afterRelease = () -> waitFor(signalled);
				LockCondition condition = holds.condition(conditions);
				holds.lock();
				holds.inside();
				// Asks for the lock now: granted once the waiter let it go.
				run.start("signaller", () -> {
					Holds signaller = new Holds(model);
					signaller.lock();
					signaller.inside();
					ready.set(true);
					signaller.condition(conditions).signal();
					reach(signalled);
					signaller.outside();
					signaller.unlockAll();
				});
				holds.outside();
				condition.awaitUninterruptibly();
				holds.heldAgain(1);
				holds.inside();
				check(ready.get(), "woken before the flag was set");
				holds.outside();
				holds.unlockAll();
			});
		});
	}

	/**
	 * Two waiters queue in a known order (the second starts once the first is queued and let the
	 * lock go), then one signal is sent once both are queued: the first waiter wakes, and the second
	 * is still queued when it does. Each waiter awaits once, and once woken passes a signal on, so
	 * that every schedule ends whoever was woken first.
	 */
	@Test
	void signalWakesTheLongestWaiter() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicReference<String> wokenFirst = new AtomicReference<>();
			Runnable signaller = () -> {
				Holds holds = new Holds(model);
				holds.lock();
				check(waiters(model).size() == 2, "signalled with the waiters " + waiters(model));
				holds.condition(conditions).signal();
				holds.unlockAll();
			};
			Runnable second = () -> awaitOnceThenSignal(model, conditions, "second", () -> run.start("signaller", signaller),
					wokenFirst);
			run.start("first", () -> awaitOnceThenSignal(model, conditions, "first", () -> run.start("second", second), wokenFirst));
			run.joinAll();
			check("first".equals(wokenFirst.get()), "the signal woke the " + wokenFirst.get() + " waiter, not the longest one");
		});
	}

	/**
	 * Two waiters queue, each awaiting while the flag is false (the second starts once the first is
	 * queued); once both are queued, the signaller sets the flag and signals all: both wake (neither
	 * is left waiting for a signal that never comes), and no waiter znode is left once
	 * {@code signalAll} returned.
	 */
	@Test
	void signalAllWakesEveryWaiterThere() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicBoolean ready = new AtomicBoolean();
			Runnable signaller = () -> {
				Holds holds = new Holds(model);
				holds.lock();
				holds.inside();
				ready.set(true);
				holds.condition(conditions).signalAll();
				// Nobody queues while the lock is held: every waiter there was is woken.
				check(waiters(model).isEmpty(), "waiters left after signalAll: " + waiters(model));
				holds.outside();
				holds.unlockAll();
			};
			Runnable second = () -> awaitReady(queuedThen(new Holds(model), () -> run.start("signaller", signaller)),
					conditions, ready, 1);
			run.start("first", () -> awaitReady(queuedThen(new Holds(model), () -> run.start("second", second)),
					conditions, ready, 1));
		});
	}

	/**
	 * The session expires once the waiter's znode is there (its client hears of the expiry through
	 * the waiter's watch; the grants are told as the registry's connection-state listener tells
	 * them, the condition queues are not, so that the watch alone must end the wait); the signaller
	 * comes after the expiry, in the new session. The waiter, holding the lock twice, fails with
	 * {@link LockLostException}, its holds given up and none held; it never returns as if it held the
	 * lock. The signaller ends: its signal finds no waiter.
	 */
	@Test
	void waiterWhoseSessionExpiresWhileItWaitsIsLostWithoutTheLock() {
		explore(LockMode.EXCLUSIVE, true, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicBoolean ready = new AtomicBoolean();
			AtomicBoolean lost = new AtomicBoolean();
			Runnable expiry = () -> {
				// Its znode comes next: expired as it releases the lock, or while it waits.
				spinUntil(() -> !waiters(model).isEmpty());
				model.zooKeeper.expireSession();
				// What the registry's listener does for the grants on LOST.
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
				run.start("signaller", () -> signalReady(new Holds(model), conditions, ready));
			};
			run.start("waiter", () -> {
				Holds holds = new Holds(model);
				holds.afterCheck = once(() -> run.start("expiry", expiry));
				try {
					awaitReady(holds, conditions, ready, 2);
				}
				catch (LockLostException ex) {
					check(holds.abandoned && holds.count() == 0, "lost, and the holds not given up: " + holds.count());
					lost.set(true);
				}
			});
			run.joinAll();
			check(lost.get(), "the waiter's session expired while it waited, and it returned");
		});
	}

	/**
	 * The session expires as a signal comes: the waiter of this application is queued first, a
	 * waiter of another application (a znode of another session) behind it, and the signaller
	 * signals once, again when its own grant is lost with the session before it signalled; the
	 * registry's connection-state listener tells the grants and the condition queues. The signal
	 * reaches a waiter that can act on it: this application's waiter returns holding the lock again
	 * (in the new session, or told it lost it since), or fails as lost once the signal it took could
	 * not give it the lock back; or else the other application's waiter is woken (its znode deleted),
	 * by the signal or passed on by this application's waiter lost in its wait (its session ended
	 * before it saw the signal that went to it, say).
	 */
	@Test
	void signalToAWaiterLostWithItsSessionIsPassedOn() {
		explore(LockMode.EXCLUSIVE, true, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicReference<String> other = new AtomicReference<>();
			AtomicBoolean signalTaken = new AtomicBoolean();
			Runnable expiry = () -> {
				model.zooKeeper.expireSession();
				// What the registry's listener does on LOST.
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
				conditions.sessionLost();
			};
			Runnable signaller = () -> {
				Holds holds = new Holds(model);
				while (true) {
					try {
						holds.lock();
						holds.condition(conditions).signal();
						holds.unlockAll();
						return;
					}
					catch (LockLostException ex) {
						// Lost with the session before its signal: signals again in the new one.
						holds.unlockAll();
					}
				}
			};
			Runnable otherApplication = () -> {
				spinUntil(() -> !waiters(model).isEmpty());
				other.set(model.zooKeeper.otherParticipant(ConditionQueues.queuePath(PATH), ConditionQueues.WAITER_NAME));
				run.start("expiry", expiry);
				run.start("signaller", signaller);
			};
			run.start("waiter", () -> {
				Holds holds = new Holds(model);
				holds.afterCheck = once(() -> run.start("other", otherApplication));
				holds.lock();
				holds.inside();
				holds.outside();
				try {
					holds.condition(conditions).awaitUninterruptibly();
					heldAgainOrTold(holds, 1);
					holds.inside();
					holds.outside();
					signalTaken.set(true);
				}
				catch (LockLostException ex) {
					check(holds.abandoned && holds.count() == 0, "lost, and the holds not given up: " + holds.count());
					// Woken, and lost as it took the lock again: its thread was told, with the signal.
					signalTaken.set(holds.reacquireFailed);
				}
				holds.unlockAll();
			});
			run.joinAll();
			check(signalTaken.get() || !waiters(model).contains(name(other.get())),
					"the signal reached neither this application's waiter nor the other's");
			model.zooKeeper.deleteAsOther(other.get());
		});
	}

	/**
	 * A signal the waiter sees only once its session ended: while the client's event thread is busy
	 * in an answer, another application signals this application's waiter (deletes its znode, the
	 * longest waiter's) and the session expires, so that the event thread delivers the deletion
	 * after the session changed; then the registry's listener is told. The waiter fails as lost
	 * (the deletion came after its session ended), without the lock, and the signal it may have
	 * taken is passed on: the other application's waiter queued behind it is woken (its znode
	 * deleted) by the time the event thread is done.
	 */
	@Test
	void signalSeenOnlyAfterTheSessionEndedIsPassedOn() {
		signalSeenOnlyAfterTheSessionEnded(false, Interleavings.SCHEDULES);
	}

	/**
	 * As {@link #signalSeenOnlyAfterTheSessionEndedIsPassedOn()}, the signal sent by this
	 * application (its signal's delete, applied before the expiry): the waiter's znode must be
	 * deleted once by the application: the lost waiter, whose watch told it the znode was deleted,
	 * sends no delete of its own.
	 */
	@Test
	void ownSignalSeenOnlyAfterTheSessionEndedDeletesTheWaiterOnce() {
		signalSeenOnlyAfterTheSessionEnded(true, twiceFoundAt(2));
	}

	private static void signalSeenOnlyAfterTheSessionEnded(boolean ownSignal, int schedules) {
		explore(LockMode.EXCLUSIVE, true, schedules, (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicBoolean lost = new AtomicBoolean();
			Runnable client = () -> {
				String longest = ConditionQueues.queuePath(PATH) + "/" + waiters(model).get(0);
				String other = model.zooKeeper.otherParticipant(ConditionQueues.queuePath(PATH), ConditionQueues.WAITER_NAME);
				// An answer that keeps the client's event thread (this one) busy while the signal's
				// delete is applied and the session expires: the deletion is delivered after.
				model.zooKeeper.exists(PATH, (code, exists) -> {
					if (ownSignal) {
						// What this application's signal sends, once it listed the waiters.
						model.zooKeeper.deleteOnce(longest, (deleted, nothing) -> {
						});
					}
					else {
						model.zooKeeper.deleteAsOther(longest);
					}
					model.zooKeeper.expireSession();
				});
				check(!waiters(model).contains(name(other)), "the signal the lost waiter may have taken was not passed on");
				// What the registry's listener does on LOST.
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
				conditions.sessionLost();
				model.zooKeeper.deleteAsOther(other);
			};
			run.start("waiter", () -> {
				// Queued and released: the waiter waits, and the client goes on.
				Holds holds = queuedThen(new Holds(model), () -> run.start("client", client));
				holds.lock();
				holds.inside();
				holds.outside();
				try {
					holds.condition(conditions).awaitUninterruptibly();
					heldAgainOrTold(holds, 1);
				}
				catch (LockLostException ex) {
					check(holds.abandoned && holds.count() == 0, "lost, and the holds not given up: " + holds.count());
					lost.set(true);
				}
				holds.unlockAll();
			});
			run.joinAll();
			check(lost.get(), "the waiter's session ended before it saw the signal, and it returned");
		});
	}

	/**
	 * The leaver leaves the queue (its time ran out) before the signal: it left ({@code leave()}
	 * says so), and the signal goes to the next waiter. See {@link #leaveAsASignalComes}.
	 */
	@Test
	void waiterLeavingBeforeTheSignalIsLeftAndTheSignalWakesTheNext() {
		leaveAsASignalComes(Leave.BEFORE_THE_SIGNAL);
	}

	/**
	 * The leaver leaves the queue between the signal's listing, which still shows it, and the
	 * signal's delete (the connection suspended meanwhile, so that the listing and the leaver's
	 * delete are kept and applied in that order): it left, and the signal, finding it gone, goes on
	 * to the next waiter. See {@link #leaveAsASignalComes}.
	 */
	@Test
	void signalFindingTheLeaverGoneWakesTheNext() {
		leaveAsASignalComes(Leave.BETWEEN_THE_SIGNALS_LISTING_AND_ITS_DELETE);
	}

	/**
	 * The leaver leaves the queue once the signal's delete is sent, before the leaver heard of it
	 * (the connection suspended again once the signal's listing was answered, so that the signal's
	 * delete and the leaver's are kept and applied in that order, and the deletion is delivered once
	 * the leaver's own delete was sent): it was signalled ({@code leave()} says so), and the next
	 * waiter was not woken by that signal. See {@link #leaveAsASignalComes}.
	 */
	@Test
	void waiterLeavingAfterTheSignalsDeleteIsSignalled() {
		leaveAsASignalComes(Leave.AFTER_THE_SIGNALS_DELETE);
	}

	/** When the leaver leaves the queue, against the signal's requests. */
	private enum Leave {

		BEFORE_THE_SIGNAL, BETWEEN_THE_SIGNALS_LISTING_AND_ITS_DELETE, AFTER_THE_SIGNALS_DELETE

	}

	/**
	 * The leaver queues through the SPI, another application's waiter queues behind it (the next
	 * waiter: a znode of another session, woken when deleted), the leaver lets the lock go and
	 * leaves the queue, as a wait whose time ran out does ({@link LockCondition}'s timed await), and
	 * the signaller sends one signal. Exactly one of them holds: the leaver left, and the signal went
	 * on to the next waiter; or the signal woke the leaver ({@code leave()} says so), and the next
	 * waiter was not woken by that signal. A leaver that was signalled passes a signal on, so that
	 * the next waiter is woken in every schedule. Where the connection is suspended, the client is
	 * not told (a pause shorter than Curator reports): requests are kept, and applied once it is
	 * back, in order.
	 * @param leave when the leaver leaves
	 */
	private static void leaveAsASignalComes(Leave leave) {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			InMemoryZooKeeper zooKeeper = model.zooKeeper;
			ConditionQueues conditions = conditions(model);
			AtomicReference<String> next = new AtomicReference<>();
			AtomicBoolean left = new AtomicBoolean();
			AtomicBoolean nextWokenBySignal = new AtomicBoolean();
			Runnable signaller = () -> {
				Holds holds = new Holds(model);
				holds.lock();
				holds.checkHeld();
				if (leave != Leave.BEFORE_THE_SIGNAL) {
					// Its listing is kept.
					zooKeeper.suspend();
				}
				check(conditions.signal(PATH), "the signal found no waiter, with the next one queued");
				// Nobody else deletes the next waiter's znode while the lock is held.
				nextWokenBySignal.set(!waiters(model).contains(name(next.get())));
				holds.unlockAll();
			};
			run.start("leaver", () -> {
				Holds holds = new Holds(model);
				holds.lock();
				holds.inside();
				holds.outside();
				LockConditions.Waiter waiter = conditions.enqueue(PATH, LockMode.EXCLUSIVE);
				String name = waiterZnodes(model).get(0);
				next.set(zooKeeper.otherParticipant(ConditionQueues.queuePath(PATH), ConditionQueues.WAITER_NAME));
				if (leave != Leave.BEFORE_THE_SIGNAL) {
					// Asks for the lock now: handed over as the leaver lets it go.
					run.start("signaller", signaller);
				}
				LockCondition.Released released = holds.releaseAll();
				if (leave == Leave.BETWEEN_THE_SIGNALS_LISTING_AND_ITS_DELETE) {
					// The signal's listing is kept; the leaver's delete is kept behind it.
					spinUntil(() -> zooKeeper.keptRequests() >= 1);
					run.start("connection", () -> {
						spinUntil(() -> zooKeeper.keptRequests() >= 2);
						zooKeeper.reconnect();
					});
				}
				else if (leave == Leave.AFTER_THE_SIGNALS_DELETE) {
					// The signal's listing is kept, then answered; its delete is kept, or went through.
					spinUntil(() -> zooKeeper.keptRequests() >= 1);
					zooKeeper.reconnect();
					zooKeeper.suspend();
					spinUntil(() -> zooKeeper.keptRequests() >= 1 || !waiters(model).contains(name));
					if (zooKeeper.keptRequests() >= 1) {
						// The leaver's delete is kept behind the signal's.
						run.start("connection", () -> {
							spinUntil(() -> zooKeeper.keptRequests() >= 2);
							zooKeeper.reconnect();
						});
					}
				}
				boolean leftQueue = waiter.leave();
				if (!zooKeeper.connected()) {
					// The signal's delete went through before the connection was suspended again.
					zooKeeper.reconnect();
				}
				try {
					check(waiter.await(0) != leftQueue, "leave() returned " + leftQueue + ", and the waiter says it was "
							+ (leftQueue ? "" : "not ") + "signalled");
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
				left.set(leftQueue);
				if (leave == Leave.BEFORE_THE_SIGNAL) {
					run.start("signaller", signaller);
				}
				released.reacquire();
				holds.heldAgain(1);
				holds.inside();
				holds.outside();
				if (!leftQueue) {
					// It took the signal: another for the next waiter.
					holds.condition(conditions).signal();
				}
				holds.unlockAll();
			});
			run.joinAll();
			check(left.get() == nextWokenBySignal.get(), (left.get() ? "the waiter left the queue, and the signal did not wake the next one"
					: "the signal woke the waiter, and the next one too"));
			check(left.get() == (leave != Leave.AFTER_THE_SIGNALS_DELETE),
					(left.get() ? "left the queue after the signal's delete" : "signalled, though it left the queue first"));
			check(!waiters(model).contains(name(next.get())), "the next waiter was never woken");
		});
	}

	/**
	 * The waiter's lock is lost before its waiter znode is created: the waiter found the flag false
	 * under the lock and is held up right after {@code await} checked its holds (a thread paused
	 * there), its session expires meanwhile (its lock znode goes with it), another application takes
	 * the lock, sets the flag and signals (no waiter is queued yet) and lets the lock go; then the
	 * registry is told (the grants and the condition queues), and the waiter goes on: it queues in
	 * the new session, where no signal will come. A wait whose lock's grant was lost fails with
	 * {@link LockLostException} (its holds checked again once it is queued), and never waits for a
	 * signal that came before it queued (a hang).
	 */
	@Test
	void lockLostBeforeTheWaiterQueuedEndsTheWait() {
		explore(LockMode.EXCLUSIVE, true, twiceFoundAt(2), (run) -> {
			LocalQueueModel model = run.model;
			ConditionQueues conditions = conditions(model);
			AtomicBoolean ready = new AtomicBoolean();
			CompletableFuture<Void> otherDone = point();
			AtomicBoolean lost = new AtomicBoolean();
			Runnable expiryAndOther = () -> {
				model.zooKeeper.expireSession();
				// Another application takes the lock: first, once the waiter's lock znode went.
				String lock = model.zooKeeper.otherParticipant(PATH, "lock-");
				check(Protocol.MUTEX.first(model.zooKeeper.childrenOf(PATH), name(lock)), "not first once the session expired");
				ready.set(true);
				// Its signal: the longest waiter's znode deleted, when there is one.
				List<String> waiting = waiters(model);
				if (!waiting.isEmpty()) {
					model.zooKeeper.deleteAsOther(ConditionQueues.queuePath(PATH) + "/" + waiting.get(0));
				}
				model.zooKeeper.deleteAsOther(lock);
				// What the registry's listener does on LOST, once the client hears of the expiry.
				model.heldLocks.changed(ConnectionState.LOST, model.zooKeeper.sessionInstance());
				conditions.sessionLost();
				reach(otherDone);
			};
			run.start("waiter", () -> {
				Holds holds = new Holds(model);
				holds.lock();
				holds.inside();
				check(!ready.get(), "the other application came first");
				holds.outside();
				holds.afterCheck = once(() -> {
					run.start("expiry-and-other", expiryAndOther);
					waitFor(otherDone);
				});
				try {
					holds.condition(conditions).awaitUninterruptibly();
					heldAgainOrTold(holds, 1);
				}
				catch (LockLostException ex) {
					lost.set(true);
				}
				holds.unlockAll();
			});
			run.joinAll();
			check(lost.get(), "the waiter's lock was lost before it queued, and it returned");
		});
	}

	/** The condition queues of the model's application, the key being the lock path itself. */
	private static ConditionQueues conditions(LocalQueueModel model) {
		return new ConditionQueues(model.zooKeeper, (key) -> key, (what, code) -> new LockException(what + code));
	}

	/**
	 * Take the lock a number of times, and await under it while the flag is false; once it is set,
	 * let the lock go. Inside the critical section whenever it holds the lock.
	 */
	private static void awaitReady(Holds holds, ConditionQueues conditions, AtomicBoolean ready, int count) {
		LockCondition condition = holds.condition(conditions);
		for (int taken = 0; taken < count; taken++) {
			holds.lock();
		}
		holds.inside();
		while (!ready.get()) {
			holds.outside();
			condition.awaitUninterruptibly();
			holds.heldAgain(count);
			holds.inside();
		}
		holds.outside();
		holds.unlockAll();
	}

	/** Take the lock, set the flag, signal and let the lock go. */
	private static void signalReady(Holds holds, ConditionQueues conditions, AtomicBoolean ready) {
		holds.lock();
		holds.inside();
		ready.set(true);
		holds.condition(conditions).signal();
		holds.outside();
		holds.unlockAll();
	}

	/**
	 * Take the lock, await once (a step run once queued and released), and once woken (the lock
	 * held again) record the first to wake and check that one waiter at most was woken by the one
	 * signal; then signal the next waiter.
	 */
	private static void awaitOnceThenSignal(LocalQueueModel model, ConditionQueues conditions, String name,
			Runnable queued, AtomicReference<String> wokenFirst) {
		Holds holds = queuedThen(new Holds(model), queued);
		LockCondition condition = holds.condition(conditions);
		holds.lock();
		holds.inside();
		holds.outside();
		condition.awaitUninterruptibly();
		holds.heldAgain(1);
		holds.inside();
		if (wokenFirst.compareAndSet(null, name)) {
			// Nobody queues or signals while the lock is held: the other waiter is still queued.
			check(waiters(model).size() == 1, "one signal woke more than one waiter: " + waiters(model));
		}
		holds.outside();
		condition.signal();
		holds.unlockAll();
	}

	/**
	 * The lock is held again after an await that a session's expiry may follow: every hold, each
	 * HELD or told LOST since (a grant is HELD on a znode gone with its session until told: no
	 * check that its znode is there).
	 */
	private static void heldAgainOrTold(Holds holds, int count) {
		check(holds.count() == count, "await returned with " + holds.count() + " holds of " + count);
		for (RegistryGrant grant : holds.grants) {
			check(grant.state() == LockState.HELD || grant.state() == LockState.LOST, "await returned with a grant " + grant.state());
		}
	}

	/** Holds whose first await runs a step once queued and released: a thread started there, say. */
	private static Holds queuedThen(Holds holds, Runnable step) {
		holds.afterRelease = once(step);
		return holds;
	}

	/** A step run the first time only. */
	private static Runnable once(Runnable step) {
		AtomicBoolean done = new AtomicBoolean();
		return () -> {
			if (done.compareAndSet(false, true)) {
				step.run();
			}
		};
	}

	/** A point of a scenario, which a thread waits for blocking (briefly: see the class comment). */
	private static CompletableFuture<Void> point() {
		return new CompletableFuture<>();
	}

	private static void reach(CompletableFuture<Void> point) {
		point.complete(null);
	}

	private static void waitFor(CompletableFuture<Void> point) {
		point.join();
	}

	/** Spin until the in-memory ZooKeeper's state changes: only right before it does (see the class comment). */
	private static void spinUntil(BooleanSupplier condition) {
		while (!condition.getAsBoolean()) {
			Thread.yield();
		}
	}

	/** The names of the waiter znodes in the key's queue now. */
	private static List<String> waiters(LocalQueueModel model) {
		List<String> waiters = new ArrayList<>();
		for (String child : model.zooKeeper.childrenOf(ConditionQueues.queuePath(PATH))) {
			if (ConditionQueues.isWaiter(child)) {
				waiters.add(child);
			}
		}
		return waiters;
	}

	/** The names of the waiter znodes the application created so far, in order. */
	private static List<String> waiterZnodes(LocalQueueModel model) {
		List<String> waiters = new ArrayList<>();
		for (String node : model.zooKeeper.created()) {
			if (ConditionQueues.isWaiter(name(node))) {
				waiters.add(name(node));
			}
		}
		return waiters;
	}

	private static String name(String path) {
		return path.substring(path.lastIndexOf('/') + 1);
	}

	/**
	 * One thread's holds of the key (EXCLUSIVE, reentrant: the model's grants, outermost first), as
	 * a lock view keeps a thread's holds for its condition: used by its thread only.
	 */
	private static final class Holds implements LockCondition.Holder {

		private final LocalQueueModel model;

		private final ArrayDeque<RegistryGrant> grants = new ArrayDeque<>();

		/** Run once the holds are found held ({@link #checkHeld()}): a scenario holds the thread up there. */
		Runnable afterCheck = () -> {
		};

		/** Run once every hold is released ({@link #releaseAll()}): a scenario holds the thread up there. */
		Runnable afterRelease = () -> {
		};

		/** Whether the condition gave the holds up ({@link LockCondition.Released#abandon()}). */
		boolean abandoned;

		/** Whether taking the holds again failed ({@link LockCondition.Released#reacquire()}). */
		boolean reacquireFailed;

		Holds(LocalQueueModel model) {
			this.model = model;
		}

		/** A condition of the key whose holds are these. */
		LockCondition condition(ConditionQueues conditions) {
			return new LockCondition(conditions, PATH, LockMode.EXCLUSIVE, this);
		}

		void lock() {
			this.grants.addLast(this.model.acquire(this.model.request(LockMode.EXCLUSIVE)).orElseThrow());
		}

		/** Release every grant, latest first, held or lost. */
		void unlockAll() {
			while (!this.grants.isEmpty()) {
				this.grants.removeLast().release();
			}
		}

		int count() {
			return this.grants.size();
		}

		/** Enter the critical section with the outermost grant (the model checks no other holder is inside). */
		void inside() {
			this.model.enter(this.grants.getFirst());
		}

		void outside() {
			this.model.leave(this.grants.getFirst());
		}

		/** The lock is held again after an await: every hold, each HELD, on a znode that is there. */
		void heldAgain(int holds) {
			check(this.grants.size() == holds, "await returned with " + this.grants.size() + " holds of " + holds);
			for (RegistryGrant grant : this.grants) {
				check(grant.state() == LockState.HELD, "await returned with a grant " + grant.state());
				this.model.checkZnodeThere(grant);
			}
		}

		@Override
		public void checkHeld() {
			RegistryGrant latest = this.grants.peekLast();
			if (latest == null) {
				throw new IllegalMonitorStateException(Thread.currentThread().getName() + " does not hold " + PATH);
			}
			latest.checkHeld();
			this.afterCheck.run();
		}

		@Override
		public LockCondition.Released releaseAll() {
			int count = this.grants.size();
			unlockAll();
			this.afterRelease.run();
			return new LockCondition.Released() {

				@Override
				public void reacquire() {
					try {
						for (int taken = 0; taken < count; taken++) {
							lock();
						}
					}
					catch (RuntimeException ex) {
						Holds.this.reacquireFailed = true;
						unlockAll();
						throw ex;
					}
				}

				@Override
				public void abandon() {
					// Released already, and none taken again: nothing to unlock.
					Holds.this.abandoned = true;
				}

			};
		}

	}

}
