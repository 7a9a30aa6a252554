package io.github.zklock.chaos;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * The fault campaign, run by {@code ./chaos.sh}: starts a ZooKeeper ensemble from Debian's package
 * ({@link Ensemble}), the sample application in several JVMs on one PostgreSQL database
 * ({@link Applications}), the workloads' clients ({@link Clients}), injects faults on a seeded
 * schedule ({@link Nemesis}) for the given minutes, lets the load run on quietly for a while, stops
 * it, checks the histories against the database ({@link Checks}) and prints the report
 * ({@link Report}), ending with the {@code CAMPAIGN} line. Writes {@code report.txt},
 * {@code history.csv}, {@code faults.csv} and {@code throughput.png} to the work directory, with
 * every process's log.
 *
 * <p>Usage: {@code Campaign --jar SAMPLE_APP_JAR --db-server jdbc:postgresql://127.0.0.1:PORT/
 * [--db-user U] [--db-password P] [--work DIR] [--minutes N] [--seed S] [--servers 3|5]
 * [--applications N] [--session-timeout MS] [--keep true|false]}.
 *
 * <p>Exit status: 0 when no fenced workload has a violation and the system came back after every
 * fault; 1 on a violation of a fenced workload; 2 when the system did not come back after a fault
 * (within 90 s); 3 on a usage error or a failure to set up.
 */
public final class Campaign {

	/**
	 * A campaign's settings.
	 * @param seed the nemesis's seed
	 * @param minutes how long faults are started for
	 * @param servers ZooKeeper servers
	 * @param applications sample application instances
	 * @param sessionTimeout the instances' {@code zk.lock.session-timeout}
	 * @param jar the sample application's executable jar
	 * @param java the {@code java} launcher for the instances
	 * @param dbServer the PostgreSQL server, {@code jdbc:postgresql://host:port/}
	 * @param dbUser its user
	 * @param dbPassword the password
	 * @param workDir where logs and results go
	 * @param keep whether the instances keep their lock znodes after use ({@code zk.lock.keep.enabled})
	 * @param prometheus the address of a Prometheus server that scrapes the instances listed in
	 * {@code prometheusTargets}, or {@code null} without one
	 * @param prometheusTargets the file of scrape targets that server watches, or {@code null}
	 */
	record Settings(long seed, double minutes, int servers, int applications, Duration sessionTimeout, Path jar,
			Path java, String dbServer, String dbUser, String dbPassword, Path workDir, boolean keep,
			@Nullable String prometheus, @Nullable Path prometheusTargets) {

		Settings(long seed, double minutes, int servers, int applications, Duration sessionTimeout, Path jar, Path java,
				String dbServer, String dbUser, String dbPassword, Path workDir, boolean keep) {
			this(seed, minutes, servers, applications, sessionTimeout, jar, java, dbServer, dbUser, dbPassword, workDir,
					keep, null, null);
		}

	}

	static final String DATABASE = "zklock_chaos";

	static final long INITIAL_STOCK = 1_000_000;

	/** Client threads per workload. */
	static final Map<Workload, Integer> CLIENTS = clients();

	private Campaign() {
	}

	/**
	 * Run a campaign.
	 * @param args see the class description
	 */
	public static void main(String[] args) {
		Settings settings;
		try {
			settings = parse(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println("chaos: " + ex.getMessage());
			System.exit(3);
			return;
		}
		int status;
		try {
			status = run(settings, System.out);
		}
		catch (Exception ex) {
			System.err.println("chaos: the campaign could not run: " + ex);
			ex.printStackTrace();
			status = 3;
		}
		System.exit(status);
	}

	static int run(Settings settings, PrintStream out) throws Exception {
		Files.createDirectories(settings.workDir());
		Map<Nemesis.Kind, String> skipped = new EnumMap<>(Nemesis.Kind.class);
		if (!Applications.clockJumpsAvailable()) {
			skipped.put(Nemesis.Kind.CLOCK_FORWARD, "libfaketime missing (Debian's libfaketime)");
			skipped.put(Nemesis.Kind.CLOCK_BACKWARD, "libfaketime missing (Debian's libfaketime)");
		}
		if (!onPath("stress-ng")) {
			skipped.put(Nemesis.Kind.CPU_STARVATION, "stress-ng missing (Debian's stress-ng)");
		}
		List<Nemesis.Kind> kinds = new ArrayList<>(List.of(Nemesis.Kind.values()));
		kinds.removeAll(skipped.keySet());

		CampaignDatabase.recreatePostgres(settings.dbServer(), DATABASE, settings.dbUser(), settings.dbPassword());
		String jdbcUrl = settings.dbServer() + DATABASE;
		out.printf("Starting %d ZooKeeper servers (Debian's zookeeper package) behind proxies%n", settings.servers());
		try (Ensemble ensemble = Ensemble.start(settings.servers(), settings.applications(),
				settings.workDir().resolve("zookeeper"), Ensemble.Options.defaults());
				Applications applications = new Applications(
						new Applications.Settings(settings.jar(), settings.java(), jdbcUrl, settings.dbUser(),
								settings.dbPassword(), settings.sessionTimeout(),
								settings.keep() ? List.of("--zk.lock.keep.enabled=true") : List.of(), settings.workDir()),
						settings.applications(), ensemble::connectString)) {
			out.printf("Starting %d instances of the sample app (profile chaos) on PostgreSQL%n", settings.applications());
			// The first creates the tables; then the others.
			applications.start(0);
			requireReady(applications, 0);
			for (int a = 1; a < settings.applications(); a++) {
				applications.start(a);
			}
			for (int a = 1; a < settings.applications(); a++) {
				requireReady(applications, a);
			}
			prepare(applications.baseUrl(0));
			if (settings.prometheusTargets() != null) {
				PrometheusFigures.writeTargets(settings.prometheusTargets(), applications);
			}

			History history = new History();
			Clients clients = new Clients(CLIENTS, settings.applications(), applications::baseUrl, history,
					settings.seed());
			Nemesis nemesis = new Nemesis(ensemble, applications, settings.seed(), settings.sessionTimeout(), kinds,
					history::lastHolder, out);
			long origin = System.nanoTime();
			Instant originWall = Instant.now();
			clients.start();
			out.printf("Load started; faults for %.1f minutes (seed %d)%n", settings.minutes(), settings.seed());
			TimeUnit.SECONDS.sleep(5);
			nemesis.run(origin + (long) (settings.minutes() * 60e9), origin);
			// Quiet load at the end: whatever the faults left stuck shows as a stretch without successes.
			TimeUnit.SECONDS.sleep(10);
			clients.stop();
			long end = System.nanoTime();

			List<Checks.Result> results = check(settings, history);
			List<Nemesis.Fault> faults = nemesis.faults();
			List<Duration> unavailability = Report.unavailability(faults, history.operations(), end);
			List<String> lines = new ArrayList<>();
			for (int i = 0; i < faults.size(); i++) {
				Nemesis.Fault fault = faults.get(i);
				lines.add(String.format(java.util.Locale.ROOT, "FAULT %d kind=%s target=%s at_s=%.1f unavailable_ms=%d", i + 1,
						fault.kind().label(), fault.target(), (fault.startNanos() - origin) / 1e9,
						unavailability.get(i).toMillis()));
			}
			Map<String, Integer> attempts = new CampaignDatabase(jdbcUrl, settings.dbUser(), settings.dbPassword())
				.jobAttempts();
			lines.add("LEADER_JOB attempts=" + attempts);
			if (settings.prometheus() != null) {
				// Two more scrapes of the end of the load, then the figures per fault kind; before the
				// report's own lines, which end with the CAMPAIGN line.
				TimeUnit.SECONDS.sleep(5);
				try {
					lines.addAll(PrometheusFigures.lines(new PrometheusApi(settings.prometheus()), faults, origin,
							originWall, end));
				}
				catch (IOException ex) {
					lines.add("PROMETHEUS failed: " + ex.getMessage());
				}
			}
			lines.addAll(Report.lines(settings, faults, unavailability, results, skipped));
			Files.write(settings.workDir().resolve("report.txt"), lines);
			history.write(settings.workDir().resolve("history.csv"), origin);
			ThroughputChart.writeFaults(settings.workDir().resolve("faults.csv"), faults, origin);
			Path chart = settings.workDir().resolve("throughput.png");
			ThroughputChart.draw(chart, ThroughputChart.subtitle(settings.seed(), settings.servers(),
					settings.applications(), settings.minutes()), history.operations(), faults, origin, end);
			lines.forEach(out::println);
			out.println("Report: " + settings.workDir().resolve("report.txt") + ", chart: " + chart + ", history: "
					+ settings.workDir().resolve("history.csv"));
			boolean violated = results.stream()
				.anyMatch((result) -> result.workload().fenced() && !result.violations().isEmpty());
			boolean unrecovered = faults.stream().anyMatch((fault) -> fault.recoveredNanos() < 0);
			return violated ? 1 : (unrecovered ? 2 : 0);
		}
	}

	private static List<Checks.Result> check(Settings settings, History history) throws Exception {
		CampaignDatabase database = new CampaignDatabase(settings.dbServer() + DATABASE, settings.dbUser(),
				settings.dbPassword());
		List<Checks.Result> results = new ArrayList<>();
		for (Workload workload : Workload.values()) {
			List<History.Operation> operations = history.of(workload);
			results.add(switch (workload) {
				case FENCED_COUNTER, UNFENCED_COUNTER, ASYNC_COUNTER -> Checks.Result.of(workload, operations,
						Checks.counter(operations, database.increments(workload.counter()),
								database.counterValue(workload.counter())));
				case TRANSFER -> Checks.Result.of(workload, operations, Checks.transfers(operations,
						database.transfers(), database.balances(), (long) Workload.ACCOUNTS * Workload.OPENING_BALANCE));
				case STOCK_SALE -> Checks.Result.of(workload, operations, Checks.stock(
						operations.stream().filter((operation) -> operation.outcome() == History.Outcome.OK).count(),
						INITIAL_STOCK, database.stockLeft(Workload.SKU), database.unitsSold(Workload.SKU)));
				case REACTIVE_STOCK_SALE -> Checks.Result.of(workload, operations, Checks.stock(
						operations.stream().filter((operation) -> operation.outcome() == History.Outcome.OK).count(),
						INITIAL_STOCK, database.stockLeft(Workload.REACTIVE_SKU),
						database.unitsSold(Workload.REACTIVE_SKU)));
				// Not called: the checker's result counts the runs it examined, the history has none.
				case LEADER_JOB -> Checks.leaderJob(database.committedRunsPerTick());
			});
		}
		return results;
	}

	/** The stock to sell and the accounts to move money between. */
	private static void prepare(String baseUrl) throws IOException, InterruptedException {
		HttpClient http = HttpClient.newHttpClient();
		for (String sku : List.of(Workload.SKU, Workload.REACTIVE_SKU)) {
			send(http, HttpRequest.newBuilder(URI.create(baseUrl + "/api/stock/" + sku + "?quantity=" + INITIAL_STOCK))
				.PUT(HttpRequest.BodyPublishers.noBody()));
		}
		send(http, HttpRequest.newBuilder(URI.create(baseUrl + "/chaos/accounts?count=" + Workload.ACCOUNTS + "&balance="
				+ Workload.OPENING_BALANCE + "&reset=true")).POST(HttpRequest.BodyPublishers.noBody()));
	}

	private static void send(HttpClient http, HttpRequest.Builder request) throws IOException, InterruptedException {
		HttpResponse<String> response = http.send(request.timeout(Duration.ofSeconds(30)).build(),
				HttpResponse.BodyHandlers.ofString());
		if (response.statusCode() != 200) {
			throw new IOException(response.request().uri() + " answered " + response.statusCode() + ": " + response.body());
		}
	}

	private static void requireReady(Applications applications, int a) throws InterruptedException {
		if (!applications.awaitReady(a, Duration.ofSeconds(120))) {
			throw new IllegalStateException(applications.name(a) + " did not start within 120 s; see its log");
		}
	}

	private static boolean onPath(String command) {
		for (String directory : System.getenv().getOrDefault("PATH", "").split(":")) {
			if (Files.isExecutable(Path.of(directory, command))) {
				return true;
			}
		}
		return false;
	}

	private static Map<Workload, Integer> clients() {
		Map<Workload, Integer> clients = new LinkedHashMap<>();
		clients.put(Workload.FENCED_COUNTER, 3);
		clients.put(Workload.UNFENCED_COUNTER, 3);
		clients.put(Workload.ASYNC_COUNTER, 2);
		clients.put(Workload.TRANSFER, 2);
		clients.put(Workload.STOCK_SALE, 2);
		clients.put(Workload.REACTIVE_STOCK_SALE, 2);
		return clients;
	}

	static Settings parse(String[] args) {
		Map<String, String> options = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i += 2) {
			if (!args[i].startsWith("--") || i + 1 >= args.length) {
				throw new IllegalArgumentException("expected --option value pairs, got " + String.join(" ", args));
			}
			options.put(args[i].substring(2), args[i + 1]);
		}
		String jar = options.remove("jar");
		String dbServer = options.remove("db-server");
		if (jar == null || dbServer == null) {
			throw new IllegalArgumentException("--jar and --db-server are required");
		}
		int servers = Integer.parseInt(options.getOrDefault("servers", "3"));
		if (servers != 3 && servers != 5) {
			throw new IllegalArgumentException("--servers must be 3 or 5, was " + servers);
		}
		Settings settings = new Settings(Long.parseLong(options.getOrDefault("seed", "1")),
				Double.parseDouble(options.getOrDefault("minutes", "2")), servers,
				Integer.parseInt(options.getOrDefault("applications", "3")),
				Duration.ofMillis(Long.parseLong(options.getOrDefault("session-timeout", "3000"))), Path.of(jar),
				Path.of(options.getOrDefault("java", Path.of(System.getProperty("java.home"), "bin", "java").toString())),
				dbServer.endsWith("/") ? dbServer : dbServer + "/", options.getOrDefault("db-user", "zklock"),
				options.getOrDefault("db-password", "zklock"), Path.of(options.getOrDefault("work", "target/chaos")),
				parseBoolean(options.getOrDefault("keep", "false")), options.get("prometheus"),
				options.containsKey("prometheus-targets") ? Path.of(options.get("prometheus-targets")) : null);
		if ((settings.prometheus() == null) != (settings.prometheusTargets() == null)) {
			throw new IllegalArgumentException("--prometheus and --prometheus-targets go together");
		}
		for (String known : List.of("seed", "minutes", "servers", "applications", "session-timeout", "java", "db-user",
				"db-password", "work", "keep", "prometheus", "prometheus-targets")) {
			options.remove(known);
		}
		if (!options.isEmpty()) {
			throw new IllegalArgumentException("unknown options " + options.keySet());
		}
		return settings;
	}

	private static boolean parseBoolean(String value) {
		return switch (value) {
			case "true" -> true;
			case "false" -> false;
			default -> throw new IllegalArgumentException("--keep must be true or false, was " + value);
		};
	}

}
