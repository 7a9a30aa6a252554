package io.github.zklock;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The distributed {@link java.util.concurrent.locks.Condition} of one key across three JVMs: a
 * bounded queue kept in a znode, producers waiting on the key's condition while it is full and
 * consumers while it is empty, every change signalling all ({@link ConditionAcrossJvmsChild}). One
 * JVM runs two producers, one two consumers, the third one of each, so that waiters are woken from
 * other JVMs. This test is a fourth application: it opens the queue once every thread waits on the
 * condition, and closes it once every thread waits again after the last item, each time with one
 * {@code signalAll} that must wake all six waiters of the three JVMs (nobody else signals after the
 * last item). Every item produced is consumed exactly once, and each waiter returns within a bound of
 * the first signal after it queued (the one that must wake it). The children connect to this class's
 * in-process server; every wait is bounded and the children are killed at the end whatever happened.
 */
class ConditionAcrossJvmsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int ITEMS = 300;

	private static final int CAPACITY = 3;

	private static final String KEY = "/condition-across-jvms";

	private static final String QUEUE = "/condition-across-jvms-queue";

	/** The JVMs and the roles of their threads. */
	private static final Map<String, String> JVMS = Map.of("jvm1", "producer,producer", "jvm2", "consumer,consumer",
			"jvm3", "producer,consumer");

	private static final int THREADS = 6;

	/** A child's await that its signal does not end within this fails it (then the test). */
	private static final Duration AWAIT_BOUND = Duration.ofSeconds(15);

	/** The longest time from a signal to the return of the await it woke. */
	private static final Duration WAKE_BOUND = Duration.ofSeconds(5);

	/** How long the children may take to start and wait, and to move every item. */
	private static final Duration PHASE_BOUND = Duration.ofSeconds(60);

	private static final Path OUTPUT_DIR = Path.of("target", "condition-across-jvms");

	@Test
	@Timeout(value = 3, unit = TimeUnit.MINUTES)
	void producersAndConsumersInThreeJvmsMoveEveryItemOnceThroughOneCondition() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ConditionAcrossJvmsChild.ROOT, 100);
		Lock lock = new LockTemplate(registry, PHASE_BOUND).lock(KEY);
		Files.createDirectories(OUTPUT_DIR);
		Map<String, Process> children = new HashMap<>();
		Map<String, Path> logs = new HashMap<>();
		long started = System.nanoTime();
		try {
			client.create().forPath(QUEUE, new ConditionAcrossJvmsChild.Queue().bytes());
			for (Map.Entry<String, String> jvm : JVMS.entrySet()) {
				Path log = OUTPUT_DIR.resolve(jvm.getKey() + ".log");
				logs.put(jvm.getKey(), log);
				children.put(jvm.getKey(), start(log, jvm.getKey(), jvm.getValue()));
			}
			awaitEveryThreadWaiting(client, children, logs, false);
			long opened = System.nanoTime();
			long openSignal = moveOn(client, lock, ConditionAcrossJvmsChild.Phase.RUN);
			awaitEveryThreadWaiting(client, children, logs, true);
			long runMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - opened);
			long closeSignal = moveOn(client, lock, ConditionAcrossJvmsChild.Phase.END);
			long deadline = System.nanoTime() + AWAIT_BOUND.plusSeconds(10).toNanos();
			for (Map.Entry<String, Process> child : children.entrySet()) {
				long left = Math.max(1, deadline - System.nanoTime());
				if (!child.getValue().waitFor(left, TimeUnit.NANOSECONDS)) {
					fail("%s still running after the queue was closed; see %s", child.getKey(), logs.get(child.getKey()));
				}
			}
			List<String> lines = new ArrayList<>();
			for (Map.Entry<String, Process> child : children.entrySet()) {
				List<String> own = protocolLines(logs.get(child.getKey()));
				assertThat(own).as("%s's errors, see %s", child.getKey(), logs.get(child.getKey()))
					.noneMatch((line) -> line.startsWith("ERROR") || line.startsWith("TIMEOUT"));
				assertThat(child.getValue().exitValue()).as("%s's exit code, see %s", child.getKey(),
						logs.get(child.getKey()))
					.isZero();
				lines.addAll(own);
			}
			List<Integer> put = items(lines, "PUT ");
			List<Integer> taken = items(lines, "TAKE ");
			List<Integer> all = IntStream.range(0, ITEMS).boxed().toList();
			assertThat(duplicates(put)).as("items produced twice").isEmpty();
			assertThat(put).as("items produced").containsExactlyInAnyOrderElementsOf(all);
			assertThat(duplicates(taken)).as("items consumed twice").isEmpty();
			assertThat(taken).as("items consumed: each produced item once, none lost")
				.containsExactlyInAnyOrderElementsOf(all);
			ConditionAcrossJvmsChild.Queue last = ConditionAcrossJvmsChild.Queue.parse(client.getData().forPath(QUEUE));
			assertThat(last.items).as("items left in the queue").isEmpty();
			assertThat(last.next).isEqualTo(ITEMS);
			assertThat(last.consumed).isEqualTo(ITEMS);
			assertThat(waiterZnodes(client)).as("waiters left behind").isEmpty();
			List<Long> wakes = figures(lines, "WOKE ", 3);
			List<Long> producerWakes = figures(lines, "WOKE producer ", 3);
			List<Long> consumerWakes = figures(lines, "WOKE consumer ", 3);
			List<Long> openWakes = wakes(lines, openSignal);
			List<Long> closeWakes = wakes(lines, closeSignal);
			long spurious = lines.stream().filter((line) -> line.startsWith("SPURIOUS ")).count();
			System.out.printf("CONDITION-ACROSS-JVMS items=%d capacity=%d jvms=%s run_ms=%d total_ms=%d signals=%d "
					+ "awaits_returned=%d (producers %d, consumers %d) spurious=%d wake_ms: %s; producers %s; "
					+ "consumers %s; open (signal %d) %s; close (signal %d) %s%n", ITEMS, CAPACITY, JVMS, runMs,
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), last.lastSignal(), wakes.size(),
					producerWakes.size(), consumerWakes.size(), spurious, stats(wakes), stats(producerWakes),
					stats(consumerWakes), openSignal, stats(openWakes), closeSignal, stats(closeWakes));
			assertThat(openWakes).as("waiters the opening signalAll woke").hasSize(THREADS);
			assertThat(closeWakes).as("waiters the closing signalAll woke").hasSize(THREADS);
			assertThat(wakes.size() - openWakes.size() - closeWakes.size())
				.as("awaits that returned while items moved: the queue was full or empty at times")
				.isPositive();
			assertThat(Collections.max(wakes)).as("the longest time from a signal to the return of the await it woke, ms")
				.isLessThan(WAKE_BOUND.toMillis());
		}
		finally {
			for (Process child : children.values()) {
				child.destroyForcibly();
			}
			for (Process child : children.values()) {
				child.waitFor(10, TimeUnit.SECONDS);
			}
			registry.close();
		}
	}

	/**
	 * Move the queue on to a phase, as an application would: under the lock, note the signal, write,
	 * signal all.
	 * @return the signal's number
	 */
	private static long moveOn(CuratorFramework client, Lock lock, ConditionAcrossJvmsChild.Phase phase)
			throws Exception {
		assertThat(lock.tryLock(PHASE_BOUND.toSeconds(), TimeUnit.SECONDS)).as("the test's lock").isTrue();
		try {
			Stat stat = new Stat();
			ConditionAcrossJvmsChild.Queue queue = ConditionAcrossJvmsChild.Queue
				.parse(client.getData().storingStatIn(stat).forPath(QUEUE));
			queue.phase = phase;
			queue.signalled(System.currentTimeMillis());
			client.setData().withVersion(stat.getVersion()).forPath(QUEUE, queue.bytes());
			lock.newCondition().signalAll();
			return queue.lastSignal();
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Wait until every child thread waits on the condition: a waiter znode each (and, once the
	 * queue was opened, every item consumed).
	 */
	private static void awaitEveryThreadWaiting(CuratorFramework client, Map<String, Process> children,
			Map<String, Path> logs, boolean allConsumed) throws Exception {
		long deadline = System.nanoTime() + PHASE_BOUND.toNanos();
		while (true) {
			if ((!allConsumed
					|| ConditionAcrossJvmsChild.Queue.parse(client.getData().forPath(QUEUE)).consumed == ITEMS)
					&& waiterZnodes(client).size() == THREADS) {
				return;
			}
			for (Map.Entry<String, Process> child : children.entrySet()) {
				if (!child.getValue().isAlive()) {
					fail("%s exited with %d; see %s", child.getKey(), child.getValue().exitValue(),
							logs.get(child.getKey()));
				}
			}
			if (System.nanoTime() > deadline) {
				fail("Not every thread waited (%s) within %s; see %s", allConsumed ? "every item moved" : "at the start",
						PHASE_BOUND, OUTPUT_DIR);
			}
			Thread.sleep(20);
		}
	}

	private static Process start(Path log, String name, String roles) throws IOException {
		String java = ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		List<String> command = List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
				System.getProperty("java.class.path"), ConditionAcrossJvmsChild.class.getName(),
				zooKeeper.getConnectString(), name, roles, KEY, QUEUE, Integer.toString(ITEMS),
				Integer.toString(CAPACITY), Long.toString(AWAIT_BOUND.toMillis()));
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
	}

	private static List<String> protocolLines(Path log) throws IOException {
		return Files.readAllLines(log, StandardCharsets.UTF_8)
			.stream()
			.filter((line) -> line.startsWith(ConditionAcrossJvmsChild.PREFIX))
			.map((line) -> line.substring(ConditionAcrossJvmsChild.PREFIX.length()))
			.toList();
	}

	/** The items of the lines {@code <keyword> <item> <thread>}. */
	private static List<Integer> items(List<String> lines, String keyword) {
		return lines.stream()
			.filter((line) -> line.startsWith(keyword))
			.map((line) -> Integer.parseInt(line.split(" ")[1]))
			.toList();
	}

	/** The figure in the given field of the lines starting with a prefix. */
	private static List<Long> figures(List<String> lines, String prefix, int field) {
		return lines.stream()
			.filter((line) -> line.startsWith(prefix))
			.map((line) -> Long.parseLong(line.split(" ")[field]))
			.toList();
	}

	/** The times of the wakes by the given signal. */
	private static List<Long> wakes(List<String> lines, long signal) {
		return lines.stream()
			.filter((line) -> line.startsWith("WOKE ") && Long.parseLong(line.split(" ")[4]) == signal)
			.map((line) -> Long.parseLong(line.split(" ")[3]))
			.toList();
	}

	private static List<Integer> duplicates(List<Integer> items) {
		return items.stream()
			.collect(Collectors.groupingBy((item) -> item, Collectors.counting()))
			.entrySet()
			.stream()
			.filter((entry) -> entry.getValue() > 1)
			.map(Map.Entry::getKey)
			.sorted()
			.toList();
	}

	/**
	 * The condition's waiters: the ephemeral znodes below the lock path whose path there names the
	 * condition (the lock's own znodes do not).
	 */
	private static List<String> waiterZnodes(CuratorFramework client) throws Exception {
		String lockPath = ConditionAcrossJvmsChild.ROOT + KEY;
		return ZooKeeperExtension.ephemeralZnodes(client, lockPath)
			.stream()
			.filter((path) -> path.substring(lockPath.length()).contains("condition"))
			.toList();
	}

	/** "n=… min=… median=… p99=… max=…" of some figures, in ms. */
	private static String stats(List<Long> values) {
		if (values.isEmpty()) {
			return "n=0";
		}
		List<Long> sorted = new ArrayList<>(values);
		Collections.sort(sorted);
		return "n=" + sorted.size() + " min=" + sorted.get(0) + " median=" + sorted.get(sorted.size() / 2) + " p99="
				+ sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1)) + " max="
				+ sorted.get(sorted.size() - 1);
	}

}
