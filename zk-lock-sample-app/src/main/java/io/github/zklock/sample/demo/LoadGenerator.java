package io.github.zklock.sample.demo;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import io.github.zklock.sample.StockController;
import io.github.zklock.sample.StockExceptionHandler;

/**
 * Sends concurrent purchase requests to several instances of the sample application over HTTP
 * ({@link HttpClient}), then reads the outcome from the shared database and prints it as a
 * {@code RESULT} line ({@link LoadReport}). Used by {@code ./demo.sh}: with the lock, with the lock
 * through the reactive purchase, with the lock on instances whose local hand-off is off, and
 * without the lock.
 *
 * <p>A run sets the SKU's stock through the first instance, then keeps {@code concurrency}
 * requests in flight until {@code requests} have been answered, request {@code i} going to
 * instance {@code i % instances}, or in the sticky modes to the first instance
 * ({@code POST /api/stock/{sku}/purchase}; {@code .../purchase-unlocked} in unlocked mode;
 * {@code POST /api/reactive/stock/{sku}/purchase}, the reactive purchase on R2DBC under the same
 * lock and fence, in {@code locked-reactive} mode and for every odd request in {@code locked-chaos}
 * mode; one item each). The lock wait percentiles are
 * taken over the {@value StockController#LOCK_WAIT_HEADER} headers of the purchases that ran
 * (sold or sold out). Every request has a timeout, and so has the whole run.
 *
 * <p>In the locked modes the orders' fencing tokens must never decrease in order-id order; equal
 * tokens are sales whose grant was handed over locally on the znode of the sale before (DESIGN.md,
 * semantics 8), counted and printed. In {@code locked-no-handoff} mode, meant for instances started
 * with {@code zk.lock.local-handoff.enabled=false}, every grant has a znode of its own, so the
 * tokens must strictly increase. In {@code locked-chaos} mode ({@code ./demo.sh --chaos}) the
 * instances are frozen and resumed meanwhile, so purchases may also be refused because their lock
 * was lost (409 with {@value StockExceptionHandler#LOCK_LOST_HEADER}, counted apart, the refusals
 * by the store's fence as {@code stale_writes_rejected}, those of the reactive purchase as
 * {@code stale_reactive_writes_rejected}) or fail because ZooKeeper could not serve
 * the lock to an instance just resumed (503): expected there, and printed in a {@code FENCE} line.
 *
 * <p>Usage, from the sample's jar:
 * <pre>
 * java -cp zk-lock-sample-app.jar -Dloader.main=io.github.zklock.sample.demo.LoadGenerator \
 *     org.springframework.boot.loader.launch.PropertiesLauncher \
 *     --mode locked --urls http://127.0.0.1:8081,http://127.0.0.1:8082 \
 *     --jdbc-url 'jdbc:h2:file:/abs/path/stock;AUTO_SERVER=TRUE' \
 *     [--sku flash-sale-locked] [--stock 500] [--requests 1500] [--concurrency 32] \
 *     [--timeout-seconds 120] [--jdbc-user sa] [--jdbc-password '']
 * </pre>
 * {@code --mode} is {@code locked}, {@code locked-reactive}, {@code locked-no-handoff},
 * {@code locked-chaos}, {@code locked-sticky}, {@code locked-sticky-kept} ({@code ./demo.sh --keep})
 * or {@code unlocked}.
 *
 * <p>Exit status: 0 when the run completed; 1 when a request failed other than sold out (409) or
 * lock busy (423) (in {@code locked-chaos} mode also lock lost (409) and lock service unavailable
 * (503)); 2 for bad arguments; 3 when a locked run oversold, lost an update, recorded an
 * order without a fencing token or a token lower than the one before; 4 when a
 * {@code locked-no-handoff} run recorded two sales on one token (a grant was handed over locally).
 */
public final class LoadGenerator {

	/** The answer to a purchase refused by the store's fence. */
	static final String STALE_TOKEN = "409 (stale-fencing-token)";

	/** The answer to a purchase refused because its lock was known to be lost. */
	static final String LOCK_LOST = "409 (lost)";

	private static final Set<String> EXPECTED_STATUSES = Set.of("200", "409", "423");

	/** Answers expected too while instances are frozen and resumed ({@code locked-chaos}). */
	private static final Set<String> EXPECTED_UNDER_CHAOS = Set.of(STALE_TOKEN, LOCK_LOST, "503");

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	/**
	 * Run the load once and audit the database.
	 * @param options what to send where
	 * @param audit reads the outcome from the shared database
	 * @return the outcome
	 * @throws SQLException if the database cannot be read
	 * @throws IOException if the stock cannot be set
	 * @throws InterruptedException if interrupted while waiting for the requests
	 */
	public Outcome run(Options options, SalesAudit audit) throws SQLException, IOException, InterruptedException {
		setStock(options.instances().get(0), options.sku(), options.stock());
		long mark = audit.mark();
		Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
		Map<String, LongAdder> reactiveStatuses = new ConcurrentHashMap<>();
		ConcurrentLinkedQueue<Double> lockWaits = new ConcurrentLinkedQueue<>();
		AtomicInteger next = new AtomicInteger();
		ExecutorService workers = Executors.newFixedThreadPool(options.concurrency());
		long started = System.nanoTime();
		try {
			for (int i = 0; i < options.concurrency(); i++) {
				workers.execute(() -> {
					for (int n = next.getAndIncrement(); n < options.requests(); n = next.getAndIncrement()) {
						String status = purchase(options, n, lockWaits);
						statuses.computeIfAbsent(status, (key) -> new LongAdder()).increment();
						if (options.mode().reactive(n)) {
							reactiveStatuses.computeIfAbsent(status, (key) -> new LongAdder()).increment();
						}
					}
				});
			}
			workers.shutdown();
			if (!workers.awaitTermination(options.runTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("Requests not done within " + options.runTimeout());
			}
		}
		finally {
			workers.shutdownNow();
		}
		double seconds = (System.nanoTime() - started) / 1e9;
		SalesAudit.Sales sales = audit.read(options.sku(), mark);
		double[] waits = lockWaits.stream().mapToDouble(Double::doubleValue).toArray();
		LoadReport report = new LoadReport(options.mode().label(), options.requests(), options.stock(),
				sales.sold(), sales.remaining(), LoadReport.percentile(waits, 50), LoadReport.percentile(waits, 99),
				options.requests() / seconds);
		return new Outcome(report, sales, counts(statuses), counts(reactiveStatuses));
	}

	private static SortedMap<String, Long> counts(Map<String, LongAdder> statuses) {
		SortedMap<String, Long> counts = new TreeMap<>();
		statuses.forEach((status, count) -> counts.put(status, count.sum()));
		return counts;
	}

	private String purchase(Options options, int n, ConcurrentLinkedQueue<Double> lockWaits) {
		URI instance = options.instances().get(options.mode().sticky() ? 0 : n % options.instances().size());
		String path;
		if (options.mode().reactive(n)) {
			path = "/api/reactive/stock/" + encode(options.sku()) + "/purchase";
		}
		else {
			path = "/api/stock/" + encode(options.sku())
					+ (options.mode().locked() ? "/purchase" : "/purchase-unlocked");
		}
		HttpRequest request = HttpRequest.newBuilder(instance.resolve(path))
			.timeout(REQUEST_TIMEOUT)
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			HttpResponse<Void> response = this.client.send(request, HttpResponse.BodyHandlers.discarding());
			response.headers()
				.firstValue(StockController.LOCK_WAIT_HEADER)
				.ifPresent((wait) -> lockWaits.add(Double.parseDouble(wait)));
			String lockLost = response.headers().firstValue(StockExceptionHandler.LOCK_LOST_HEADER).orElse(null);
			return response.statusCode() + ((lockLost != null) ? " (" + lockLost + ")" : "");
		}
		catch (IOException ex) {
			return "I/O error (" + ex.getClass().getSimpleName() + ")";
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "interrupted";
		}
	}

	private void setStock(URI instance, String sku, int stock) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest
			.newBuilder(instance.resolve("/api/stock/" + encode(sku) + "?quantity=" + stock))
			.timeout(REQUEST_TIMEOUT)
			.PUT(HttpRequest.BodyPublishers.noBody())
			.build();
		HttpResponse<String> response = this.client.send(request, HttpResponse.BodyHandlers.ofString());
		if (response.statusCode() != 200) {
			throw new IOException("Setting the stock through " + instance + " answered " + response.statusCode() + ": "
					+ response.body());
		}
	}

	private static String encode(String sku) {
		return URLEncoder.encode(sku, StandardCharsets.UTF_8);
	}

	/**
	 * Run the load once, print the outcome and exit with the status described on the class.
	 * @param args the options described on the class
	 * @throws Exception if the run fails
	 */
	public static void main(String[] args) throws Exception {
		Map<String, String> arguments;
		Options options;
		try {
			arguments = parse(args);
			options = Options.from(arguments);
		}
		catch (IllegalArgumentException ex) {
			System.err.println("LoadGenerator: " + ex.getMessage());
			System.exit(2);
			return;
		}
		SalesAudit audit = new SalesAudit(required(arguments, "jdbc-url"), arguments.getOrDefault("jdbc-user", "sa"),
				arguments.getOrDefault("jdbc-password", ""));
		Outcome outcome = new LoadGenerator().run(options, audit);
		String tag = "[" + outcome.report().mode() + "] ";
		System.out.println(tag + options.requests() + " purchases sent to " + options.instances().size()
				+ " instances, " + options.concurrency() + " at a time" + options.mode().endpoints() + "; answers: "
				+ outcome.describeStatuses());
		if (options.mode() == Mode.LOCKED_CHAOS) {
			System.out.println(
					tag + "answers of the reactive purchase among them: " + outcome.describeReactiveStatuses());
		}
		System.out.println(tag + "orders by instance: " + outcome.sales().ordersByInstance());
		if (options.mode().locked()) {
			System.out.println("FENCE stale_writes_rejected=" + outcome.blockingCount(STALE_TOKEN) + " lock_lost="
					+ outcome.blockingCount(LOCK_LOST) + " lock_service_unavailable=" + outcome.count("503")
					+ " stale_reactive_writes_rejected=" + outcome.reactiveCount(STALE_TOKEN) + " reactive_lock_lost="
					+ outcome.reactiveCount(LOCK_LOST));
			System.out.println(tag + "fencing tokens non-decreasing in order-id order: "
					+ (outcome.lockedBooksStraight() ? "yes" : "NO") + "; sales handed over locally (same token as the "
					+ "sale before): " + outcome.sales().ordersSharingPreviousToken() + " of " + outcome.sales().orders());
		}
		System.out.println(outcome.report().toResultLine());
		System.out.flush();
		int status = 0;
		if (outcome.unexpectedAnswers() > 0) {
			System.err.println(tag + outcome.unexpectedAnswers() + " requests failed other than sold out or lock busy");
			status = 1;
		}
		if (options.mode().locked() && !(outcome.report().consistent() && outcome.lockedBooksStraight())) {
			System.err.println(tag + "the locked run oversold, lost an update, or recorded an order without a fencing "
					+ "token or with a lower token than the order before");
			status = 3;
		}
		else if (options.mode() == Mode.LOCKED_NO_HANDOFF && outcome.sales().ordersSharingPreviousToken() > 0) {
			System.err.println(tag + outcome.sales().ordersSharingPreviousToken() + " sales ran on the token of the "
					+ "sale before: grants were handed over locally, although the instances should run with "
					+ "zk.lock.local-handoff.enabled=false");
			status = 4;
		}
		System.exit(status);
	}

	private static Map<String, String> parse(String[] args) {
		Map<String, String> arguments = new HashMap<>();
		for (int i = 0; i < args.length; i += 2) {
			if (!args[i].startsWith("--") || i + 1 >= args.length) {
				throw new IllegalArgumentException("expected --name value pairs, got " + Arrays.toString(args));
			}
			arguments.put(args[i].substring(2), args[i + 1]);
		}
		return arguments;
	}

	private static String required(Map<String, String> arguments, String name) {
		String value = arguments.get(name);
		if (value == null || value.isEmpty()) {
			throw new IllegalArgumentException("--" + name + " is required");
		}
		return value;
	}

	/**
	 * Which purchase endpoint a run calls, and what its audit expects of the fencing tokens.
	 */
	public enum Mode {

		/**
		 * {@code POST /api/stock/{sku}/purchase}: under the SKU's WRITE lock; fencing tokens
		 * non-decreasing.
		 */
		LOCKED,

		/**
		 * {@code POST /api/reactive/stock/{sku}/purchase}: the reactive purchase ({@code Mono}, R2DBC)
		 * under the same WRITE lock, fenced by the same row; fencing tokens non-decreasing.
		 */
		LOCKED_REACTIVE,

		/**
		 * The same endpoint as {@link #LOCKED}, sent to instances started with
		 * {@code zk.lock.local-handoff.enabled=false}: every grant has a znode of its own, so the
		 * fencing tokens strictly increase.
		 */
		LOCKED_NO_HANDOFF,

		/**
		 * The endpoints of {@link #LOCKED} (even requests) and {@link #LOCKED_REACTIVE} (odd ones) on
		 * one SKU, while {@code ./demo.sh --chaos} freezes and resumes an instance: answers of lost
		 * locks and of a lock service unavailable are expected too.
		 */
		LOCKED_CHAOS,

		/**
		 * The same endpoint as {@link #LOCKED}, every request sent to the first instance (a sticky
		 * route: the SKU's lock never moves between applications), kept locks off.
		 */
		LOCKED_STICKY,

		/**
		 * {@link #LOCKED_STICKY} on instances started with {@code zk.lock.keep.enabled=true}: the
		 * SKU's lock znode stays with the instance between purchases, and a purchase whose request
		 * finds it kept is granted without a ZooKeeper request.
		 */
		LOCKED_STICKY_KEPT,

		/** {@code POST /api/stock/{sku}/purchase-unlocked}: the same code without the lock. */
		UNLOCKED;

		/**
		 * Return the name used on the command line and in the {@code RESULT} line.
		 * @return {@code locked}, {@code locked-reactive}, {@code locked-no-handoff},
		 * {@code locked-chaos}, {@code locked-sticky}, {@code locked-sticky-kept} or {@code unlocked}
		 */
		public String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		/**
		 * Return whether this mode calls the locked purchase.
		 * @return {@code true} unless {@link #UNLOCKED}
		 */
		public boolean locked() {
			return this != UNLOCKED;
		}

		/**
		 * Return whether every request goes to the first instance.
		 * @return {@code true} for {@link #LOCKED_STICKY} and {@link #LOCKED_STICKY_KEPT}
		 */
		public boolean sticky() {
			return this == LOCKED_STICKY || this == LOCKED_STICKY_KEPT;
		}

		/**
		 * Return whether a request of a run calls the reactive purchase.
		 * @param request the request's number in the run, from 0
		 * @return {@code true} for every request of {@link #LOCKED_REACTIVE} and the odd ones of
		 * {@link #LOCKED_CHAOS}
		 */
		public boolean reactive(int request) {
			return this == LOCKED_REACTIVE || (this == LOCKED_CHAOS && request % 2 == 1);
		}

		/** The endpoints called, when not the blocking purchase alone. */
		String endpoints() {
			return switch (this) {
				case LOCKED_REACTIVE -> " (the reactive purchase)";
				case LOCKED_CHAOS -> " (every other one to the reactive purchase)";
				default -> "";
			};
		}

		static Mode of(String label) {
			for (Mode mode : values()) {
				if (mode.label().equals(label)) {
					return mode;
				}
			}
			throw new IllegalArgumentException("--mode must be locked, locked-reactive, locked-no-handoff, "
					+ "locked-chaos, locked-sticky, locked-sticky-kept or unlocked, was '" + label + "'");
		}

	}

	/**
	 * What a run sends where.
	 *
	 * @param mode which purchase endpoint to call
	 * @param instances the base URLs of the application instances, at least one
	 * @param sku the SKU to sell
	 * @param stock the stock to set before the run, at least 0
	 * @param requests how many purchase requests to send, at least 1
	 * @param concurrency how many requests to keep in flight, at least 1
	 * @param runTimeout how long the whole run may take
	 */
	public record Options(Mode mode, List<URI> instances, String sku, int stock, int requests, int concurrency,
			Duration runTimeout) {

		/**
		 * Check the options.
		 * @throws IllegalArgumentException if one is out of range
		 */
		public Options {
			if (instances.isEmpty()) {
				throw new IllegalArgumentException("at least one instance URL is required");
			}
			if (stock < 0 || requests < 1 || concurrency < 1) {
				throw new IllegalArgumentException("need stock >= 0, requests >= 1 and concurrency >= 1, got stock="
						+ stock + " requests=" + requests + " concurrency=" + concurrency);
			}
			instances = List.copyOf(instances);
		}

		static Options from(Map<String, String> arguments) {
			Mode mode = Mode.of(required(arguments, "mode"));
			List<URI> instances = new ArrayList<>();
			for (String url : required(arguments, "urls").split(",")) {
				instances.add(URI.create(url.trim()));
			}
			return new Options(mode, instances, arguments.getOrDefault("sku", "flash-sale-" + mode.label()),
					integer(arguments, "stock", 500), integer(arguments, "requests", 1500),
					integer(arguments, "concurrency", 32),
					Duration.ofSeconds(integer(arguments, "timeout-seconds", 120)));
		}

		private static int integer(Map<String, String> arguments, String name, int defaultValue) {
			String value = arguments.get(name);
			if (value == null) {
				return defaultValue;
			}
			try {
				return Integer.parseInt(value);
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("--" + name + " must be a whole number, was '" + value + "'");
			}
		}

	}

	/**
	 * The outcome of a run.
	 *
	 * @param report the figures of the {@code RESULT} line
	 * @param sales what the database recorded
	 * @param statuses how many requests got each answer: an HTTP status code, or a description of
	 * the failure
	 * @param reactiveStatuses the same for the requests to the reactive purchase alone (counted in
	 * {@code statuses} too)
	 */
	public record Outcome(LoadReport report, SalesAudit.Sales sales, SortedMap<String, Long> statuses,
			SortedMap<String, Long> reactiveStatuses) {

		/**
		 * Return how many requests got an answer other than 200, 409 (sold out) or 423 (lock busy),
		 * and, in {@code locked-chaos} mode, other than 409 (lock lost) or 503 (lock service
		 * unavailable).
		 * @return the number of failed requests
		 */
		public long unexpectedAnswers() {
			boolean chaos = Mode.of(this.report.mode()) == Mode.LOCKED_CHAOS;
			return this.statuses.entrySet()
				.stream()
				.filter((entry) -> !(EXPECTED_STATUSES.contains(entry.getKey())
						|| (chaos && EXPECTED_UNDER_CHAOS.contains(entry.getKey()))))
				.mapToLong(Map.Entry::getValue)
				.sum();
		}

		/**
		 * Return how many requests got one answer.
		 * @param status the answer, as counted: an HTTP status code, followed for a 409 of a lost
		 * lock by the reason in parentheses
		 * @return the number of requests
		 */
		public long count(String status) {
			return this.statuses.getOrDefault(status, 0L);
		}

		/**
		 * Return how many requests to the reactive purchase got one answer.
		 * @param status the answer, as {@link #count(String)} takes it
		 * @return the number of requests
		 */
		public long reactiveCount(String status) {
			return this.reactiveStatuses.getOrDefault(status, 0L);
		}

		/**
		 * Return how many requests to the blocking purchases (locked or unlocked) got one answer.
		 * @param status the answer, as {@link #count(String)} takes it
		 * @return the number of requests
		 */
		public long blockingCount(String status) {
			return count(status) - reactiveCount(status);
		}

		/**
		 * Return whether every order of the run carries a fencing token and no token is lower than
		 * the one before it in order-id order, as when every sale ran under the lock. Equal tokens
		 * are accepted: grants handed over locally share their znode's token.
		 * @return whether the orders show one lock grant after the other
		 */
		public boolean lockedBooksStraight() {
			return this.sales.ordersWithoutToken() == 0 && this.sales.fencingTokensNonDecreasing();
		}

		String describeStatuses() {
			return describe(this.statuses);
		}

		String describeReactiveStatuses() {
			return describe(this.reactiveStatuses);
		}

		private static String describe(SortedMap<String, Long> statuses) {
			return statuses.entrySet()
				.stream()
				.map((entry) -> entry.getValue() + " x " + entry.getKey())
				.collect(Collectors.joining(", "));
		}

	}

}
