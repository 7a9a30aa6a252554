package io.github.zklock.curator;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.jetbrains.lincheck.Lincheck;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

import io.github.zklock.LockMode;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.LocalQueueModel.check;

/**
 * How the systematic tests of the local queue ({@link LocalQueueInterleavingTests},
 * {@link LocalQueueEndInterleavingTests}) explore a scenario with Lincheck's model checker: each
 * schedule on a fresh {@link LocalQueueModel}, its threads joined, the key free afterwards for a
 * one-attempt request, no thread failed, the model's invariants checked.
 */
final class Interleavings {

	/**
	 * Schedules explored by a test that found none of the known defects (see
	 * {@code scripts/interleaving-reverts.sh}), and the fewest any test explores; a test that found
	 * one explores {@link #twiceFoundAt(int)}. {@code -Dzklock.interleavings=N} explores N schedules
	 * in every test instead.
	 */
	static final int SCHEDULES = 30;

	/**
	 * The schedules explored by a test that found a known defect, put back, at a given schedule
	 * ({@code scripts/interleaving-reverts.sh} prints it): twice that, and at least
	 * {@link #SCHEDULES}. The model checker explores schedules in the same order every run, so the
	 * margin is for changes of the code that move a defect's schedule further on.
	 * @param foundAt the schedule at which the defect was found (the latest, of several)
	 */
	static int twiceFoundAt(int foundAt) {
		return Math.max(SCHEDULES, 2 * foundAt);
	}

	/** Schedules explored by every test instead of its own, when set. */
	private static final @Nullable Integer SCHEDULES_OVERRIDE = Integer.getInteger("zklock.interleavings");

	/**
	 * Whether each schedule prints a line as it starts: {@code scripts/interleaving-reverts.sh}
	 * counts them to tell at which schedule a defect was found.
	 */
	private static final boolean TRACE_SCHEDULES = Boolean.getBoolean("zklock.interleavings.trace");

	/** The library's loggers, quiet while the model checker runs: it would trace every log call. */
	private static final Logger LIBRARY_LOGGER = (Logger) LoggerFactory.getLogger("io.github.zklock");

	private static @Nullable Level libraryLevel;

	private Interleavings() {
	}

	/**
	 * Before a class's tests: the library's loggers quiet, the classes transformed (see
	 * {@link #transformTheClassesOnce()}).
	 */
	static void prepare() {
		// Lincheck warns of each lambda whose captured fields it cannot track; those are not shared.
		System.setProperty("lincheck.logLevel", "ERROR");
		libraryLevel = LIBRARY_LOGGER.getLevel();
		LIBRARY_LOGGER.setLevel(Level.ERROR);
		transformTheClassesOnce();
	}

	/** After a class's tests: the library's loggers as they were. */
	static void restore() {
		LIBRARY_LOGGER.setLevel(libraryLevel);
	}

	/**
	 * Explore one schedule of a small scenario before a class's tests. The model checker transforms a
	 * class when a schedule first uses it, inside that schedule, and reports any schedule that runs
	 * longer than 30 s as hung (a fixed bound of Lincheck's): the first schedule of a JVM, which
	 * transforms the library, the model and the JDK classes they use (some 15 s on two idle cores),
	 * passed that bound when the build kept both cores busy, and the first test failed as hung.
	 * This schedule takes that cost instead. It has nothing to wait for (one request at a time,
	 * each granted), so a report that it hung can only be that bound: it is explored again, at
	 * most three times, each time with fewer classes left to transform.
	 */
	private static void transformTheClassesOnce() {
		warmUp(Interleavings::everyKindOfStep);
	}

	/**
	 * Explore one schedule of a class's own kinds of steps before its tests, as
	 * {@link #transformTheClassesOnce()} does for the steps every class takes, so that the classes
	 * only its scenarios use are transformed there, not in its first test's first schedule. The
	 * steps must have nothing to wait for, so that a report that it hung can only be Lincheck's
	 * bound: it is explored again, at most three times.
	 * @param steps the steps, on a fresh model, which must leave the key free
	 */
	static void warmUp(Consumer<Run> steps) {
		for (int attempt = 1;; attempt++) {
			try {
				Lincheck.runConcurrentTest(1, () -> runScenario((model) -> model.oneAttempt(LockMode.WRITE), false, steps));
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

	/**
	 * A request of each kind, one after the other, with a thread, a timer and a permit, and a wait
	 * given up behind a held grant: what the tests' schedules run, so that its classes are
	 * transformed here.
	 */
	private static void everyKindOfStep(Run run) {
		LocalQueueModel model = run.model;
		run.join(run.start("thread", () -> model.hold(model.acquire(model.request(LockMode.EXCLUSIVE)))));
		Optional<RegistryGrant> held = model.acquire(model.request(LockMode.EXCLUSIVE));
		Waiter givenUp = model.async(LockMode.EXCLUSIVE);
		model.submit(givenUp);
		model.timeOut(givenUp);
		model.hold(held);
		model.hold(model.submit(model.async(LockMode.WRITE)).join());
		model.hold(model.acquire(model.request(LockMode.READ, Duration.ofMillis(1))));
		model.runTimers();
		model.hold(model.submit(model.asyncPermit()).join());
		model.hold(model.acquire(model.oneAttempt(LockMode.EXCLUSIVE)));
	}

	/** End a wait, if it has begun, as its time running out does. */
	static void timeOut(LocalQueueModel model, AtomicReference<Waiter> waiting) {
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
	static void explore(LockMode mode, boolean expiredSessions, Consumer<Run> scenario) {
		explore(mode, expiredSessions, SCHEDULES, scenario);
	}

	/**
	 * Explore a scenario with more or fewer schedules than the default.
	 * @param schedules how many schedules to explore
	 * @see #explore(LockMode, boolean, Consumer)
	 */
	static void explore(LockMode mode, boolean expiredSessions, int schedules, Consumer<Run> scenario) {
		explore(expiredSessions, schedules, (model) -> model.oneAttempt(mode), scenario);
	}

	/**
	 * Explore a scenario whose last request, which finds the key free, is the given one.
	 * @see #explore(LockMode, boolean, Consumer)
	 */
	static void explore(boolean expiredSessions, int schedules,
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
	static final class Run {

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

		/** Join every thread, also those that threads started meanwhile. */
		void joinAll() {
			int joined = 0;
			while (joined < this.threads.size()) {
				Thread[] started = this.threads.toArray(new Thread[0]);
				join(started);
				joined = started.length;
			}
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
