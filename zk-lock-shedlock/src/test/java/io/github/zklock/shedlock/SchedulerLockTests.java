package io.github.zklock.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link ZkLockProvider} as a ShedLock user meets it: two application contexts (plain Spring, no
 * Boot), each with its own Curator client and its {@code ZkLockProvider} as the
 * {@link LockProvider} bean, {@code @EnableSchedulerLock}, and a job method with
 * {@code @SchedulerLock(name, lockAtLeastFor)}. Per tick both call the job at the same moment:
 * exactly one runs, under ShedLock's lock ({@link LockAssert#assertLocked()}); a call of either
 * right after, as from an instance whose clock or schedule is a little late, is skipped while
 * {@code lockAtLeastFor} lasts; the next tick, once it has passed, runs again on exactly one.
 */
class SchedulerLockTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int TICKS = 2;

	/**
	 * The job's {@code lockAtLeastFor}: long enough that the late calls come within it on a loaded
	 * machine (with 1 s, a fresh-clone build beside a demo and a campaign once called them 1 s after
	 * the run, and a late call rightly ran); the test checks that they did.
	 */
	static final String LOCK_AT_LEAST_FOR = "PT5S";

	private final List<String> runs = new CopyOnWriteArrayList<>();

	/** When the last run of the job began ({@link System#nanoTime()}). */
	private final AtomicLong lastRunStarted = new AtomicLong();

	private final List<AnnotationConfigApplicationContext> contexts = new ArrayList<>();

	private final List<CuratorLockRegistry> registries = new ArrayList<>();

	private CuratorFramework observer;

	@BeforeEach
	void start() throws InterruptedException {
		this.observer = zooKeeper.newClient();
		for (String name : List.of("app-1", "app-2")) {
			CuratorLockRegistry registry = new CuratorLockRegistry(zooKeeper.newClient(), Application.ROOT, 100);
			this.registries.add(registry);
			AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
			context.registerBean(LockTemplate.class, () -> new LockTemplate(registry, Duration.ofSeconds(10)));
			context.registerBean(StockReport.class, () -> new StockReport(name, this.runs, this.lastRunStarted));
			context.register(SchedulerLockConfiguration.class);
			context.refresh();
			this.contexts.add(context);
		}
	}

	@AfterEach
	void stop() {
		this.contexts.forEach(AnnotationConfigApplicationContext::close);
		this.registries.forEach(CuratorLockRegistry::close);
	}

	@Test
	void exactlyOneApplicationRunsTheJobPerTick() throws Exception {
		List<StockReport> reports = this.contexts.stream()
			.map((context) -> context.getBean(StockReport.class))
			.toList();
		ExecutorService schedulers = Executors.newFixedThreadPool(reports.size());
		try {
			for (int tick = 1; tick <= TICKS; tick++) {
				CyclicBarrier together = new CyclicBarrier(reports.size());
				List<Future<?>> calls = new ArrayList<>();
				for (StockReport report : reports) {
					calls.add(schedulers.submit(() -> {
						together.await(10, TimeUnit.SECONDS);
						report.run();
						return null;
					}));
				}
				for (Future<?> call : calls) {
					call.get(10, TimeUnit.SECONDS);
				}
				assertThat(this.runs).as("runs after tick " + tick).hasSize(tick);

				// Late callers within lockAtLeastFor: skipped, though the job has long returned.
				reports.forEach(StockReport::run);
				assertThat(Duration.ofNanos(System.nanoTime() - this.lastRunStarted.get()))
					.as("the late calls came within lockAtLeastFor of the run (else they may run)")
					.isLessThan(Duration.parse(LOCK_AT_LEAST_FOR));
				assertThat(this.runs).as("runs after the late calls of tick " + tick).hasSize(tick);

				// The next tick comes once lockAtLeastFor has passed and the key is free.
				await().atMost(Duration.ofSeconds(20))
					.until(() -> ZooKeeperExtension.ephemeralZnodes(this.observer, Application.lockPath("stock-report"))
						.isEmpty());
			}
		}
		finally {
			schedulers.shutdownNow();
		}
		assertThat(this.runs).hasSize(TICKS).allSatisfy((app) -> assertThat(app).isIn("app-1", "app-2"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
	static class SchedulerLockConfiguration {

		@Bean
		ZkLockProvider lockProvider(LockTemplate lockTemplate) {
			return new ZkLockProvider(lockTemplate);
		}

	}

	/** A scheduled job of an application (called by the test rather than by a scheduler). */
	static class StockReport {

		private final String application;

		private final List<String> runs;

		private final AtomicLong started;

		StockReport(String application, List<String> runs, AtomicLong started) {
			this.application = application;
			this.runs = runs;
			this.started = started;
		}

		@SchedulerLock(name = "stock-report", lockAtLeastFor = LOCK_AT_LEAST_FOR)
		public void run() {
			LockAssert.assertLocked();
			this.started.set(System.nanoTime());
			this.runs.add(this.application);
		}

	}

}
