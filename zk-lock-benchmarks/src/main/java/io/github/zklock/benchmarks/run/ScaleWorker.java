package io.github.zklock.benchmarks.run;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ConfigurableApplicationContext;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

import io.github.zklock.LockCallback;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * One application of the scale scenario, in a JVM of its own (started by {@link ScaleScenario},
 * three at a time): a {@link ScaleApplication} (the starter, Boot's meter and observation
 * registries), started once, then the commands the runner writes to its standard input, each
 * answered by one {@code RESULT} line:
 * <ul>
 * <li>{@code CALIBRATE <from> <to> <threads>}: the heap full collections leave in use, then the
 * same after locking the keys [from, to) of the flat layout (as many as the cache holds, keys that
 * the measured runs do not use): the heap one cached key costs in this application;</li>
 * <li>{@code FLOOR <layout> <from> <to> <threads>}: with a plain ZooKeeper client of its own (no
 * Curator), per key {@code create} an ephemeral znode {@code /floor-<layout>/<n>} and
 * {@code delete} it, {@code threads} threads taking the next key;</li>
 * <li>{@code RAW <layout> <from> <to> <threads>}: the same keys through raw Curator, a new
 * {@code InterProcessMutex} per key on the application's Curator client, below {@code /raw} (the
 * depth of the starter's root path), acquired and released once each;</li>
 * <li>{@code RUN <layout> <from> <to> <threads>}: lock and release every key once, EXCLUSIVE,
 * {@code flat}: {@code /orders/<n>}, {@code deep}: {@code /tenant/<n mod tenants>/order/<n>};</li>
 * <li>{@code HEAP}: the heap full collections leave in use, and the keys cached;</li>
 * <li>{@code METERS}: the meters of the registry, the distinct tags of the {@code zk.lock.*}
 * meters and observations, and those that name a key;</li>
 * <li>{@code QUIT} (or the end of the input): close and exit.</li>
 * </ul>
 * How a key is locked ({@code api}): {@code annotation}, a call of {@link ScaleApplication.Orders}
 * through the {@code @DistributedLock} proxy; {@code template}, {@code LockTemplate.execute} of a
 * {@code LockRequest.of(key).withName("/orders/{n}")} (the key template as its name); or
 * {@code template-key}, {@code LockTemplate.execute(key, EXCLUSIVE, null, callback)}, whose
 * request is named after its key (a control: the meter count must see those names).
 * <p>
 * Arguments: JVM number, connect string, {@code zk.lock.cache-capacity}, api, tenants.
 */
public final class ScaleWorker {

	static final List<String> APIS = List.of("annotation", "template", "template-key");

	/** A tag value that names an order of either layout, as a key or as a path below the root. */
	static final Pattern KEY_VALUE = Pattern.compile(".*/(orders|order)/\\d+.*");

	private static final LockCallback<Object> NOTHING = (handle) -> null;

	private final int jvm;

	private final String connectString;

	private final String api;

	private final int tenants;

	private final ConfigurableApplicationContext context;

	private final ScaleApplication.Orders orders;

	private final LockTemplate template;

	private final CuratorLockAdmin admin;

	private final MeterRegistry meters;

	private final ScaleApplication.ObservationTags observationTags;

	private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "scale-worker");
		thread.setDaemon(true);
		return thread;
	});

	private @Nullable ZooKeeper plain;

	ScaleWorker(int jvm, String connectString, int cacheCapacity, String api, int tenants) {
		if (!APIS.contains(api)) {
			throw new IllegalArgumentException("Unknown api " + api + ", expected one of " + APIS);
		}
		this.jvm = jvm;
		this.connectString = connectString;
		this.api = api;
		this.tenants = tenants;
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("zk.lock.connect-string", connectString);
		properties.put("zk.lock.cache-capacity", cacheCapacity);
		this.context = ScaleApplication.start(properties);
		this.orders = this.context.getBean(ScaleApplication.Orders.class);
		this.template = this.context.getBean(LockTemplate.class);
		this.admin = this.context.getBean(CuratorLockAdmin.class);
		this.meters = this.context.getBean(MeterRegistry.class);
		this.observationTags = this.context.getBean(ScaleApplication.ObservationTags.class);
	}

	/**
	 * Start the application, then run the commands read from standard input.
	 * @param args JVM number, connect string, cache capacity, api, tenants
	 * @throws Exception if a command fails
	 */
	public static void main(String[] args) throws Exception {
		ScaleWorker worker = new ScaleWorker(Integer.parseInt(args[0]), args[1], Integer.parseInt(args[2]), args[3],
				Integer.parseInt(args[4]));
		try {
			System.out.println("READY");
			BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String command;
			while ((command = commands.readLine()) != null && !command.equals("QUIT")) {
				System.out.println("RESULT " + worker.execute(command.split(" ")));
			}
		}
		finally {
			worker.close();
		}
	}

	String execute(String[] command) throws Exception {
		return switch (command[0]) {
			case "CALIBRATE" -> {
				long baseline = KeyCacheFootprint.usedHeapAfterGc();
				int cachedBefore = this.admin.cachedKeyCount();
				inThreads(Long.parseLong(command[1]), Long.parseLong(command[2]), Integer.parseInt(command[3]),
						key("flat"));
				long calibrated = KeyCacheFootprint.usedHeapAfterGc();
				int cached = this.admin.cachedKeyCount();
				yield "baseline_bytes=" + baseline + " calibrated_bytes=" + calibrated + " per_path_bytes="
						+ (calibrated - baseline) / Math.max(1, cached - cachedBefore) + " cached=" + cached
						+ " cached_before=" + cachedBefore;
			}
			case "FLOOR" -> {
				ZooKeeper zooKeeper = plain();
				String parent = "/floor-" + command[1];
				try {
					zooKeeper.create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
				}
				catch (KeeperException.NodeExistsException ex) {
					// another JVM made it
				}
				Timed timed = inThreads(Long.parseLong(command[2]), Long.parseLong(command[3]),
						Integer.parseInt(command[4]), (n) -> {
							String path = parent + "/" + n;
							zooKeeper.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
							zooKeeper.delete(path, -1);
						});
				yield "cycles=" + timed.cycles + " nanos=" + timed.nanos;
			}
			case "RAW" -> {
				CuratorFramework client = this.context.getBean(CuratorFramework.class);
				boolean flat = "flat".equals(command[1]);
				Timed timed = inThreads(Long.parseLong(command[2]), Long.parseLong(command[3]),
						Integer.parseInt(command[4]), (n) -> {
							InterProcessMutex mutex = new InterProcessMutex(client, flat ? "/raw/orders/" + n
									: "/raw/tenant/" + (n % this.tenants) + "/order/" + n);
							mutex.acquire();
							mutex.release();
						});
				yield "cycles=" + timed.cycles + " nanos=" + timed.nanos;
			}
			case "RUN" -> {
				Key key = key(command[1]);
				Timed timed = inThreads(Long.parseLong(command[2]), Long.parseLong(command[3]),
						Integer.parseInt(command[4]), key);
				yield "cycles=" + timed.cycles + " nanos=" + timed.nanos + " cached=" + this.admin.cachedKeyCount();
			}
			case "HEAP" -> "heap_bytes=" + KeyCacheFootprint.usedHeapAfterGc() + " cached="
					+ this.admin.cachedKeyCount();
			case "METERS" -> meters();
			default -> throw new IllegalArgumentException("Unknown command " + String.join(" ", command));
		};
	}

	/** How one key of a layout is locked, by the worker's api. */
	private Key key(String layout) {
		boolean flat = switch (layout) {
			case "flat" -> true;
			case "deep" -> false;
			default -> throw new IllegalArgumentException("Unknown layout " + layout);
		};
		return switch (this.api) {
			case "annotation" -> flat ? this.orders::flat : (n) -> this.orders.deep(n % this.tenants, n);
			case "template" -> flat ? (n) -> lockByTemplate("/orders/" + n, "/orders/{n}")
					: (n) -> lockByTemplate("/tenant/" + (n % this.tenants) + "/order/" + n,
							"/tenant/{t}/order/{n}");
			default -> flat ? (n) -> this.template.execute("/orders/" + n, LockMode.EXCLUSIVE, null, NOTHING)
					: (n) -> this.template.execute("/tenant/" + (n % this.tenants) + "/order/" + n, LockMode.EXCLUSIVE,
							null, NOTHING);
		};
	}

	private void lockByTemplate(String key, String name) {
		this.template.execute(LockRequest.of(key).withName(name), NOTHING);
	}

	/**
	 * Run {@code key} for every n in [from, to), each once, on {@code threadCount} threads that take
	 * the next n until none is left.
	 */
	private Timed inThreads(long from, long to, int threadCount, Key key) throws Exception {
		AtomicLong next = new AtomicLong(from);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Long>> futures = new ArrayList<>();
		for (int t = 0; t < threadCount; t++) {
			futures.add(this.threads.submit(() -> {
				start.await();
				long cycles = 0;
				long n;
				while ((n = next.getAndIncrement()) < to) {
					key.lock(n);
					cycles++;
				}
				return cycles;
			}));
		}
		long started = System.nanoTime();
		start.countDown();
		long cycles = 0;
		for (Future<Long> future : futures) {
			cycles += future.get(6, TimeUnit.HOURS);
		}
		return new Timed(cycles, System.nanoTime() - started);
	}

	/**
	 * The meters: how many, how many are the lock's ({@code zk.lock.*}), the distinct
	 * {@code key=value} tags of those and of the lock's observations, and the meters and observation
	 * tags whose value names an order ({@link #KEY_VALUE}): a meter per key would be counted there.
	 */
	private String meters() {
		int all = 0;
		int lock = 0;
		int perKey = 0;
		Set<String> lockTags = new HashSet<>();
		for (Meter meter : this.meters.getMeters()) {
			all++;
			boolean named = false;
			for (Tag tag : meter.getId().getTags()) {
				named |= KEY_VALUE.matcher(tag.getValue()).matches();
				if (meter.getId().getName().startsWith("zk.lock")) {
					lockTags.add(tag.getKey() + "=" + tag.getValue());
				}
			}
			if (meter.getId().getName().startsWith("zk.lock")) {
				lock++;
			}
			if (named) {
				perKey++;
			}
		}
		Set<String> observed = this.observationTags.values();
		long perKeyObserved = observed.stream()
			.filter((value) -> KEY_VALUE.matcher(value.substring(value.indexOf('=') + 1)).matches())
			.count();
		Set<String> lockTagsWithoutKeys = new HashSet<>();
		for (String tag : lockTags) {
			if (!KEY_VALUE.matcher(tag.substring(tag.indexOf('=') + 1)).matches()) {
				lockTagsWithoutKeys.add(tag);
			}
		}
		return "meters=" + all + " zk_lock_meters=" + lock + " zk_lock_tag_values=" + lockTags.size()
				+ " observation_tag_values=" + observed.size() + " per_key_meters=" + perKey
				+ " per_key_observation_tag_values=" + perKeyObserved + " zk_lock_tags="
				+ String.join(",", new java.util.TreeSet<>(lockTagsWithoutKeys)).replace(' ', '_');
	}

	private ZooKeeper plain() throws Exception {
		if (this.plain == null) {
			CountDownLatch connected = new CountDownLatch(1);
			ZooKeeper zooKeeper = new ZooKeeper(this.connectString, 60_000, (event) -> {
				if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
					connected.countDown();
				}
			});
			if (!connected.await(30, TimeUnit.SECONDS)) {
				zooKeeper.close();
				throw new IllegalStateException("Could not connect to ZooKeeper at " + this.connectString);
			}
			this.plain = zooKeeper;
		}
		return this.plain;
	}

	void close() throws InterruptedException {
		this.threads.shutdownNow();
		if (this.plain != null) {
			this.plain.close();
		}
		this.context.close();
	}

	/** Lock (or create and delete) key number n once. */
	@FunctionalInterface
	private interface Key {

		void lock(long n) throws Exception;

	}

	private record Timed(long cycles, long nanos) {
	}

}
