package io.github.zklock.chaos;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A client of a Prometheus server's HTTP API ({@code /api/v1}): range and instant queries, and the
 * scrape targets' health. Blocking; every request bounded by {@link #TIMEOUT}. Thread-safe.
 */
final class PrometheusApi {

	/** The longest a request to the server may take. */
	static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final URI base;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

	private final JsonMapper json = JsonMapper.builder().build();

	/**
	 * @param base the server's address, {@code http://127.0.0.1:9090}
	 */
	PrometheusApi(String base) {
		this.base = URI.create(base.endsWith("/") ? base : base + "/");
	}

	/** One series of a query's answer: its labels and its samples in time order. */
	record Series(Map<String, String> labels, List<Sample> samples) {

		/** The legend of the series: the template's {@code {{label}}} replaced by its values. */
		String legend(String template) {
			String legend = template;
			for (Map.Entry<String, String> label : this.labels.entrySet()) {
				legend = legend.replace("{{" + label.getKey() + "}}", label.getValue());
			}
			return legend.replaceAll("\\{\\{[^}]*}}", "").strip();
		}

	}

	/** A sample: seconds since the epoch, and the value (NaN where the query's answer is NaN). */
	record Sample(double epochSeconds, double value) {
	}

	/**
	 * Evaluate a query over a range ({@code /api/v1/query_range}).
	 * @param query the PromQL expression
	 * @param start the range's start
	 * @param end the range's end
	 * @param step the resolution
	 * @return the series of the answer, possibly none
	 * @throws IOException if the server cannot be reached or refuses the query (with its error)
	 */
	List<Series> queryRange(String query, Instant start, Instant end, Duration step) throws IOException {
		JsonNode data = get("api/v1/query_range?query=" + encode(query) + "&start=" + start.getEpochSecond() + "&end="
				+ end.getEpochSecond() + "&step=" + Math.max(1, step.toSeconds()) + "s");
		List<Series> series = new ArrayList<>();
		for (JsonNode each : data.path("result")) {
			List<Sample> samples = new ArrayList<>();
			for (JsonNode value : each.path("values")) {
				samples.add(new Sample(value.get(0).asDouble(), parse(value.get(1).asString())));
			}
			series.add(new Series(labels(each), samples));
		}
		return series;
	}

	/**
	 * Evaluate a query at an instant ({@code /api/v1/query}).
	 * @param query the PromQL expression
	 * @param at the instant
	 * @return the series of the answer, each with its one sample, possibly none
	 * @throws IOException if the server cannot be reached or refuses the query (with its error)
	 */
	List<Series> query(String query, Instant at) throws IOException {
		JsonNode data = get("api/v1/query?query=" + encode(query) + "&time=" + at.getEpochSecond());
		List<Series> series = new ArrayList<>();
		if (!"vector".equals(data.path("resultType").asString())) {
			throw new IOException("Query " + query + " answered " + data.path("resultType").asString() + ", not a vector");
		}
		for (JsonNode each : data.path("result")) {
			JsonNode value = each.path("value");
			series.add(new Series(labels(each),
					List.of(new Sample(value.get(0).asDouble(), parse(value.get(1).asString())))));
		}
		return series;
	}

	/**
	 * The value of a query that answers one series at an instant.
	 * @return its value, or NaN when it answers no series
	 * @throws IOException as {@link #query}, and when it answers more than one series
	 */
	double value(String query, Instant at) throws IOException {
		List<Series> series = query(query, at);
		if (series.size() > 1) {
			throw new IOException("Query " + query + " answered " + series.size() + " series, not one");
		}
		return series.isEmpty() ? Double.NaN : series.get(0).samples().get(0).value();
	}

	/**
	 * The active scrape targets of a job: how many there are and how many are up.
	 * @param job the job's name
	 * @return {up, all}
	 * @throws IOException if the server cannot be reached
	 */
	int[] targets(String job) throws IOException {
		JsonNode data = get("api/v1/targets?state=active");
		int up = 0;
		int all = 0;
		for (JsonNode target : data.path("activeTargets")) {
			if (job.equals(target.path("labels").path("job").asString())) {
				all++;
				if ("up".equals(target.path("health").asString())) {
					up++;
				}
			}
		}
		return new int[] { up, all };
	}

	private JsonNode get(String path) throws IOException {
		HttpRequest request = HttpRequest.newBuilder(this.base.resolve(path)).timeout(TIMEOUT).GET().build();
		HttpResponse<String> response;
		try {
			response = this.http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while asking " + request.uri(), ex);
		}
		JsonNode answer = this.json.readTree(response.body());
		if (response.statusCode() != 200 || !"success".equals(answer.path("status").asString())) {
			throw new IOException(String.format(Locale.ROOT, "Prometheus answered %d to %s: %s", response.statusCode(),
					request.uri(), answer.path("error").asString(response.body())));
		}
		return answer.path("data");
	}

	private static Map<String, String> labels(JsonNode series) {
		Map<String, String> labels = new LinkedHashMap<>();
		series.path("metric").properties().forEach((label) -> labels.put(label.getKey(), label.getValue().asString()));
		return labels;
	}

	private static double parse(String value) {
		return switch (value) {
			case "NaN" -> Double.NaN;
			case "+Inf" -> Double.POSITIVE_INFINITY;
			case "-Inf" -> Double.NEGATIVE_INFINITY;
			default -> Double.parseDouble(value);
		};
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

}
