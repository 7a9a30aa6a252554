package io.github.zklock.chaos;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Injects the faults of a campaign on a seeded schedule: the kinds in a shuffled cycle, cycle after
 * cycle until the time is up (at least one whole cycle, so that a short campaign tries every kind),
 * each fault held for a while, healed, then the system awaited back (a quorum, every instance
 * answering) before the next. The same seed, servers and minutes give the same sequence of kinds,
 * targets and holds; the times they land at depend on the machine.
 *
 * <p>Not thread-safe: runs on the campaign's thread.
 */
final class Nemesis {

	/** The kinds of fault, as the report names them. */
	enum Kind {

		/** The leader cut off from every other server (a minority of one); clients still reach it. */
		PARTITION_LEADER("partition-leader"),

		/** Followers cut off from the rest: a minority without the leader (one of 3, two of 5). */
		PARTITION_MINORITY("partition-minority"),

		/** An instance cut off from every server for longer than its session timeout. */
		PARTITION_CLIENT("partition-client"),

		/** SIGSTOP of the instance that last held the counter's lock, for longer than its session timeout, then SIGCONT. */
		PAUSE("pause"),

		/** SIGKILL of the leader, restarted a few seconds later. */
		KILL_LEADER("kill-leader"),

		/** SIGKILL of a follower, restarted a few seconds later. */
		KILL_FOLLOWER("kill-follower"),

		/** SIGKILL of an instance, restarted. */
		KILL_APPLICATION("kill-app"),

		/** An instance's wall clock jumps forward (a minute), and back a few seconds later. */
		CLOCK_FORWARD("clock-forward"),

		/** An instance's wall clock jumps backward (a minute), and back a few seconds later. */
		CLOCK_BACKWARD("clock-backward"),

		/** An instance at the lowest CPU priority while {@code stress-ng} takes every CPU. */
		CPU_STARVATION("cpu-starvation");

		private final String label;

		Kind(String label) {
			this.label = label;
		}

		String label() {
			return this.label;
		}

		/**
		 * The kind of a label.
		 * @throws IllegalArgumentException if no kind has it
		 */
		static Kind byLabel(String label) {
			for (Kind kind : values()) {
				if (kind.label.equals(label)) {
					return kind;
				}
			}
			throw new IllegalArgumentException("No fault kind " + label);
		}

	}

	/**
	 * One fault.
	 * @param kind what
	 * @param target on what (a server or an instance)
	 * @param startNanos when it was injected, {@link System#nanoTime()}
	 * @param healNanos when it was healed
	 * @param recoveredNanos when the system was back (a quorum, every instance answering), -1 if it
	 * did not come back within the bound
	 */
	record Fault(Kind kind, String target, long startNanos, long healNanos, long recoveredNanos) {
	}

	static final Duration CLOCK_JUMP = Duration.ofMinutes(1);

	private static final Duration RECOVERY_BOUND = Duration.ofSeconds(90);

	private final Ensemble ensemble;

	private final Applications applications;

	private final Random random;

	private final Duration sessionTimeout;

	private final List<Kind> kinds;

	private final IntSupplier lastHolder;

	private final PrintStream log;

	private final List<Fault> faults = new ArrayList<>();

	/**
	 * @param kinds the kinds this machine can inject
	 * @param lastHolder the instance that last answered a grant of the counter's lock, -1 if none
	 * @param log where each fault is announced
	 */
	Nemesis(Ensemble ensemble, Applications applications, long seed, Duration sessionTimeout, List<Kind> kinds,
			IntSupplier lastHolder, PrintStream log) {
		this.ensemble = ensemble;
		this.applications = applications;
		this.random = new Random(seed);
		this.sessionTimeout = sessionTimeout;
		this.kinds = List.copyOf(kinds);
		this.lastHolder = lastHolder;
		this.log = log;
	}

	/**
	 * Inject faults until {@code deadlineNanos}, finishing the cycle under way.
	 * @param deadlineNanos when to stop starting cycles, {@link System#nanoTime()}
	 * @param originNanos the campaign's start, for the log
	 * @throws InterruptedException if interrupted
	 * @throws IOException if a fault cannot be injected (a command failed)
	 */
	void run(long deadlineNanos, long originNanos) throws InterruptedException, IOException {
		do {
			List<Kind> cycle = new ArrayList<>(this.kinds);
			Collections.shuffle(cycle, this.random);
			for (Kind kind : cycle) {
				pauseBetweenFaults();
				Fault fault = inject(kind);
				this.faults.add(fault);
				this.log.printf("FAULT kind=%s target=%s at_s=%.1f held_s=%.1f recovered_after_s=%s%n", kind.label(),
						fault.target(), seconds(fault.startNanos() - originNanos),
						seconds(fault.healNanos() - fault.startNanos()),
						(fault.recoveredNanos() < 0) ? "none"
								: String.format(java.util.Locale.ROOT, "%.1f",
										seconds(fault.recoveredNanos() - fault.healNanos())));
			}
		}
		while (System.nanoTime() - deadlineNanos < 0);
	}

	List<Fault> faults() {
		return List.copyOf(this.faults);
	}

	private Fault inject(Kind kind) throws InterruptedException, IOException {
		long start = System.nanoTime();
		String target;
		switch (kind) {
			case PARTITION_LEADER -> {
				int leader = awaitLeader();
				Set<Integer> others = servers().filter((server) -> server != leader).boxed().collect(Collectors.toSet());
				this.ensemble.partition(List.of(Set.of(leader), others));
				target = "server-" + leader;
				hold(Duration.ofSeconds(6));
				this.ensemble.healPartitions();
			}
			case PARTITION_MINORITY -> {
				int leader = awaitLeader();
				List<Integer> followers = new ArrayList<>(servers().filter((server) -> server != leader).boxed().toList());
				Collections.shuffle(followers, this.random);
				Set<Integer> minority = Set.copyOf(followers.subList(0, (this.ensemble.size() - 1) / 2));
				Set<Integer> majority = servers().filter((server) -> !minority.contains(server))
					.boxed()
					.collect(Collectors.toSet());
				this.ensemble.partition(List.of(minority, majority));
				target = minority.stream().sorted().map((server) -> "server-" + server).collect(Collectors.joining("+"));
				hold(Duration.ofSeconds(6));
				this.ensemble.healPartitions();
			}
			case PARTITION_CLIENT -> {
				int application = this.random.nextInt(this.applications.size());
				target = this.applications.name(application);
				this.ensemble.isolateApplication(application);
				hold(beyondSession());
				this.ensemble.healApplication(application);
			}
			case PAUSE -> {
				int application = holder();
				target = this.applications.name(application);
				this.applications.pause(application);
				hold(beyondSession());
				this.applications.resume(application);
			}
			case KILL_LEADER -> {
				int leader = awaitLeader();
				target = "server-" + leader;
				this.ensemble.kill(leader);
				hold(Duration.ofSeconds(2));
				this.ensemble.start(leader);
			}
			case KILL_FOLLOWER -> {
				int leader = awaitLeader();
				List<Integer> followers = servers().filter((server) -> server != leader).boxed().toList();
				int follower = followers.get(this.random.nextInt(followers.size()));
				target = "server-" + follower;
				this.ensemble.kill(follower);
				hold(Duration.ofSeconds(2));
				this.ensemble.start(follower);
			}
			case KILL_APPLICATION -> {
				int application = holder();
				target = this.applications.name(application);
				this.applications.kill(application);
				hold(Duration.ofSeconds(1));
				this.applications.start(application);
			}
			case CLOCK_FORWARD, CLOCK_BACKWARD -> {
				int application = holder();
				target = this.applications.name(application);
				this.applications.shiftClock(application,
						(kind == Kind.CLOCK_FORWARD) ? CLOCK_JUMP : CLOCK_JUMP.negated());
				hold(Duration.ofSeconds(4));
				this.applications.shiftClock(application, Duration.ZERO);
			}
			case CPU_STARVATION -> {
				int application = holder();
				target = this.applications.name(application);
				Duration hold = beyondSession();
				Process stress = new ProcessBuilder("stress-ng", "--cpu", "4", "--timeout", hold.toSeconds() + "s",
						"--quiet")
					.redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.DISCARD)
					.start();
				this.applications.nice(application, 19);
				hold(hold);
				stress.destroy();
				stress.waitFor(10, TimeUnit.SECONDS);
				if (this.applications.running(application)) {
					this.applications.nice(application, 0);
				}
			}
			default -> throw new IllegalStateException("Unknown fault " + kind);
		}
		long heal = System.nanoTime();
		return new Fault(kind, target, start, heal, awaitRecovery());
	}

	/** Longer than a session timeout: the session of whoever was cut off or paused expires. */
	private Duration beyondSession() {
		return this.sessionTimeout.multipliedBy(3).dividedBy(2).plusMillis(this.random.nextInt(1000));
	}

	private int holder() {
		int holder = this.lastHolder.getAsInt();
		return (holder >= 0) ? holder : this.random.nextInt(this.applications.size());
	}

	private int awaitLeader() throws InterruptedException {
		long deadline = System.nanoTime() + RECOVERY_BOUND.toNanos();
		while (System.nanoTime() - deadline < 0) {
			int leader = this.ensemble.leader();
			if (leader >= 0) {
				return leader;
			}
			TimeUnit.MILLISECONDS.sleep(100);
		}
		throw new IllegalStateException("No leader within " + RECOVERY_BOUND);
	}

	/** Wait for a quorum and every instance answering; the time it came back, -1 if not within the bound. */
	private long awaitRecovery() throws InterruptedException, IOException {
		long deadline = System.nanoTime() + RECOVERY_BOUND.toNanos();
		boolean quorum = this.ensemble.awaitQuorum(RECOVERY_BOUND);
		for (int application = 0; quorum && application < this.applications.size(); application++) {
			long left = deadline - System.nanoTime();
			if (!this.applications.running(application)) {
				this.applications.start(application);
			}
			if (left <= 0 || !this.applications.awaitReady(application, Duration.ofNanos(left))) {
				return -1;
			}
		}
		return quorum ? System.nanoTime() : -1;
	}

	private void pauseBetweenFaults() throws InterruptedException {
		hold(Duration.ofMillis(1000 + this.random.nextInt(1000)));
	}

	private IntStream servers() {
		return IntStream.rangeClosed(1, this.ensemble.size());
	}

	private static void hold(Duration duration) throws InterruptedException {
		TimeUnit.NANOSECONDS.sleep(duration.toNanos());
	}

	private static double seconds(long nanos) {
		return nanos / 1e9;
	}

}
