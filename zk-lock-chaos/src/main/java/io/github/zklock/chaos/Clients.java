package io.github.zklock.chaos;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The client threads of a campaign: per workload a number of threads, each sending one operation
 * at a time to an instance (its own first, the next one after an operation without success, so
 * that a killed or cut-off instance does not stop the client), recording every operation in the
 * {@link History}.
 *
 * <p>An answer with status 409, 410, 423 or 503 fails the operation: the sample application
 * answers those only after its transaction rolled back (a stale fencing token, a lock lost before
 * commit, a lock not granted in time, ZooKeeper unavailable), as does a refused connection (the
 * request never left). No answer within the timeout, a broken connection or any other status
 * leaves it unknown.
 *
 * <p>Thread-safe: {@link #start()} once, {@link #stop()} once.
 */
final class Clients {

	/** How long a client waits for an answer before it records the operation as unknown. */
	static final Duration TIMEOUT = Duration.ofSeconds(15);

	private static final Pattern TOKEN = Pattern.compile("\"(?:token|fencingToken)\"\\s*:\\s*(-?\\d+)");

	private static final Pattern ERROR = Pattern.compile("\"error\"\\s*:\\s*\"([^\"]+)\"");

	private final HttpClient http = HttpClient.newBuilder()
		.connectTimeout(Duration.ofSeconds(2))
		.version(HttpClient.Version.HTTP_1_1)
		.build();

	private final Map<Workload, Integer> threadsPerWorkload;

	private final int applications;

	private final IntFunction<String> baseUrl;

	private final History history;

	private final long seed;

	private final List<Thread> threads = new ArrayList<>();

	private final AtomicBoolean stop = new AtomicBoolean();

	/**
	 * @param threadsPerWorkload how many client threads per workload
	 * @param applications how many instances
	 * @param baseUrl the base URL of instance {@code a}
	 * @param history where operations are recorded
	 * @param seed the campaign's seed (each client's random source derives from it)
	 */
	Clients(Map<Workload, Integer> threadsPerWorkload, int applications, IntFunction<String> baseUrl, History history,
			long seed) {
		this.threadsPerWorkload = threadsPerWorkload;
		this.applications = applications;
		this.baseUrl = baseUrl;
		this.history = history;
		this.seed = seed;
	}

	void start() {
		int client = 0;
		for (Map.Entry<Workload, Integer> entry : this.threadsPerWorkload.entrySet()) {
			for (int i = 0; i < entry.getValue(); i++) {
				int id = client++;
				Workload workload = entry.getKey();
				Thread thread = new Thread(() -> run(workload, id), "client-" + workload.label() + "-" + i);
				thread.setDaemon(true);
				this.threads.add(thread);
				thread.start();
			}
		}
	}

	/**
	 * Stop sending and wait for the operations under way (bounded by the timeout).
	 * @throws InterruptedException if interrupted while waiting
	 */
	void stop() throws InterruptedException {
		this.stop.set(true);
		for (Thread thread : this.threads) {
			thread.join(TIMEOUT.plusSeconds(5).toMillis());
		}
	}

	private void run(Workload workload, int client) {
		Random random = new Random(this.seed * 31 + client);
		int application = client % this.applications;
		long sequence = 0;
		while (!this.stop.get()) {
			String operation = workload.label() + "-" + client + "-" + (sequence++);
			String target = this.baseUrl.apply(application) + workload.request(operation, random);
			long invoked = System.nanoTime();
			History.Outcome outcome;
			int status = 0;
			long token = -1;
			String reason = "";
			String detail = "";
			try {
				HttpRequest request = HttpRequest.newBuilder(URI.create(target))
					.timeout(TIMEOUT)
					.POST(HttpRequest.BodyPublishers.noBody())
					.build();
				HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
				status = response.statusCode();
				outcome = outcome(status);
				if (outcome == History.Outcome.OK) {
					Matcher matcher = TOKEN.matcher(response.body());
					if (matcher.find()) {
						token = Long.parseLong(matcher.group(1));
					}
				}
				else {
					Matcher error = ERROR.matcher(response.body());
					reason = error.find() ? error.group(1) : "status-" + status;
					detail = abbreviate(response.body());
				}
			}
			catch (ConnectException ex) {
				// Refused: the request never left (the instance is down or restarting).
				outcome = History.Outcome.FAIL;
				reason = "connection-refused";
			}
			catch (HttpTimeoutException ex) {
				outcome = History.Outcome.UNKNOWN;
				reason = "timeout";
			}
			catch (IOException ex) {
				outcome = History.Outcome.UNKNOWN;
				reason = ex.getClass().getSimpleName();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			this.history.add(new History.Operation(operation, workload, client, application, invoked, System.nanoTime(),
					outcome, status, token, reason, detail));
			if (outcome != History.Outcome.OK) {
				application = (application + 1) % this.applications;
				// Do not spin on an instance that refuses at once.
				sleep(20);
			}
		}
	}

	static History.Outcome outcome(int status) {
		if (status == 200) {
			return History.Outcome.OK;
		}
		if (status == 409 || status == 410 || status == 423 || status == 503) {
			return History.Outcome.FAIL;
		}
		return History.Outcome.UNKNOWN;
	}

	private static String abbreviate(String body) {
		return (body.length() <= 160) ? body : body.substring(0, 160);
	}

	private static void sleep(long millis) {
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
