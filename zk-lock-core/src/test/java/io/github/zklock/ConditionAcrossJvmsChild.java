package io.github.zklock;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import io.github.zklock.curator.CuratorLockRegistry;

/**
 * One application of {@link ConditionAcrossJvmsTests}, run in a child JVM: producer and consumer
 * threads of a bounded queue kept in a znode, read and written only under the lock of one key, and
 * waiting on that key's one distributed {@link Condition}. A producer waits while the queue is full
 * and a consumer while it is empty; each signals all after it put or took an item (one condition
 * for both, so {@code signalAll}). Every thread also waits while the queue's phase is
 * {@link Phase#START} and ends once it is {@link Phase#END}: the test opens and closes the queue
 * with one {@code signalAll} each, which must wake every thread of every JVM (after the last item
 * nobody else signals).
 *
 * <p>Arguments: {@code <connectString> <name> <roles> <lockKey> <queuePath> <items> <capacity>
 * <awaitBoundMs>}, the roles a comma-separated list of {@code producer} and {@code consumer}, one
 * thread each. It prints the lines of its protocol on stdout, each starting with {@value #PREFIX}:
 * <ul>
 * <li>{@code PUT <item> <thread>} and {@code TAKE <item> <thread>}, under the lock;</li>
 * <li>{@code WOKE <role> <thread> <ms> <signal>} for each await that returned signalled: the time
 * from the first signal sent after the await queued (number {@code signal}: every holder that
 * changes the queue signals all, so the first signal of a holder after the waiter queued must wake
 * it) to the return of the await, the lock held again, by the wall clock (every JVM runs on one
 * machine);</li>
 * <li>{@code SPURIOUS <role> <thread>} for an await that returned with no signal sent since it
 * queued (a wake-up the contract allows), {@code TIMEOUT <role> <thread>} for one whose bound ran
 * out (a lost wake-up here), {@code ERROR ...} for anything else that went wrong (a versioned write
 * of the queue that failed means two holders at once);</li>
 * <li>{@code DONE <name>} at the end; the exit code is 0 when no thread failed.</li>
 * </ul>
 */
final class ConditionAcrossJvmsChild {

	/** The start of every protocol line on stdout. */
	static final String PREFIX = "CONDITION ";

	/** The lock registry's root path. */
	static final String ROOT = "/locks";

	/** How many signals the queue znode keeps the times of. */
	private static final int SIGNALS_KEPT = 128;

	private static final Duration BOUND = Duration.ofSeconds(30);

	private ConditionAcrossJvmsChild() {
	}

	public static void main(String[] args) {
		try {
			System.exit(run(args) ? 0 : 1);
		}
		catch (Throwable ex) {
			say("ERROR main " + ex);
			ex.printStackTrace(System.out);
			System.exit(2);
		}
	}

	private static boolean run(String[] args) throws Exception {
		String connectString = args[0];
		String name = args[1];
		String[] roles = args[2].split(",");
		String key = args[3];
		String queuePath = args[4];
		int items = Integer.parseInt(args[5]);
		int capacity = Integer.parseInt(args[6]);
		long awaitBoundMs = Long.parseLong(args[7]);
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs(30_000)
			.connectionTimeoutMs(10_000)
			.retryPolicy(new ExponentialBackoffRetry(100, 5))
			.build();
		client.start();
		if (!client.blockUntilConnected((int) BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new IllegalStateException("Not connected to " + connectString + " within " + BOUND);
		}
		CuratorLockRegistry registry = new CuratorLockRegistry(client, ROOT, 100);
		LockTemplate template = new LockTemplate(registry, BOUND);
		Lock lock = template.lock(key);
		Condition condition = lock.newCondition();
		AtomicBoolean failed = new AtomicBoolean();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < roles.length; i++) {
			String threadName = name + "-" + roles[i] + "-" + i;
			boolean producer = roles[i].equals("producer");
			Worker worker = new Worker(client, lock, condition, queuePath, items, capacity, awaitBoundMs, producer);
			Thread thread = new Thread(() -> {
				try {
					worker.run();
				}
				catch (Throwable ex) {
					failed.set(true);
					say("ERROR " + Thread.currentThread().getName() + " " + ex);
					ex.printStackTrace(System.out);
				}
			}, threadName);
			thread.setDaemon(true);
			threads.add(thread);
			thread.start();
		}
		long joinDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
		for (Thread thread : threads) {
			thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
			if (thread.isAlive()) {
				failed.set(true);
				say("ERROR " + thread.getName() + " still running");
			}
		}
		registry.close();
		client.close();
		say("DONE " + name);
		return !failed.get();
	}

	static synchronized void say(String line) {
		System.out.println(PREFIX + line);
		System.out.flush();
	}

	/** One producer or consumer thread. */
	private static final class Worker {

		private final CuratorFramework client;

		private final Lock lock;

		private final Condition condition;

		private final String queuePath;

		private final int items;

		private final int capacity;

		private final long awaitBoundMs;

		private final boolean producer;

		private final String role;

		Worker(CuratorFramework client, Lock lock, Condition condition, String queuePath, int items, int capacity,
				long awaitBoundMs, boolean producer) {
			this.client = client;
			this.lock = lock;
			this.condition = condition;
			this.queuePath = queuePath;
			this.items = items;
			this.capacity = capacity;
			this.awaitBoundMs = awaitBoundMs;
			this.producer = producer;
			this.role = producer ? "producer" : "consumer";
		}

		void run() throws Exception {
			String thread = Thread.currentThread().getName();
			while (true) {
				if (!this.lock.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("Lock not granted within " + BOUND);
				}
				try {
					// The signal sequence number when this thread's last await queued, -1 for none.
					long queuedAfter = -1;
					long returnedAt = 0;
					while (true) {
						Stat stat = new Stat();
						Queue queue = Queue.parse(this.client.getData().storingStatIn(stat).forPath(this.queuePath));
						if (queuedAfter >= 0) {
							woke(queue, queuedAfter, returnedAt, thread);
							queuedAfter = -1;
						}
						if (queue.phase == Phase.END) {
							return;
						}
						boolean can = this.producer ? queue.next < this.items && queue.items.size() < this.capacity
								: !queue.items.isEmpty();
						if (queue.phase == Phase.RUN && can) {
							String line;
							if (this.producer) {
								int item = queue.next++;
								queue.items.add(item);
								line = "PUT " + item + " " + thread;
							}
							else {
								int item = queue.items.remove(0);
								queue.consumed++;
								line = "TAKE " + item + " " + thread;
							}
							queue.signalled(System.currentTimeMillis());
							try {
								this.client.setData().withVersion(stat.getVersion()).forPath(this.queuePath, queue.bytes());
							}
							catch (KeeperException.BadVersionException ex) {
								throw new IllegalStateException("The queue changed under the lock: two holders at once", ex);
							}
							say(line);
							this.condition.signalAll();
							break;
						}
						queuedAfter = queue.lastSignal();
						if (!this.condition.await(this.awaitBoundMs, TimeUnit.MILLISECONDS)) {
							say("TIMEOUT " + this.role + " " + thread);
							queuedAfter = -1;
						}
						returnedAt = System.currentTimeMillis();
					}
				}
				finally {
					this.lock.unlock();
				}
			}
		}

		private void woke(Queue queue, long queuedAfter, long returnedAt, String thread) {
			if (queue.lastSignal() == queuedAfter) {
				say("SPURIOUS " + this.role + " " + thread);
				return;
			}
			Long signalledAt = queue.signals.get(queuedAfter + 1);
			if (signalledAt == null) {
				say("ERROR " + thread + " the time of signal " + (queuedAfter + 1) + " is no longer kept");
				return;
			}
			say("WOKE " + this.role + " " + thread + " " + (returnedAt - signalledAt) + " " + (queuedAfter + 1));
		}

	}

	/** The phases of the queue, which the test moves on. */
	enum Phase {

		/** Every thread waits: the test opens the queue once all wait. */
		START,

		/** Producers put while it is not full and not every item was produced, consumers take. */
		RUN,

		/** Every thread ends: the test closes the queue once all wait after the last item. */
		END

	}

	/**
	 * The queue znode's data, as text: its phase, the next item to produce, how many were consumed,
	 * the items queued, and the times of the latest signals by sequence number.
	 */
	static final class Queue {

		Phase phase = Phase.START;

		int next;

		int consumed;

		final List<Integer> items = new ArrayList<>();

		/** Signal sequence number to the signaller's wall-clock time, oldest first. */
		final Map<Long, Long> signals = new LinkedHashMap<>();

		static Queue parse(byte[] data) {
			Queue queue = new Queue();
			for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
				int equals = line.indexOf('=');
				String name = line.substring(0, equals);
				String value = line.substring(equals + 1).trim();
				switch (name) {
					case "phase" -> queue.phase = Phase.valueOf(value);
					case "next" -> queue.next = Integer.parseInt(value);
					case "consumed" -> queue.consumed = Integer.parseInt(value);
					case "items" -> {
						for (String item : value.isEmpty() ? new String[0] : value.split(",")) {
							queue.items.add(Integer.parseInt(item));
						}
					}
					case "signals" -> {
						for (String signal : value.isEmpty() ? new String[0] : value.split(" ")) {
							String[] parts = signal.split("@");
							queue.signals.put(Long.parseLong(parts[0]), Long.parseLong(parts[1]));
						}
					}
					default -> throw new IllegalArgumentException("Unknown queue field " + line);
				}
			}
			return queue;
		}

		/** The sequence number of the latest signal, 0 for none. */
		long lastSignal() {
			long last = 0;
			for (long sequence : this.signals.keySet()) {
				last = sequence;
			}
			return last;
		}

		/** Note a signal about to be sent at the given time. */
		void signalled(long atMs) {
			this.signals.put(lastSignal() + 1, atMs);
			while (this.signals.size() > SIGNALS_KEPT) {
				this.signals.remove(this.signals.keySet().iterator().next());
			}
		}

		byte[] bytes() {
			StringBuilder text = new StringBuilder();
			text.append("phase=").append(this.phase).append('\n');
			text.append("next=").append(this.next).append('\n');
			text.append("consumed=").append(this.consumed).append('\n');
			text.append("items=");
			for (int i = 0; i < this.items.size(); i++) {
				text.append((i > 0) ? "," : "").append(this.items.get(i));
			}
			text.append('\n').append("signals=");
			boolean first = true;
			for (Map.Entry<Long, Long> signal : this.signals.entrySet()) {
				text.append(first ? "" : " ").append(signal.getKey()).append('@').append(signal.getValue());
				first = false;
			}
			return text.append('\n').toString().getBytes(StandardCharsets.UTF_8);
		}

	}

}
