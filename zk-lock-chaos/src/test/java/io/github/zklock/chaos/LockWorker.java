package io.github.zklock.chaos;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.chaos.GrantRecord.Outcome;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.KeptLocks;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.Admins.admin;
import static io.github.zklock.curator.Admins.handedOver;

/**
 * The lock client of the multi-JVM chaos tests, started in a child JVM by {@link ChildJvm}.
 * It talks to the parent through lines on stdout starting with {@value #PREFIX}, and reads
 * {@code GO} from stdin where it waits for a start signal.
 * <ul>
 * <li>{@code hold <connectString> <path> <sessionTimeoutMs>}: acquire the lock, print
 * {@code HELD <token>}, then sleep until killed.</li>
 * <li>{@code history <connectString> <client> <grants> <sessionTimeoutMs> <lockPath>
 * <counterPath> <outFile> <NIO|NETTY> <threads> <until> <handoff> <sync|async> <kept|not-kept>}: print
 * {@code SESSION <id> <password>} for each session and {@code READY}, wait for {@code GO}, then
 * take the lock {@code grants} times in all, on {@code threads} threads of one registry with the
 * given local hand-off settings ({@code enabled:maxGrants:maxTimeMs}, see {@link #handoffArg}),
 * synchronously or through the registry's asynchronous chain ({@code async}), keeping its znode
 * between grants ({@code kept}: kept locks on),
 * stopping earlier once a grant has counted the counter up to {@code until} (0: no such limit).
 * Under each grant read the fenced counter znode ({@code token,value}) and write
 * {@code myToken,value+1} only if the stored token is not higher (a store rejects only lower
 * tokens: grants of one chain of local hand-offs share theirs), as a versioned (compare-and-set)
 * write. When that fails the worker waits up to a second to hear whether it still holds the lock;
 * a worker told that it lost the lock stays in the grant {@value #LINGER_WHEN_TOLD_MS} ms longer
 * (finishing local work, as an application would), which makes told overlaps. Each grant is
 * logged as a {@link GrantRecord} line in {@code outFile}, numbered in the order the worker's
 * threads held the lock. Prints {@code DONE <grants> <failures>}.</li>
 * <li>{@code chain <connectString> <path> <sessionTimeoutMs> <threads> <holdMs> <outFile> [<keep>
 * <idleMs>]}: take the lock in turns on {@code threads} threads (local hand-off on, the default;
 * kept locks on with {@code keep} {@code true}), each grant held {@code holdMs}, each thread
 * waiting {@code idleMs} after each release; print {@code GRANTING} after the first 50 grants, go on until {@code STOP} comes
 * on stdin, and log each grant as a line {@code startMs,endMs,token,local,held,toldMs} in
 * {@code outFile} (wall-clock times; {@code held} whether it was held when granted, {@code toldMs}
 * when its holder was first told it was not held, 0 if not before its end). Prints
 * {@code DONE <grants>}.</li>
 * <li>{@code await <connectString> <path> <sessionTimeoutMs>}: take the lock through a
 * {@link LockTemplate} view ({@code lock(path)}), print {@code HELD <session>} and
 * {@code AWAITING}, and wait on the lock's condition ({@code awaitUninterruptibly()}); print
 * {@code OUTCOME RETURNED held=<n>} if the wait returned, {@code OUTCOME LOST held=<n> <message>}
 * if it failed with {@link LockLostException}, {@code OUTCOME FAILED <exception>} otherwise
 * ({@code n} the registry's held locks); then unlock, {@code UNLOCK OK} or
 * {@code UNLOCK FAILED <exception>}; then take the lock again in the session of the moment
 * ({@code tryLock}, up to 60 s), {@code RELOCKED <granted> <session>}, and release it. Prints
 * {@code DONE}.</li>
 * </ul>
 */
final class LockWorker {

	/** Start of every protocol line on stdout. */
	static final String PREFIX = "ZKLOCK-WORKER ";

	static final String ROOT = "/chaos";

	/** How long a history worker stays in a grant it was told it lost, before releasing it. */
	static final long LINGER_WHEN_TOLD_MS = 2000;

	private LockWorker() {
	}

	public static void main(String[] args) {
		try {
			switch (args[0]) {
				case "hold" -> hold(args[1], args[2], Integer.parseInt(args[3]));
				case "history" -> history(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
						args[5], args[6], Path.of(args[7]), ClientSocket.valueOf(args[8]), Integer.parseInt(args[9]),
						Long.parseLong(args[10]), parseHandoff(args[11]), args.length > 12 && args[12].equals("async"),
						args.length > 13 && args[13].equals("kept"));
				case "chain" -> chain(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
						Long.parseLong(args[5]), Path.of(args[6]), args.length > 7 && Boolean.parseBoolean(args[7]),
						(args.length > 8) ? Long.parseLong(args[8]) : 0);
				case "await" -> awaitCondition(args[1], args[2], Integer.parseInt(args[3]));
				default -> throw new IllegalArgumentException("Unknown mode " + args[0]);
			}
			System.exit(0);
		}
		catch (Throwable ex) {
			ex.printStackTrace();
			System.exit(2);
		}
	}

	private static void hold(String connectString, String path, int sessionTimeoutMs) throws Exception {
		// In the child JVM there is no ZooKeeperExtension: the worker builds its own client.
		CuratorFramework client = Chaos.startClient(connectString, Duration.ofMillis(sessionTimeoutMs));
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 16);
		LockHandle handle = registry.tryAcquire(Chaos.exclusive(path, Duration.ofSeconds(60)))
			.orElseThrow(() -> new IllegalStateException("Not granted " + path + " within 60 s"));
		say("HELD " + handle.fencingToken());
		// The parent kills this JVM; if it does not, end on our own.
		Thread.sleep(120_000);
		handle.release();
	}

	private static void awaitCondition(String connectString, String path, int sessionTimeoutMs) throws Exception {
		CuratorFramework client = Chaos.startClient(connectString, Duration.ofMillis(sessionTimeoutMs));
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 16);
		Lock lock = new LockTemplate(registry, Duration.ofSeconds(60)).lock(path);
		if (!lock.tryLock(60, TimeUnit.SECONDS)) {
			throw new IllegalStateException("Not granted " + path + " within 60 s");
		}
		say("HELD " + session(client));
		say("AWAITING");
		String outcome;
		try {
			lock.newCondition().awaitUninterruptibly();
			outcome = "RETURNED held=" + admin(registry).heldLockCount();
		}
		catch (LockLostException ex) {
			outcome = "LOST held=" + admin(registry).heldLockCount() + " " + ex.getMessage();
		}
		catch (RuntimeException ex) {
			outcome = "FAILED " + ex;
			ex.printStackTrace(System.out);
		}
		say("OUTCOME " + outcome.replace('\n', ' '));
		try {
			lock.unlock();
			say("UNLOCK OK");
		}
		catch (RuntimeException ex) {
			say("UNLOCK FAILED " + ex);
		}
		boolean relocked = lock.tryLock(60, TimeUnit.SECONDS);
		say("RELOCKED " + relocked + " " + session(client));
		if (relocked) {
			lock.unlock();
		}
		registry.close();
		say("DONE");
	}

	private static String session(CuratorFramework client) {
		try {
			return Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
		}
		catch (Exception ex) {
			return "unknown";
		}
	}

	private static void history(String connectString, String name, int grants, int sessionTimeoutMs, String lockPath,
			String counterPath, Path out, ClientSocket socket, int threads, long until, LocalHandoff handoff,
			boolean async, boolean keep) throws Exception {
		CuratorFramework client = Chaos.startClient(connectString, Duration.ofMillis(sessionTimeoutMs), socket);
		client.getConnectionStateListenable().addListener((c, state) -> {
			if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
				saySession(c);
			}
		});
		saySession(client);
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 16);
		registry.setLocalHandoff(handoff);
		if (keep) {
			registry.setKeptLocks(KeptLocks.ENABLED);
		}
		Map<LockHandle, Long> told = new ConcurrentHashMap<>();
		registry.addLockStateListener((event) -> {
			if (event.state() != LockState.HELD) {
				told.putIfAbsent(event.handle(), System.currentTimeMillis());
			}
		});
		say("READY");
		BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		if (!"GO".equals(stdin.readLine())) {
			throw new IllegalStateException("Expected GO on stdin");
		}
		AtomicInteger claimed = new AtomicInteger();
		AtomicLong granted = new AtomicLong();
		AtomicInteger failures = new AtomicInteger();
		AtomicBoolean enough = new AtomicBoolean();
		AtomicInteger threadNumber = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(threads,
				(task) -> new Thread(task, name + "-thread-" + threadNumber.getAndIncrement()));
		try (Writer writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
			List<Future<?>> loops = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				loops.add(pool.submit(() -> {
					while (!enough.get() && claimed.getAndIncrement() < grants) {
						Optional<RegistryGrant> attempt;
						try {
							attempt = async ? submit(registry, Chaos.exclusive(lockPath, Duration.ofSeconds(30)))
									: registry.tryAcquire(Chaos.exclusive(lockPath, Duration.ofSeconds(30)));
						}
						catch (LockException ex) {
							// ZooKeeper unreachable for now (a fault of the soak): try again.
							claimed.decrementAndGet();
							if (failures.incrementAndGet() > 10_000) {
								throw ex;
							}
							Thread.sleep(20);
							continue;
						}
						if (attempt.isEmpty()) {
							claimed.decrementAndGet();
							failures.incrementAndGet();
							continue;
						}
						LockHandle handle = attempt.get();
						// Numbered under the lock: the order in which this worker's threads held it.
						long seq = granted.getAndIncrement();
						GrantRecord record = underLock(client, name, seq, handle, counterPath, told);
						handle.release();
						synchronized (writer) {
							writer.write(record.toLine());
							writer.write('\n');
						}
						if (until > 0 && record.readValue() + 1 >= until) {
							enough.set(true);
						}
					}
					return null;
				}));
			}
			for (Future<?> loop : loops) {
				// The parent bounds the run and kills this JVM if it takes too long.
				loop.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		say("DONE " + granted.get() + " " + failures.get());
	}

	/**
	 * Acquire through the registry's asynchronous chain (no thread waits in the registry; this
	 * worker's thread waits for the future, as a caller joining it would).
	 */
	private static Optional<RegistryGrant> submit(CuratorLockRegistry registry, LockTarget target) throws Exception {
		try {
			return Objects.requireNonNull(registry.submit(target)).get(60, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof LockException lockException) {
				throw lockException;
			}
			throw ex;
		}
	}

	private static void chain(String connectString, String path, int sessionTimeoutMs, int threads, long holdMs,
			Path out, boolean keep, long idleMs) throws Exception {
		CuratorFramework client = Chaos.startClient(connectString, Duration.ofMillis(sessionTimeoutMs));
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 16);
		if (keep) {
			registry.setKeptLocks(KeptLocks.ENABLED);
		}
		Map<LockHandle, Long> told = new ConcurrentHashMap<>();
		registry.addLockStateListener((event) -> {
			if (event.state() != LockState.HELD) {
				told.putIfAbsent(event.handle(), System.currentTimeMillis());
			}
		});
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong granted = new AtomicLong();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try (Writer writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
			List<Future<?>> loops = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				loops.add(pool.submit(() -> {
					while (!stop.get()) {
						Optional<RegistryGrant> attempt;
						try {
							attempt = registry.tryAcquire(Chaos.exclusive(path, Duration.ofSeconds(60)));
						}
						catch (LockException ex) {
							// The session is being replaced: try again.
							Thread.sleep(20);
							continue;
						}
						if (attempt.isEmpty()) {
							continue;
						}
						LockHandle handle = attempt.get();
						// When the grant was decided (a hand-over: before a pause that delayed its
						// return, or after it), as the operators' view tells it; not when it returned.
						long startMs = decidedMs(registry, handle);
						boolean held = handle.isHeld();
						long token = -1;
						try {
							token = handle.fencingToken();
						}
						catch (LockException ex) {
							held = false;
						}
						Thread.sleep(holdMs);
						if (!handle.isHeld()) {
							told.putIfAbsent(handle, System.currentTimeMillis());
						}
						long endMs = System.currentTimeMillis();
						handle.release();
						synchronized (writer) {
							writer.write(startMs + "," + endMs + "," + token + "," + handedOver(handle) + "," + held
									+ "," + toldMs(handle, told) + "\n");
						}
						if (granted.incrementAndGet() == 50) {
							say("GRANTING");
						}
						if (idleMs > 0) {
							// Nobody holds the key meanwhile: kept, with kept locks on.
							Thread.sleep(idleMs);
						}
					}
					return null;
				}));
			}
			BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if (!"STOP".equals(stdin.readLine())) {
				throw new IllegalStateException("Expected STOP on stdin");
			}
			stop.set(true);
			for (Future<?> loop : loops) {
				loop.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		say("DONE " + granted.get());
	}

	/** When a grant of the calling thread was decided, by the registry's clock (its operators' view). */
	private static long decidedMs(CuratorLockRegistry registry, LockHandle handle) {
		String thread = Thread.currentThread().getName();
		return new CuratorLockAdmin(registry).describeHeldLocks()
			.stream()
			.filter((held) -> held.holder().equals(thread) && held.path().equals(handle.path()))
			.mapToLong((held) -> held.since().toEpochMilli())
			.findFirst()
			.orElseGet(System::currentTimeMillis);
	}

	private static GrantRecord underLock(CuratorFramework client, String name, long seq, LockHandle handle,
			String counterPath, Map<LockHandle, Long> told) throws InterruptedException {
		long startMs = System.currentTimeMillis();
		long token;
		try {
			token = handle.fencingToken();
		}
		catch (LockException ex) {
			held(handle, told);
			long endMs = System.currentTimeMillis();
			return new GrantRecord(name, seq, -1, startMs, endMs, toldMs(handle, told), -1, -1, -1, Outcome.NO_TOKEN, 0,
					handedOver(handle));
		}
		long readToken = -1;
		long readValue = -1;
		long readMzxid = -1;
		long writeMzxid = 0;
		Outcome outcome;
		try {
			// The raw ZooKeeper handle: no retry, so a lost answer is UNKNOWN, never a retried write.
			ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
			Stat stat = new Stat();
			String[] register = new String(zooKeeper.getData(counterPath, false, stat), StandardCharsets.UTF_8)
				.split(",");
			readToken = Long.parseLong(register[0]);
			readValue = Long.parseLong(register[1]);
			readMzxid = stat.getMzxid();
			if (!held(handle, told)) {
				outcome = Outcome.SKIPPED;
			}
			else if (readToken > token) {
				// A store rejects only lower tokens: the grants of a local chain share one.
				outcome = Outcome.FENCED;
			}
			else {
				outcome = Outcome.UNKNOWN;
				byte[] value = (token + "," + (readValue + 1)).getBytes(StandardCharsets.UTF_8);
				writeMzxid = zooKeeper.setData(counterPath, value, stat.getVersion()).getMzxid();
				outcome = Outcome.WROTE;
			}
		}
		catch (KeeperException.BadVersionException ex) {
			outcome = Outcome.CONFLICT;
		}
		catch (InterruptedException ex) {
			throw ex;
		}
		catch (Exception ex) {
			// Connection loss or expiry: UNKNOWN if the write was sent, SKIPPED if the read failed.
			outcome = (readValue >= 0) ? Outcome.UNKNOWN : Outcome.SKIPPED;
		}
		if (outcome != Outcome.WROTE) {
			// Something failed under the lock: give the connection-state news a moment to arrive.
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
			while (held(handle, told) && System.nanoTime() < deadline) {
				Thread.sleep(5);
			}
		}
		if (!held(handle, told)) {
			// Like an application that finishes local work after it was told: a told overlap.
			Thread.sleep(LINGER_WHEN_TOLD_MS);
		}
		long endMs = System.currentTimeMillis();
		return new GrantRecord(name, seq, token, startMs, endMs, toldMs(handle, told), readToken, readValue, readMzxid,
				outcome, writeMzxid, handedOver(handle));
	}

	/**
	 * Return whether the grant still holds; if not, note when this worker saw it first. A holder is
	 * told through {@code isHeld()} as well as through the listener, and the listener runs on
	 * Curator's thread, which may be scheduled later.
	 */
	private static boolean held(LockHandle handle, Map<LockHandle, Long> told) {
		if (handle.isHeld()) {
			return true;
		}
		told.putIfAbsent(handle, System.currentTimeMillis());
		return false;
	}

	private static long toldMs(LockHandle handle, Map<LockHandle, Long> told) {
		Long at = told.remove(handle);
		return (at != null) ? at : 0;
	}

	private static void saySession(CuratorFramework client) {
		try {
			ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
			say("SESSION " + Long.toHexString(zooKeeper.getSessionId()) + " "
					+ Base64.getEncoder().encodeToString(zooKeeper.getSessionPasswd()) + " "
					+ zooKeeper.getSessionTimeout());
		}
		catch (Exception ex) {
			// Not connected after all: the next CONNECTED or RECONNECTED prints it.
			System.out.println("No session to print: " + ex);
		}
	}

	private static synchronized void say(String line) {
		System.out.println(PREFIX + line);
		System.out.flush();
	}

	/**
	 * Return the arguments of a history worker.
	 * @param grants the most grants the worker makes, over all its threads
	 * @param threads how many threads take the lock
	 * @param until stop once a grant counted the counter up to this value; 0 for no such limit
	 * @param handoff the worker registry's local hand-off settings
	 */
	static String[] historyArgs(String connectString, String client, int grants, int sessionTimeoutMs, String lockPath,
			String counterPath, Path out, ClientSocket socket, int threads, long until, LocalHandoff handoff,
			boolean async) {
		return historyArgs(connectString, client, grants, sessionTimeoutMs, lockPath, counterPath, out, socket, threads,
				until, handoff, async, false);
	}

	/**
	 * Return the arguments of a history worker whose registry keeps znodes when {@code keep}.
	 * @see #historyArgs(String, String, int, int, String, String, Path, ClientSocket, int, long, LocalHandoff, boolean)
	 */
	static String[] historyArgs(String connectString, String client, int grants, int sessionTimeoutMs, String lockPath,
			String counterPath, Path out, ClientSocket socket, int threads, long until, LocalHandoff handoff,
			boolean async, boolean keep) {
		return new String[] { "history", connectString, client, Integer.toString(grants),
				Integer.toString(sessionTimeoutMs), lockPath, counterPath, out.toString(), socket.name(),
				Integer.toString(threads), Long.toString(until), handoffArg(handoff), async ? "async" : "sync",
				keep ? "kept" : "not-kept" };
	}

	/** Local hand-off settings as one argument: {@code enabled:maxGrants:maxTimeMs}. */
	static String handoffArg(LocalHandoff handoff) {
		return handoff.enabled() + ":" + handoff.maxGrants() + ":" + handoff.maxTime().toMillis();
	}

	private static LocalHandoff parseHandoff(String arg) {
		String[] parts = arg.split(":");
		return new LocalHandoff(Boolean.parseBoolean(parts[0]), Integer.parseInt(parts[1]),
				Duration.ofMillis(Long.parseLong(parts[2])));
	}

}
