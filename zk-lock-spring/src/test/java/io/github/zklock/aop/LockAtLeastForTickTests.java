package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedLock(waitTime = "0", onBusy = SKIP, lockAtLeastFor = ...)} as a scheduled job
 * of three applications (three contexts, three ZooKeeper sessions) whose schedules fire the same
 * tick a little apart, as clocks of different hosts do: with {@code lockAtLeastFor} exactly one
 * application runs each tick; without it, a quick job finishes before the later applications
 * fire and the tick runs more than once (the control that shows the test can fail).
 */
class LockAtLeastForTickTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int TICKS = 4;

	private static final Duration PERIOD = Duration.ofMillis(1200);

	/** When each application's schedule fires within a tick: its clock is that much late. */
	private static final long[] CLOCK_OFFSETS_MS = { 0, 250, 500 };

	private static final Runs runs = new Runs();

	private static final List<AnnotationConfigApplicationContext> applications = new ArrayList<>();

	@BeforeAll
	static void start() throws InterruptedException {
		for (int i = 0; i < CLOCK_OFFSETS_MS.length; i++) {
			applications.add(LockApplications.start(zooKeeper,
					(context) -> context.registerBean(Runs.class, () -> runs), Report.class));
		}
	}

	@AfterAll
	static void stop() {
		applications.forEach(AnnotationConfigApplicationContext::close);
	}

	@Test
	void lockAtLeastForRunsEachTickOnExactlyOneApplication() throws Exception {
		Map<Integer, List<Integer>> ran = fireTicks(Report::kept);
		assertThat(ran).hasSize(TICKS);
		assertThat(ran.values()).allSatisfy((instances) -> assertThat(instances).hasSize(1));
	}

	@Test
	void quickJobWithoutLockAtLeastForRunsATickMoreThanOnce() throws Exception {
		Map<Integer, List<Integer>> ran = fireTicks(Report::released);
		assertThat(ran.values()).anySatisfy((instances) -> assertThat(instances).hasSizeGreaterThan(1));
	}

	/**
	 * Fire {@link #TICKS} ticks on every application, each at its clock offset, and wait for all.
	 * @return for each tick, the applications that ran it
	 */
	private Map<Integer, List<Integer>> fireTicks(BiConsumer<Report, int[]> job) throws Exception {
		ScheduledExecutorService clocks = Executors.newScheduledThreadPool(CLOCK_OFFSETS_MS.length);
		try {
			List<ScheduledFuture<?>> fired = new ArrayList<>();
			for (int tick = 0; tick < TICKS; tick++) {
				for (int app = 0; app < CLOCK_OFFSETS_MS.length; app++) {
					Report report = applications.get(app).getBean(Report.class);
					int[] call = { tick, app };
					long at = tick * PERIOD.toMillis() + CLOCK_OFFSETS_MS[app];
					fired.add(clocks.schedule(() -> job.accept(report, call), at, TimeUnit.MILLISECONDS));
				}
			}
			for (ScheduledFuture<?> call : fired) {
				call.get(PERIOD.toMillis() * TICKS + 10_000, TimeUnit.MILLISECONDS);
			}
		}
		finally {
			clocks.shutdownNow();
		}
		return runs.drain();
	}

	/** The runs of every application, shared by the three contexts. */
	static class Runs {

		private final Map<Integer, List<Integer>> byTick = new ConcurrentHashMap<>();

		void ran(int tick, int app) {
			this.byTick.computeIfAbsent(tick, (key) -> new CopyOnWriteArrayList<>()).add(app);
		}

		Map<Integer, List<Integer>> drain() {
			Map<Integer, List<Integer>> copy = Map.copyOf(this.byTick);
			this.byTick.clear();
			return copy;
		}

	}

	static class Report {

		private final Runs runs;

		Report(Runs runs) {
			this.runs = runs;
		}

		@DistributedLock(path = "/jobs/kept-report", waitTime = "0", onBusy = OnBusy.SKIP, lockAtLeastFor = "1s")
		public void kept(int[] call) {
			this.runs.ran(call[0], call[1]);
		}

		@DistributedLock(path = "/jobs/released-report", waitTime = "0", onBusy = OnBusy.SKIP)
		public void released(int[] call) {
			this.runs.ran(call[0], call[1]);
		}

	}

}
