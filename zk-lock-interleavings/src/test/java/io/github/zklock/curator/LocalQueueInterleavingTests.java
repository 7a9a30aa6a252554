package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.apache.curator.framework.state.ConnectionState;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.LocalQueueModel.check;

/**
 * The interleavings of one key's local queue ({@link LockKey}) and its znodes' acquisitions
 * ({@link ZnodeAcquisition}) explored systematically by Lincheck's model checker, on an in-memory
 * ZooKeeper ({@link LocalQueueModel}), so that no network timing is involved: acquire, re-enter,
 * release, hand over, give up (a wait's end, a cancellation), revocation, ceiling, a suspended
 * connection and session loss, for EXCLUSIVE, WRITE and READ under WRITE, synchronous and
 * asynchronous, and permits of one application queued behind each other on a semaphore's
 * internal mutex. Each test asserts the queue's invariants (see {@link LocalQueueModel}) in every
 * schedule it explores, and that the key is free afterwards (a one-attempt request is granted: no
 * stalled key); a failure prints the schedule that broke one. {@code scripts/interleaving-reverts.sh}
 * shows what they find when a fix is taken out.
 */
class LocalQueueInterleavingTests {

	/**
	 * Schedules explored by a test whose defect, when its fix is taken out, is found within a few
	 * dozen (see {@code scripts/interleaving-reverts.sh}), and by the tests that found none yet.
	 * {@code -Dzklock.interleavings=N} explores N schedules in every test instead.
	 */
	private static final int SCHEDULES = 60;

	/** Schedules explored by {@link #ceilingThatFallsAsItsGrantIsReleasedLeavesTheTurnHandedOverAlone}. */
	private static final int CEILING_FALLS_SCHEDULES = 300;

	/** Schedules explored by every test instead of its own, when set. */
	private static final @Nullable Integer SCHEDULES_OVERRIDE = Integer.getInteger("zklock.interleavings");

	/**
	 * Whether each schedule prints a line as it starts: {@code scripts/interleaving-reverts.sh}
	 * counts them to tell at which schedule a defect was found.
	 */
	private static final boolean TRACE_SCHEDULES = Boolean.getBoolean("zklock.interleavings.trace");

	/** The library's loggers, quiet while the model checker runs: it would trace every log call. */
	private static final Logger LIBRARY_LOGGER = (Logger) LoggerFactory.getLogger("io.github.zklock");

	private static Level libraryLevel;

	@BeforeAll
	static void quietLibraryLoggers() {
		// Lincheck warns of each lambda whose captured fields it cannot track; those are not shared.
		System.setProperty("lincheck.logLevel", "ERROR");
		libraryLevel = LIBRARY_LOGGER.getLevel();
		LIBRARY_LOGGER.setLevel(Level.ERROR);
	}

	/**
	 * Explore one schedule of a small scenario before the tests. The model checker transforms a
	 * class when a schedule first uses it, inside that schedule, and reports any schedule that runs
	 * longer than 30 s as hung (a fixed bound of Lincheck's): the first schedule of a JVM, which
	 * transforms the library, the model and the JDK classes they use (some 15 s on two idle cores),
	 * passed that bound when the build kept both cores busy, and the first test failed as hung.
	 * This schedule takes that cost instead. It has nothing to wait for (one request at a time,
	 * each granted), so a report that it hung can only be that bound: it is explored again, at
	 * most three times, each time with fewer classes left to transform.
	 */
	@BeforeAll
	static void transformTheClassesOnce() {
		for (int attempt = 1;; attempt++) {
			try {
				Lincheck.runConcurrentTest(1, () -> runScenario((model) -> model.oneAttempt(LockMode.WRITE), false,
						LocalQueueInterleavingTests::everyKindOfStep));
				return;
			}
			catch (AssertionError ex) {
				if (attempt == 3 || !String.valueOf(ex.getMessage()).contains("has hung")) {
					throw ex;
				}
				System.err.println("The warm-up schedule was reported hung (attempt " + attempt + "): explored again");
			}
		}
	}

	/** A request of each kind, one after the other, with a thread, a timer and a permit. */
	private static void everyKindOfStep(Run run) {
		LocalQueueModel model = run.model;
		run.join(run.start("thread", () -> model.hold(model.acquire(model.request(LockMode.EXCLUSIVE)))));
		model.hold(model.submit(model.async(LockMode.WRITE)).join());
		model.hold(model.acquire(model.request(LockMode.READ, Duration.ofMillis(1))));
		model.runTimers();
		model.hold(model.submit(model.asyncPermit()).join());
		model.hold(model.acquire(model.oneAttempt(LockMode.EXCLUSIVE)));
	}

	@AfterAll
	static void restoreLibraryLoggers() {
		LIBRARY_LOGGER.setLevel(libraryLevel);
	}

	@Test
	void revocationAsTheTurnIsHandedOverLeavesNoTwoHoldersAndNoStalledKey() {
		explore(LockMode.EXCLUSIVE, false, (run) -> {
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
		explore(LockMode.EXCLUSIVE, false, (run) -> {
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
		explore(LockMode.EXCLUSIVE, false, (run) -> {
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
		explore(LockMode.EXCLUSIVE, false, (run) -> {
			LocalQueueModel model = run.model;
			String other = model.zooKeeper.otherParticipant(LocalQueueModel.PATH, "lock-");
			List<String> leftAtAnswer = new CopyOnWriteArrayList<>();
			run.start("thread", () -> {
				Waiter refused = model.oneAttempt(LockMode.EXCLUSIVE);
				// Whoever tells the refusal, the refused znode's delete was sent before (ZooKeeper
				// applies a session's requests in order: the next attempt never finds it).
				refused.thenAccept((granted) -> model.zooKeeper.ownZnodes()
					.stream()
					.filter((node) -> granted.isEmpty() && node.startsWith(LocalQueueModel.PATH + "/"))
					.forEach(leftAtAnswer::add));
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

	/** End a wait, if it has begun, as its time running out does. */
	private static void timeOut(LocalQueueModel model, AtomicReference<Waiter> waiting) {
		Waiter request = waiting.get();
		if (request != null) {
			model.timeOut(request);
		}
	}

	/**
	 * Explore a scenario: it starts its threads on a fresh model; then every thread is joined, the
	 * key must be free for a one-attempt request, no thread may have failed, and the model's
	 * invariants must hold.
	 * @param mode the mode of the last one-attempt request
	 * @param expiredSessions whether a session expires in the scenario (its znodes go without a delete)
	 */
	private static void explore(LockMode mode, boolean expiredSessions, Consumer<Run> scenario) {
		explore(mode, expiredSessions, SCHEDULES, scenario);
	}

	/**
	 * Explore a scenario with more or fewer schedules than the default.
	 * @param schedules how many schedules to explore
	 * @see #explore(LockMode, boolean, Consumer)
	 */
	private static void explore(LockMode mode, boolean expiredSessions, int schedules, Consumer<Run> scenario) {
		explore(expiredSessions, schedules, (model) -> model.oneAttempt(mode), scenario);
	}

	/**
	 * Explore a scenario whose last request, which finds the key free, is the given one.
	 * @see #explore(LockMode, boolean, Consumer)
	 */
	private static void explore(boolean expiredSessions, int schedules,
			Function<LocalQueueModel, Waiter> lastRequest, Consumer<Run> scenario) {
		Lincheck.runConcurrentTest((SCHEDULES_OVERRIDE != null) ? SCHEDULES_OVERRIDE : schedules, () -> {
			if (TRACE_SCHEDULES) {
				// Before the scenario starts its threads: no interleaving added. (A counter would not
				// do: the model checker restores the state it saw before each schedule.)
				System.err.println("SCHEDULE-STARTED");
			}
			runScenario(lastRequest, expiredSessions, scenario);
		});
	}

	/** One schedule: the scenario on a fresh model, then the checks every schedule ends with. */
	private static void runScenario(Function<LocalQueueModel, Waiter> lastRequest,
			boolean expiredSessions, Consumer<Run> scenario) {
		Run run = new Run(new LocalQueueModel());
		scenario.accept(run);
		run.joinAll();
		// Not stalled: the key is free for a one-attempt request.
		run.model.hold(Optional.of(run.model.acquire(lastRequest.apply(run.model)).orElseThrow()));
		check(run.failures.isEmpty(), "threads failed: " + run.failures);
		run.model.finish(expiredSessions);
	}

	/** One schedule of a scenario: its model, its threads, what failed in them. */
	private static final class Run {

		final LocalQueueModel model;

		final List<Thread> threads = new CopyOnWriteArrayList<>();

		final List<Throwable> failures = new CopyOnWriteArrayList<>();

		Run(LocalQueueModel model) {
			this.model = model;
		}

		/** Start a thread, named for the model checker's report, whose failure is kept. */
		Thread start(String name, Runnable body) {
			Thread thread = new Thread(() -> {
				try {
					body.run();
				}
				catch (Throwable ex) {
					this.failures.add(ex);
				}
			}, name);
			this.threads.add(thread);
			thread.start();
			return thread;
		}

		void joinAll() {
			join(this.threads.toArray(new Thread[0]));
		}

		void join(Thread... threads) {
			for (Thread thread : threads) {
				try {
					thread.join();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
			}
		}

	}

}
