package io.github.zklock.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several JVMs take one lock many times; under each grant they read and conditionally increment
 * a fenced counter and log the grant. The merged history is checked by {@link HistoryChecker}:
 * no untold overlap, tokens in grant order, no lost update.
 *
 * <p>The default run has no injected faults, so every grant must also write. It has three JVMs of
 * one thread each, whose grants all go through ZooKeeper, and three JVMs of
 * {@value #HANDOFF_THREADS} threads each with local hand-off on ({@link LocalHandoff#DEFAULT}),
 * which make at least {@value #HANDOFF_GRANTS} grants in all, most of them handed over between the
 * threads of a JVM on one znode (equal fencing tokens within a JVM's chain, strictly increasing at
 * every change of JVM). The soak ({@code -Dzklock.soak=true}) runs four JVMs, each connected
 * through its own {@link TcpProxy}, and every {@value #FAULT_EVERY_MS} ms injects a fault: every
 * {@value #RESTART_EVERY}th a server restart, every other one a partition (of the holder, when
 * there is one) longer than the session timeout, so that the server expires the session. A
 * holder is told after its read timeout, well before the server expires its session, and lingers
 * in its grant, which makes told overlaps the checker must accept.
 *
 * <p>{@code -Dzklock.soak.expire=waiters} also expires, on the server, the session of the last
 * worker in the lock's queue; {@code =holders} that of the holder. The server then closes the
 * holder's connection and its session at once, and the holder hearing of it races with the next
 * grant (see {@link SessionExpiryTests}); with the default NIO client socket the holder loses by
 * about 100 ms, and the checker rejects those overlaps as told too late.
 * {@code -Dzklock.soak.socket=NETTY} runs the workers on the Netty client socket;
 * {@code -Dzklock.soak.threads=4} runs each worker on four threads (local hand-off on).
 */
@Tag("chaos")
class LockHistoryTests {

	private static final String LOCK_PATH = "/history";

	private static final String COUNTER_PATH = "/history-counter";

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	private static final long FAULT_EVERY_MS = 1500;

	private static final int RESTART_EVERY = 15;

	/** Threads per JVM of the run with local hand-off. */
	private static final int HANDOFF_THREADS = 4;

	/** Grants (counter increments) of the run with local hand-off, over all JVMs. */
	private static final int HANDOFF_GRANTS = 10_000;

	/** A partition outlasts the session timeout, so the partitioned session expires. */
	private static final Duration PARTITION = SESSION_TIMEOUT.plusMillis(1500);

	/** A server per test, with the chaos tick; the workers are child JVMs with clients of their own. */
	@RegisterExtension
	final ZooKeeperExtension zooKeeper = Chaos.zooKeeper();

	/** The extension's server, taken on the test thread for the fault thread, which restarts it. */
	private TestingServer server;

	private CuratorFramework client;

	private final List<ChildJvm> workers = new CopyOnWriteArrayList<>();

	private final List<TcpProxy> proxies = new CopyOnWriteArrayList<>();

	private final Set<Integer> partitioned = ConcurrentHashMap.newKeySet();

	private ScheduledExecutorService faults;

	/** How long the last {@link #runWorkers} took from GO to the last DONE. */
	private long runMs;

	@BeforeEach
	void start() throws Exception {
		this.server = this.zooKeeper.getServer();
		this.client = this.zooKeeper.newClient(Chaos.clientSettings(Duration.ofSeconds(10), ClientSocket.NIO));
		this.client.create().forPath(COUNTER_PATH, "0,0".getBytes(StandardCharsets.UTF_8));
	}

	@AfterEach
	void stop() throws Exception {
		if (this.faults != null) {
			this.faults.shutdownNow();
			this.faults.awaitTermination(30, TimeUnit.SECONDS);
		}
		for (ChildJvm worker : this.workers) {
			worker.close();
		}
		for (TcpProxy proxy : this.proxies) {
			proxy.close();
		}
		// The extension closes the client and the server after this.
	}

	@Test
	@Timeout(value = 5, unit = TimeUnit.MINUTES)
	void threeJvmsLeaveAConsistentHistory() throws Exception {
		List<GrantRecord> records = runWorkers("history", 3, 1, 1000, 0, LocalHandoff.DEFAULT, ClientSocket.NIO, false,
				Duration.ofMinutes(4));
		HistoryChecker.Result result = check("history", records);
		assertThat(result.grants()).isGreaterThanOrEqualTo(2000);
		assertThat(result.violations()).isEmpty();
		assertThat(HistoryChecker.faultFreeDeviations(records)).isEmpty();
		assertThat(result.applied()).isEqualTo(result.grants());
		// One thread per JVM: nobody of the same JVM waits, every grant goes through ZooKeeper.
		assertThat(result.localHandoffs()).isZero();
	}

	/**
	 * As the first history, the JVMs' registries keeping their znodes (kept locks on): a JVM that
	 * asks again before another has queued is granted on its kept znode, with the same token and no
	 * request, and gives the znode up as soon as another JVM queues, which races its next local
	 * grant. The checker accepts an equal token only for consecutive grants of one JVM riding one
	 * znode, and checks every interval and write.
	 */
	@Test
	@Timeout(value = 5, unit = TimeUnit.MINUTES)
	void threeJvmsWithKeptLocksLeaveAConsistentHistory() throws Exception {
		List<GrantRecord> records = runWorkers("kept", 3, 1, 500, 0, LocalHandoff.DEFAULT, ClientSocket.NIO, false,
				Duration.ofMinutes(4), false, true);
		HistoryChecker.Result result = check("kept", records);
		long znodes = records.stream().map(GrantRecord::token).distinct().count();
		Chaos.report("history_kept grants=%d kept_or_handed_over=%d znodes=%d jvm_changes=%d run_ms=%d", result.grants(),
				result.localHandoffs(), znodes, handovers(records), this.runMs);
		assertThat(result.grants()).isGreaterThanOrEqualTo(1500);
		assertThat(result.violations()).isEmpty();
		assertThat(HistoryChecker.faultFreeDeviations(records)).isEmpty();
		assertThat(result.applied()).isEqualTo(result.grants());
		assertThat(handovers(records)).as("changes of JVM in grant order").isGreaterThanOrEqualTo(3);
	}

	/**
	 * Three JVMs of {@value #HANDOFF_THREADS} threads each, hand-off on by default: the workers stop
	 * once the counter reached {@value #HANDOFF_GRANTS}, so each JVM's share shows how the chains
	 * were bounded while the others waited. The checker accepts equal tokens only within one JVM's
	 * chain (and only its first grant made through ZooKeeper), so every change of JVM has a higher
	 * token.
	 */
	@Test
	@Timeout(value = 5, unit = TimeUnit.MINUTES)
	void threeJvmsOfSeveralThreadsWithLocalHandoffLeaveAConsistentHistory() throws Exception {
		int jvms = 3;
		List<GrantRecord> records = runWorkers("handoff", jvms, HANDOFF_THREADS, HANDOFF_GRANTS, HANDOFF_GRANTS,
				LocalHandoff.DEFAULT, ClientSocket.NIO, false, Duration.ofMinutes(4));
		HistoryChecker.Result result = check("handoff", records);
		Map<String, Long> byJvm = new TreeMap<>(
				records.stream().collect(Collectors.groupingBy(GrantRecord::client, Collectors.counting())));
		long znodes = records.stream().map(GrantRecord::token).distinct().count();
		double minShare = byJvm.values().stream().mapToLong(Long::longValue).min().orElse(0)
				/ (double) byJvm.values().stream().mapToLong(Long::longValue).max().orElse(1);
		Chaos.report("history_handoff jvms=%d threads_each=%d grants=%d local_handoffs=%d (%.1f%%) znodes=%d "
				+ "mean_chain=%.1f jvm_changes=%d grants_per_jvm=%s min_max_share=%.2f run_ms=%d", jvms, HANDOFF_THREADS,
				result.grants(), result.localHandoffs(), 100.0 * result.localHandoffs() / result.grants(), znodes,
				result.grants() / (double) znodes, handovers(records), byJvm, minShare, this.runMs);
		assertThat(result.grants()).isGreaterThanOrEqualTo(HANDOFF_GRANTS);
		assertThat(result.violations()).isEmpty();
		assertThat(HistoryChecker.faultFreeDeviations(records)).isEmpty();
		assertThat(result.applied()).isEqualTo(result.grants());
		assertThat(result.localHandoffs()).as("grants handed over locally").isPositive();
		// Every JVM had its turns: a chain ends while another JVM waits, and the JVMs queue in
		// ZooKeeper's FIFO order, so the shares are close (0.96 to 0.98 of each other when measured).
		assertThat(byJvm).hasSize(jvms);
		assertThat(handovers(records)).as("changes of JVM in grant order").isGreaterThanOrEqualTo(jvms);
		assertThat(minShare).as("fewest grants of a JVM / most grants of a JVM").isGreaterThanOrEqualTo(0.25);
	}

	/**
	 * As the hand-off history, each JVM's requests asynchronous: they queue in the registry's
	 * asynchronous chain, which shares one znode among them, with no thread waiting in the
	 * registry (the worker's threads wait for their futures).
	 */
	@Test
	@Timeout(value = 5, unit = TimeUnit.MINUTES)
	void threeJvmsOfAsynchronousRequestsLeaveAConsistentHistory() throws Exception {
		int jvms = 3;
		List<GrantRecord> records = runWorkers("async", jvms, HANDOFF_THREADS, HANDOFF_GRANTS, HANDOFF_GRANTS,
				LocalHandoff.DEFAULT, ClientSocket.NIO, false, Duration.ofMinutes(4), true);
		HistoryChecker.Result result = check("async", records);
		Map<String, Long> byJvm = new TreeMap<>(
				records.stream().collect(Collectors.groupingBy(GrantRecord::client, Collectors.counting())));
		long znodes = records.stream().map(GrantRecord::token).distinct().count();
		Chaos.report("history_async jvms=%d requests_each=%d grants=%d local_handoffs=%d znodes=%d grants_per_jvm=%s "
				+ "run_ms=%d", jvms, HANDOFF_THREADS, result.grants(), result.localHandoffs(), znodes, byJvm, this.runMs);
		assertThat(result.grants()).isGreaterThanOrEqualTo(HANDOFF_GRANTS);
		assertThat(result.violations()).isEmpty();
		assertThat(HistoryChecker.faultFreeDeviations(records)).isEmpty();
		assertThat(result.applied()).isEqualTo(result.grants());
		assertThat(result.localHandoffs()).as("grants handed over locally").isPositive();
		assertThat(byJvm).hasSize(jvms);
		assertThat(handovers(records)).as("changes of JVM in grant order").isGreaterThanOrEqualTo(jvms);
	}

	@Test
	@EnabledIfSystemProperty(named = "zklock.soak", matches = "true")
	@Timeout(value = 40, unit = TimeUnit.MINUTES)
	void soakWithExpiriesPartitionsAndServerRestarts() throws Exception {
		ClientSocket socket = ClientSocket.valueOf(System.getProperty("zklock.soak.socket", ClientSocket.NIO.name()));
		String expire = System.getProperty("zklock.soak.expire", "none");
		Map<String, AtomicInteger> injected = new ConcurrentHashMap<>();
		List<String> faultErrors = new CopyOnWriteArrayList<>();
		AtomicInteger tick = new AtomicInteger();
		this.faults = Executors.newScheduledThreadPool(2);
		this.faults.scheduleWithFixedDelay(() -> {
			try {
				String fault = injectFault(tick.incrementAndGet(), expire);
				if (fault != null) {
					injected.computeIfAbsent(fault, (key) -> new AtomicInteger()).incrementAndGet();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (Exception ex) {
				faultErrors.add(ex.toString());
			}
		}, 2000, FAULT_EVERY_MS, TimeUnit.MILLISECONDS);
		int threads = Integer.getInteger("zklock.soak.threads", 1);
		List<GrantRecord> records = runWorkers("soak", 4, threads, 2600, 0, LocalHandoff.DEFAULT, socket, true,
				Duration.ofMinutes(35));
		this.faults.shutdownNow();
		HistoryChecker.Result result = check("soak", records);
		Chaos.report("soak socket=%s expire=%s faults=%s fault_errors=%d %s", socket, expire, injected,
				faultErrors.size(), faultErrors);
		assertThat(result.grants()).isGreaterThanOrEqualTo(10_000);
		assertThat(result.violations()).isEmpty();
		assertThat(result.toldOverlaps()).as("told overlaps the checker accepted").isPositive();
		assertThat(injected).containsKeys("partition_of_holder", "server_restart");
	}

	/**
	 * Inject the fault of the given tick.
	 * @param expire whose sessions to expire on the server besides partitions: none, waiters or
	 * holders
	 * @return which fault, or null if none could be injected now
	 */
	private String injectFault(int tick, String expire) throws Exception {
		int count = this.workers.size();
		if (count == 0) {
			return null;
		}
		if (tick % RESTART_EVERY == 0) {
			this.server.restart();
			return "server_restart";
		}
		List<Integer> queue = lockQueue();
		if (tick % 2 == 1) {
			// Preferably the holder: it is told after its read timeout, the server grants the next
			// worker only after the session timeout, and the holder lingering in its grant makes a
			// told overlap.
			int index = queue.isEmpty() ? (tick / 2) % count : queue.get(0);
			if (!this.partitioned.add(index)) {
				return null;
			}
			TcpProxy proxy = this.proxies.get(index);
			proxy.freeze();
			this.faults.schedule(() -> {
				proxy.heal();
				this.partitioned.remove(index);
			}, PARTITION.toMillis(), TimeUnit.MILLISECONDS);
			return queue.isEmpty() ? "partition" : "partition_of_holder";
		}
		int index;
		if (expire.equals("holders") && !queue.isEmpty()) {
			index = queue.get(0);
		}
		else if (expire.equals("waiters") && queue.size() >= 3) {
			// The last in the queue: it cannot become the holder before its connection is closed.
			index = queue.get(queue.size() - 1);
		}
		else {
			return null;
		}
		// Never a partitioned worker: the server would end a session whose holder cannot hear of it.
		String session = this.workers.get(index).latest("SESSION");
		if (session == null || this.partitioned.contains(index)) {
			return null;
		}
		String[] parts = session.split(" ");
		int attempts = Chaos.expireSession(this.server.getConnectString(), Long.parseUnsignedLong(parts[0], 16),
				Base64.getDecoder().decode(parts[1]), Integer.parseInt(parts[2]), Duration.ofSeconds(10));
		// One attempt only: the session had already ended (a partition or restart came first).
		return (attempts > 1) ? "session_expiry_of_" + expire : "session_already_gone";
	}

	/**
	 * Return the workers in the lock's queue, holder first: the owners of the lock znodes in
	 * sequence order, matched against the sessions the workers printed.
	 */
	private List<Integer> lockQueue() throws Exception {
		String lockPath = LockWorker.ROOT + LOCK_PATH;
		List<String> children;
		try {
			children = new ArrayList<>(this.client.getChildren().forPath(lockPath));
		}
		catch (KeeperException.NoNodeException ex) {
			// Nobody holds or waits: the server reaped the empty container.
			return List.of();
		}
		children.sort(Comparator.comparing((String child) -> child.substring(child.lastIndexOf('-') + 1)));
		List<Integer> queue = new ArrayList<>();
		for (String child : children) {
			Stat stat = this.client.checkExists().forPath(lockPath + "/" + child);
			String owner = (stat != null) ? Long.toHexString(stat.getEphemeralOwner()) + " " : null;
			for (int i = 0; owner != null && i < this.workers.size(); i++) {
				String session = this.workers.get(i).latest("SESSION");
				if (session != null && session.startsWith(owner)) {
					queue.add(i);
				}
			}
		}
		return queue;
	}

	/**
	 * Start the workers, let them go at once, wait for them to finish and read their histories.
	 * @param count how many worker JVMs
	 * @param threads how many threads take the lock in each
	 * @param grantsEach the most grants of each JVM
	 * @param until stop once the counter reached this value, 0 for no such limit
	 * @param handoff the workers' local hand-off settings
	 */
	private List<GrantRecord> runWorkers(String name, int count, int threads, int grantsEach, long until,
			LocalHandoff handoff, ClientSocket socket, boolean throughProxies, Duration timeout) throws Exception {
		return runWorkers(name, count, threads, grantsEach, until, handoff, socket, throughProxies, timeout, false);
	}

	/**
	 * As {@link #runWorkers(String, int, int, int, long, LocalHandoff, ClientSocket, boolean, Duration)},
	 * the workers acquiring asynchronously when {@code async}.
	 */
	private List<GrantRecord> runWorkers(String name, int count, int threads, int grantsEach, long until,
			LocalHandoff handoff, ClientSocket socket, boolean throughProxies, Duration timeout, boolean async)
			throws Exception {
		return runWorkers(name, count, threads, grantsEach, until, handoff, socket, throughProxies, timeout, async, false);
	}

	/**
	 * As {@link #runWorkers(String, int, int, int, long, LocalHandoff, ClientSocket, boolean, Duration, boolean)},
	 * the workers' registries keeping their znodes between grants when {@code keep}.
	 */
	private List<GrantRecord> runWorkers(String name, int count, int threads, int grantsEach, long until,
			LocalHandoff handoff, ClientSocket socket, boolean throughProxies, Duration timeout, boolean async,
			boolean keep) throws Exception {
		List<Path> histories = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			Path history = Chaos.OUTPUT_DIR.resolve(name + "-worker-" + i + ".csv").toAbsolutePath();
			histories.add(history);
			String connectString = this.server.getConnectString();
			if (throughProxies) {
				TcpProxy proxy = TcpProxy.start(this.server.getPort());
				this.proxies.add(proxy);
				connectString = proxy.connectString();
			}
			this.workers.add(ChildJvm.start(name + "-worker-" + i,
					LockWorker.historyArgs(connectString, "w" + i, grantsEach, (int) SESSION_TIMEOUT.toMillis(), LOCK_PATH,
							COUNTER_PATH, history, socket, threads, until, handoff, async, keep)));
		}
		for (ChildJvm worker : this.workers) {
			worker.awaitLine("READY", Duration.ofSeconds(90));
		}
		long start = System.nanoTime();
		for (ChildJvm worker : this.workers) {
			worker.send("GO");
		}
		for (ChildJvm worker : this.workers) {
			String done = worker.awaitLine("DONE", timeout.minus(Duration.ofNanos(System.nanoTime() - start)));
			assertThat(worker.awaitExit(Duration.ofSeconds(30))).as("%s exit code", worker.name()).isZero();
			Chaos.report("%s %s done=%s", name, worker.name(), done);
		}
		this.runMs = Chaos.millisSince(start);
		Chaos.report("%s workers=%d threads_each=%d grants_each=%d until=%d handoff=%s run_ms=%d", name, count, threads,
				grantsEach, until, LockWorker.handoffArg(handoff), this.runMs);
		List<GrantRecord> records = new ArrayList<>();
		for (Path history : histories) {
			for (String line : Files.readAllLines(history, StandardCharsets.UTF_8)) {
				records.add(GrantRecord.parse(line));
			}
		}
		return records;
	}

	private HistoryChecker.Result check(String name, List<GrantRecord> records) throws Exception {
		String[] counter = new String(this.client.getData().forPath(COUNTER_PATH), StandardCharsets.UTF_8).split(",");
		HistoryChecker.Result result = HistoryChecker.check(records, Long.parseLong(counter[0]),
				Long.parseLong(counter[1]));
		Chaos.report("%s %s counter=%s,%s handovers=%d", name, result.summary(), counter[0], counter[1],
				handovers(records));
		result.violations().stream().limit(20).forEach((violation) -> Chaos.report("%s violation %s", name, violation));
		writeViolations(name, result);
		return result;
	}

	/** How often the lock passed to another worker, in grant order: evidence of contention. */
	private static long handovers(List<GrantRecord> records) {
		List<GrantRecord> byToken = records.stream()
			.filter((record) -> record.token() > 0)
			.sorted(HistoryChecker.GRANT_ORDER)
			.toList();
		long handovers = 0;
		for (int i = 1; i < byToken.size(); i++) {
			if (!byToken.get(i).client().equals(byToken.get(i - 1).client())) {
				handovers++;
			}
		}
		return handovers;
	}

	private static void writeViolations(String name, HistoryChecker.Result result) throws IOException {
		Files.write(Chaos.OUTPUT_DIR.resolve(name + "-violations.txt"), result.violations(), StandardCharsets.UTF_8);
	}

}
