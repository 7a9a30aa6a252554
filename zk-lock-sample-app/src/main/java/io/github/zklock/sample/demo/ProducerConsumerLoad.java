package io.github.zklock.sample.demo;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.zklock.sample.queue.OrderQueueController;
import io.github.zklock.sample.queue.OrderQueueService;

/**
 * Moves items through one order queue of the sample ({@code /api/orders/queue}) from producers on
 * the first instance to consumers on the others, over HTTP, concurrently, and prints the outcome as
 * the {@code CONDITION} line of {@code ./demo.sh} ({@link ConditionReport}). With one instance,
 * both run on it.
 *
 * <p>Each producer adds items {@code item-0} to {@code item-<items-1>}, taking the next number
 * when its item was added and asking again, with a wait of 5 s, while the queue answers that it
 * stayed full (503). Each consumer takes items with a wait of 1 s until as many items as the run
 * moves were taken, or until the producers are done and the queue stayed empty for a wait. With a
 * small capacity both sides wait on the queue's condition, each woken by the other side, on
 * another instance: with 3 producers and 4 consumers on a queue of 5, a full queue holds up the
 * producers and an empty one the consumers, in turn. The queue's name is new for each run unless
 * given, so that runs on one database do not mix. Every request has a timeout, and so has the whole
 * run.
 *
 * <p>Usage, from the sample's jar:
 * <pre>
 * java -cp zk-lock-sample-app.jar -Dloader.main=io.github.zklock.sample.demo.ProducerConsumerLoad \
 *     org.springframework.boot.loader.launch.PropertiesLauncher \
 *     --urls http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083 \
 *     [--items 200] [--producers 3] [--consumers 4] [--queue demo-1] [--timeout-seconds 120]
 * </pre>
 * Exit status: 0 when every item went through once ({@link ConditionReport#consistent()}); 1 when
 * a request failed (an answer other than 201 or 503 to a producer, 200 or 204 to a consumer); 2
 * for bad arguments; 3 when an item was not produced, not consumed, consumed twice, or the queue
 * held more than its capacity.
 */
public final class ProducerConsumerLoad {

	private static final Duration PRODUCER_WAIT = Duration.ofSeconds(5);

	private static final Duration CONSUMER_WAIT = Duration.ofSeconds(1);

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final JsonMapper json = JsonMapper.builder().build();

	/**
	 * Run the producers and consumers once.
	 * @param options what to move where
	 * @return the outcome
	 * @throws InterruptedException if interrupted while waiting for the workers
	 * @throws IllegalStateException if the run did not end within its timeout
	 */
	public Outcome run(Options options) throws InterruptedException {
		Run run = new Run(options);
		ExecutorService workers = Executors.newFixedThreadPool(options.producers() + options.consumers());
		long started = System.nanoTime();
		try {
			for (int p = 0; p < options.producers(); p++) {
				workers.execute(() -> produce(run));
			}
			for (int c = 0; c < options.consumers(); c++) {
				URI consumerInstance = options.consumerInstance(c);
				workers.execute(() -> consume(run, consumerInstance));
			}
			workers.shutdown();
			if (!workers.awaitTermination(options.runTimeout().toMillis() + 60_000, TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("Producers and consumers not done within " + options.runTimeout());
			}
		}
		finally {
			workers.shutdownNow();
		}
		double seconds = (System.nanoTime() - started) / 1e9;
		return run.outcome(seconds);
	}

	private void produce(Run run) {
		URI instance = run.options.instances().get(0);
		try {
			for (int n = run.nextItem.getAndIncrement(); n < run.options.items() && !run.late(); n = run.nextItem
				.getAndIncrement()) {
				String item = "item-" + n;
				while (!run.late()) {
					String query = "?item=" + item + "&queue=" + encode(run.options.queue()) + "&waitMs="
							+ PRODUCER_WAIT.toMillis();
					HttpResponse<String> answer = send(run, "put", instance, query, PRODUCER_WAIT);
					if (answer == null || (answer.statusCode() != 201 && answer.statusCode() != 503)) {
						break;
					}
					OrderQueueService.Put put = this.json.readValue(answer.body(), OrderQueueService.Put.class);
					run.producerWaits.add(put.waits());
					run.capacity.accumulateAndGet(put.capacity(), Math::max);
					if (put.added()) {
						run.produced.add(item);
						run.maxDepth.accumulateAndGet(put.depth(), Math::max);
						break;
					}
				}
			}
		}
		finally {
			run.producersDone.countDown();
		}
	}

	private void consume(Run run, URI instance) {
		while (run.taken.get() < run.options.items() && !run.late()) {
			boolean producersDone = run.producersDone.getCount() == 0;
			String query = "/take?queue=" + encode(run.options.queue()) + "&waitMs=" + CONSUMER_WAIT.toMillis();
			HttpResponse<String> answer = send(run, "take", instance, query, CONSUMER_WAIT);
			if (answer == null || (answer.statusCode() != 200 && answer.statusCode() != 204)) {
				return;
			}
			run.consumerWaits.add(answer.headers()
				.firstValue(OrderQueueController.WAITS_HEADER)
				.map(Long::parseLong)
				.orElse(0L));
			if (answer.statusCode() == 204) {
				if (producersDone) {
					// Empty for a whole wait after the last item was added: nothing more will come.
					return;
				}
				continue;
			}
			OrderQueueService.Take take = this.json.readValue(answer.body(), OrderQueueService.Take.class);
			run.taken.incrementAndGet();
			run.consumed.computeIfAbsent(String.valueOf(take.item()), (item) -> new LongAdder()).increment();
			if (take.waits() > 0) {
				run.wakeAges.add((double) take.ageMillis());
			}
		}
	}

	/** Send one call; counts its answer, {@code null} for a failure without an answer. */
	private @Nullable HttpResponse<String> send(Run run, String call, URI instance, String pathAndQuery,
			Duration wait) {
		String path = "/api/orders/queue" + pathAndQuery;
		HttpRequest request = HttpRequest.newBuilder(instance.resolve(path))
			.timeout(wait.plusSeconds(30))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			HttpResponse<String> response = this.client.send(request, HttpResponse.BodyHandlers.ofString());
			run.count(call + " " + response.statusCode());
			return response;
		}
		catch (IOException ex) {
			run.count(call + " I/O error (" + ex.getClass().getSimpleName() + ")");
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			run.count(call + " interrupted");
			return null;
		}
	}

	private static String encode(String value) {
		return URLEncoder.encode(value, StandardCharsets.UTF_8);
	}

	/**
	 * Run once, print the outcome and exit with the status described on the class.
	 * @param args the options described on the class
	 * @throws Exception if the run fails
	 */
	public static void main(String[] args) throws Exception {
		Options options;
		try {
			options = Options.from(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println("ProducerConsumerLoad: " + ex.getMessage());
			System.exit(2);
			return;
		}
		Outcome outcome = new ProducerConsumerLoad().run(options);
		System.out.println("[condition] " + options.items() + " items through the queue " + options.queue() + ": "
				+ options.producers() + " producers on " + options.instances().get(0) + ", " + options.consumers()
				+ " consumers on " + options.consumerInstances() + "; answers: " + outcome.describeAnswers());
		System.out.println(outcome.report().toLine());
		System.out.flush();
		int status = 0;
		if (outcome.unexpectedAnswers() > 0) {
			System.err.println("[condition] " + outcome.unexpectedAnswers() + " requests failed");
			status = 1;
		}
		if (!outcome.report().consistent()) {
			System.err.println("[condition] an item was not produced, not consumed or consumed twice, or the queue "
					+ "held more than its capacity");
			status = 3;
		}
		System.exit(status);
	}

	/** The shared state of one run's workers. */
	private static final class Run {

		final Options options;

		final long deadline;

		final AtomicInteger nextItem = new AtomicInteger();

		final AtomicInteger taken = new AtomicInteger();

		final CountDownLatch producersDone;

		final Set<String> produced = ConcurrentHashMap.newKeySet();

		final Map<String, LongAdder> consumed = new ConcurrentHashMap<>();

		final LongAdder producerWaits = new LongAdder();

		final LongAdder consumerWaits = new LongAdder();

		final AtomicInteger capacity = new AtomicInteger();

		final AtomicInteger maxDepth = new AtomicInteger();

		final ConcurrentLinkedQueue<Double> wakeAges = new ConcurrentLinkedQueue<>();

		final Map<String, LongAdder> answers = new ConcurrentHashMap<>();

		Run(Options options) {
			this.options = options;
			this.deadline = System.nanoTime() + options.runTimeout().toNanos();
			this.producersDone = new CountDownLatch(options.producers());
		}

		boolean late() {
			return System.nanoTime() - this.deadline > 0;
		}

		void count(String answer) {
			this.answers.computeIfAbsent(answer, (key) -> new LongAdder()).increment();
		}

		Outcome outcome(double seconds) {
			long consumedTotal = this.consumed.values().stream().mapToLong(LongAdder::sum).sum();
			long lost = this.produced.stream().filter((item) -> !this.consumed.containsKey(item)).count();
			double[] ages = this.wakeAges.stream().mapToDouble(Double::doubleValue).toArray();
			ConditionReport report = new ConditionReport(this.options.items(), this.produced.size(), consumedTotal,
					consumedTotal - this.consumed.size(), lost, this.capacity.get(), this.maxDepth.get(),
					this.producerWaits.sum(), this.consumerWaits.sum(), LoadReport.percentile(ages, 50),
					LoadReport.percentile(ages, 99), consumedTotal / seconds);
			SortedMap<String, Long> counts = new TreeMap<>();
			this.answers.forEach((answer, count) -> counts.put(answer, count.sum()));
			return new Outcome(report, counts);
		}

	}

	/**
	 * What a run moves where.
	 *
	 * @param instances the base URLs of the application instances, at least one: the producers
	 * call the first, the consumers the others in turn (the first too when it is the only one)
	 * @param queue the queue's name
	 * @param items how many items to move, at least 1
	 * @param producers how many producers, at least 1
	 * @param consumers how many consumers, at least 1
	 * @param runTimeout how long the whole run may take
	 */
	public record Options(List<URI> instances, String queue, int items, int producers, int consumers,
			Duration runTimeout) {

		/**
		 * Check the options.
		 * @throws IllegalArgumentException if one is out of range
		 */
		public Options {
			if (instances.isEmpty()) {
				throw new IllegalArgumentException("at least one instance URL is required");
			}
			if (items < 1 || producers < 1 || consumers < 1) {
				throw new IllegalArgumentException("need items, producers and consumers >= 1, got items=" + items
						+ " producers=" + producers + " consumers=" + consumers);
			}
			instances = List.copyOf(instances);
		}

		/**
		 * Return the instance a consumer calls.
		 * @param consumer the consumer's number, from 0
		 * @return the instance after the first in turn, or the first when it is the only one
		 */
		public URI consumerInstance(int consumer) {
			int others = this.instances.size() - 1;
			return (others == 0) ? this.instances.get(0) : this.instances.get(1 + consumer % others);
		}

		String consumerInstances() {
			List<URI> called = new ArrayList<>();
			for (int c = 0; c < this.consumers; c++) {
				called.add(consumerInstance(c));
			}
			return called.stream().distinct().map(URI::toString).collect(Collectors.joining(","));
		}

		static Options from(String[] args) {
			Map<String, String> arguments = new TreeMap<>();
			for (int i = 0; i < args.length; i += 2) {
				if (!args[i].startsWith("--") || i + 1 >= args.length) {
					throw new IllegalArgumentException("expected --name value pairs, got " + String.join(" ", args));
				}
				arguments.put(args[i].substring(2), args[i + 1]);
			}
			String urls = arguments.get("urls");
			if (urls == null || urls.isBlank()) {
				throw new IllegalArgumentException("--urls is required");
			}
			List<URI> instances = new ArrayList<>();
			for (String url : urls.split(",")) {
				instances.add(URI.create(url.trim()));
			}
			return new Options(instances, arguments.getOrDefault("queue", "demo-" + System.currentTimeMillis()),
					integer(arguments, "items", 200), integer(arguments, "producers", 3),
					integer(arguments, "consumers", 4), Duration.ofSeconds(integer(arguments, "timeout-seconds", 120)));
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
	 * @param report the figures of the {@code CONDITION} line
	 * @param answers how many calls got each answer: the call ({@code put} or {@code take}) and the
	 * HTTP status code, or a description of the failure
	 */
	public record Outcome(ConditionReport report, SortedMap<String, Long> answers) {

		/**
		 * Return how many calls failed: anything but 201 or 503 to a put, 200 or 204 to a take.
		 * @return the number of failed calls
		 */
		public long unexpectedAnswers() {
			return this.answers.entrySet()
				.stream()
				.filter((entry) -> !Set.of("put 201", "put 503", "take 200", "take 204").contains(entry.getKey()))
				.mapToLong(Map.Entry::getValue)
				.sum();
		}

		String describeAnswers() {
			return this.answers.entrySet()
				.stream()
				.map((entry) -> entry.getValue() + " x " + entry.getKey())
				.collect(Collectors.joining(", "));
		}

	}

}
