package io.github.zklock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link ZkLockProvider} under contention, the scenario of ShedLock's {@code FuzzTester}
 * ({@code fuzzTestShouldPass}) written anew: threads of two applications (each its own client,
 * registry and provider) run two jobs through ShedLock's own {@code DefaultLockingTaskExecutor},
 * each run a read, a pause and a write of the job's counter; a run whose lock is busy is skipped
 * and tried again. No update is lost, no two runs of one job ever overlap, one thread stopping
 * early changes nothing, and no lock znode is left behind. Bounded in time.
 */
class ZkLockProviderFuzzTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int THREADS_PER_APPLICATION = 3;

	private static final int RUNS_PER_THREAD = 15;

	/** One thread per job stops early, as in ShedLock's test. */
	private static final int SHORT_RUNS = 4;

	private Application first;

	private Application second;

	private CuratorFramework observer;

	@BeforeEach
	void start() throws InterruptedException {
		this.first = Application.start(zooKeeper);
		this.second = Application.start(zooKeeper);
		this.observer = zooKeeper.newClient();
	}

	@AfterEach
	void stop() {
		this.first.registry().close();
		this.second.registry().close();
	}

	@Test
	void noUpdateIsLostAndNoTwoRunsOfAJobOverlap() throws Exception {
		List<Job> jobs = List.of(new Job("fuzz-1"), new Job("fuzz-2"));
		List<LockingTaskExecutor> executors = List.of(new DefaultLockingTaskExecutor(this.first.provider()),
				new DefaultLockingTaskExecutor(this.second.provider()));
		int threads = 2 * THREADS_PER_APPLICATION;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		AtomicLong skipped = new AtomicLong();
		int[] expected = new int[jobs.size()];
		try {
			CountDownLatch together = new CountDownLatch(threads);
			List<Future<?>> done = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				// Each job: threads in both applications, one of them stopping early.
				Job job = jobs.get(i % 2);
				LockingTaskExecutor executor = executors.get((i / 2) % 2);
				int runs = (i < 2) ? SHORT_RUNS : RUNS_PER_THREAD;
				expected[jobs.indexOf(job)] += runs;
				done.add(pool.submit(() -> {
					together.countDown();
					together.await(10, TimeUnit.SECONDS);
					AtomicInteger ran = new AtomicInteger();
					while (ran.get() < runs) {
						int before = ran.get();
						executor.executeWithLock((Runnable) () -> {
							job.increment();
							ran.incrementAndGet();
						}, job.config());
						if (ran.get() == before) {
							skipped.incrementAndGet();
						}
					}
					return null;
				}));
			}
			assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
				for (Future<?> each : done) {
					each.get();
				}
			});
		}
		finally {
			pool.shutdownNow();
		}

		for (int i = 0; i < jobs.size(); i++) {
			Job job = jobs.get(i);
			assertThat(job.counter).as(job.name).hasValue(expected[i]);
			assertThat(job.mostAtOnce).as(job.name).hasValue(1);
		}
		assertThat(skipped).as("busy attempts, skipped").hasPositiveValue();
		for (Job job : jobs) {
			// The last run's grant goes once its lockAtLeastFor has passed.
			await().atMost(Duration.ofSeconds(5)).until(() -> znodes(job.name).isEmpty());
		}
		await().atMost(Duration.ofSeconds(5))
			.until(() -> new CuratorLockAdmin(this.first.registry()).heldLockCount() + new CuratorLockAdmin(this.second.registry()).heldLockCount() == 0);
	}

	private List<String> znodes(String lockName) throws Exception {
		return ZooKeeperExtension.ephemeralZnodes(this.observer, Application.lockPath(lockName));
	}

	/** A job whose counter is a read, a pause and a write: a second run at once loses an update. */
	private static final class Job {

		final String name;

		final AtomicInteger counter = new AtomicInteger();

		final AtomicInteger running = new AtomicInteger();

		final AtomicInteger mostAtOnce = new AtomicInteger();

		Job(String name) {
			this.name = name;
		}

		/** As in ShedLock's test, a short lockAtLeastFor: its delayed release is exercised too. */
		LockConfiguration config() {
			return new LockConfiguration(Instant.now(), this.name, Duration.ofMinutes(5), Duration.ofMillis(5));
		}

		void increment() {
			int now = this.running.incrementAndGet();
			this.mostAtOnce.accumulateAndGet(now, Math::max);
			try {
				int value = this.counter.get();
				// Widens the window in which a second holder would read the same value.
				Thread.sleep(1);
				this.counter.set(value + 1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			finally {
				this.running.decrementAndGet();
			}
		}

	}

}
