package io.github.zklock.sample.demo;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.zookeeper.metrics.CounterSet;
import org.apache.zookeeper.metrics.GaugeSet;
import org.apache.zookeeper.metrics.MetricsContext;
import org.apache.zookeeper.metrics.MetricsProvider;
import org.apache.zookeeper.metrics.Summary;
import org.apache.zookeeper.metrics.SummarySet;
import org.jspecify.annotations.Nullable;

/**
 * ZooKeeper's own server metrics (its {@link MetricsProvider} SPI, the one ZooKeeper's Prometheus
 * module implements) kept in a Micrometer {@link PrometheusMeterRegistry} and served in
 * Prometheus's text format on {@code http://127.0.0.1:<httpPort>/metrics}, for the demo's
 * {@link StandaloneZooKeeper}. The server starts it from its configuration, as it starts any
 * provider: {@code metricsProvider.className=io.github.zklock.sample.demo.ZooKeeperMeters} and
 * {@code metricsProvider.httpPort=<port>} (7000 when absent, ZooKeeper's default). ZooKeeper's own
 * Prometheus module would need the Jetty 9 servlet API, which the sample app's Spring Boot does not
 * carry; the names are ZooKeeper's, prefixed with {@code zookeeper_}
 * ({@code zookeeper_znode_count}, {@code zookeeper_outstanding_requests},
 * {@code zookeeper_write_per_namespace_total}, ...).
 *
 * <p>Counters become Micrometer counters ({@code _total}), gauges gauges, summaries distribution
 * summaries ({@code _count}, {@code _sum}, {@code _max}; with the median and the 99th percentile
 * for ZooKeeper's {@code ADVANCED} ones), and the sets of each (one value per key) the same tagged
 * {@code key}. Thread-safe: ZooKeeper's threads update the meters while the HTTP server's thread
 * scrapes them. For demos, not for production.
 */
public final class ZooKeeperMeters implements MetricsProvider, MetricsContext {

	private static final String PREFIX = "zookeeper.";

	private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

	/** ZooKeeper's gauge sets, read again as each scrape comes. */
	private final Map<String, GaugeSet> gaugeSets = new ConcurrentHashMap<>();

	private final Map<String, MultiGauge> gaugeSetMeters = new ConcurrentHashMap<>();

	private int port = DEFAULT_PORT;

	private @Nullable HttpServer server;

	/** ZooKeeper's default port of its Prometheus metrics provider. */
	static final int DEFAULT_PORT = 7000;

	/**
	 * Read the port of the HTTP server: {@code httpPort} (ZooKeeper passes the properties
	 * {@code metricsProvider.*} without their prefix), 0 for a free one.
	 * @param configuration the provider's properties
	 * @throws IllegalArgumentException if {@code httpPort} is not a port number
	 */
	@Override
	public synchronized void configure(Properties configuration) {
		String value = configuration.getProperty("httpPort", Integer.toString(DEFAULT_PORT));
		int configured;
		try {
			configured = Integer.parseInt(value.trim());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("metricsProvider.httpPort must be a port number, was '" + value + "'", ex);
		}
		if (configured < 0 || configured > 65_535) {
			throw new IllegalArgumentException("metricsProvider.httpPort must be a port number, was " + configured);
		}
		this.port = configured;
	}

	/**
	 * Start the HTTP server.
	 * @throws IllegalStateException if the port cannot be bound
	 */
	@Override
	public synchronized void start() {
		try {
			HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", this.port), 0);
			http.createContext("/metrics", (exchange) -> {
				byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
				exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
				exchange.sendResponseHeaders(200, body.length);
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(body);
				}
			});
			http.start();
			this.server = http;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot serve ZooKeeper's metrics on 127.0.0.1:" + this.port, ex);
		}
	}

	/**
	 * Return the port the HTTP server listens on.
	 * @return the port
	 * @throws IllegalStateException if the provider is not started
	 */
	public synchronized int port() {
		if (this.server == null) {
			throw new IllegalStateException("Not started");
		}
		return this.server.getAddress().getPort();
	}

	/**
	 * Return the meters in Prometheus's text format, the gauge sets read first.
	 * @return the scrape
	 */
	public String scrape() {
		this.gaugeSets.forEach((name, set) -> {
			List<MultiGauge.Row<?>> rows = new ArrayList<>();
			set.values().forEach((key, value) -> rows.add(MultiGauge.Row.of(Tags.of("key", key), value)));
			this.gaugeSetMeters.computeIfAbsent(name, (ignored) -> MultiGauge.builder(PREFIX + name).register(this.registry))
				.register(rows, true);
		});
		return this.registry.scrape();
	}

	@Override
	public MetricsContext getRootContext() {
		return this;
	}

	@Override
	public synchronized void stop() {
		if (this.server != null) {
			this.server.stop(0);
			this.server = null;
		}
		this.registry.close();
	}

	@Override
	public void dump(BiConsumer<String, Object> sink) {
		for (Meter meter : this.registry.getMeters()) {
			meter.measure().forEach((measurement) -> sink.accept(meter.getId().getName() + "."
					+ measurement.getStatistic().getTagValueRepresentation(), measurement.getValue()));
		}
	}

	@Override
	public void resetAllValues() {
		// Micrometer's meters are not reset; ZooKeeper resets values only from its admin commands.
	}

	@Override
	public MetricsContext getContext(String name) {
		return this;
	}

	@Override
	public org.apache.zookeeper.metrics.Counter getCounter(String name) {
		Counter counter = this.registry.counter(PREFIX + name);
		return new org.apache.zookeeper.metrics.Counter() {

			@Override
			public void add(long delta) {
				counter.increment(delta);
			}

			@Override
			public long get() {
				return (long) counter.count();
			}

		};
	}

	@Override
	public CounterSet getCounterSet(String name) {
		// One counter per key, looked up once: the server adds to its sets on every request.
		Map<String, Counter> counters = new ConcurrentHashMap<>();
		return (key, delta) -> counters.computeIfAbsent(key, (k) -> this.registry.counter(PREFIX + name, "key", k))
			.increment(delta);
	}

	@Override
	public void registerGauge(String name, org.apache.zookeeper.metrics.Gauge gauge) {
		// Held strongly: ZooKeeper's gauges are lambdas nothing else refers to (Micrometer's default,
		// a weak reference, would read NaN after the first collection).
		Gauge.builder(PREFIX + name, gauge, ZooKeeperMeters::value).strongReference(true).register(this.registry);
	}

	@Override
	public void unregisterGauge(String name) {
		Meter meter = this.registry.find(PREFIX + name).gauge();
		if (meter != null) {
			this.registry.remove(meter);
		}
	}

	@Override
	public void registerGaugeSet(String name, GaugeSet gaugeSet) {
		this.gaugeSets.put(name, gaugeSet);
	}

	@Override
	public void unregisterGaugeSet(String name) {
		this.gaugeSets.remove(name);
		MultiGauge meters = this.gaugeSetMeters.remove(name);
		if (meters != null) {
			meters.register(List.of(), true);
		}
	}

	@Override
	public Summary getSummary(String name, DetailLevel detailLevel) {
		DistributionSummary summary = summary(name, detailLevel, Tags.empty());
		return summary::record;
	}

	@Override
	public SummarySet getSummarySet(String name, DetailLevel detailLevel) {
		Map<String, DistributionSummary> summaries = new ConcurrentHashMap<>();
		return (key, value) -> summaries.computeIfAbsent(key, (k) -> summary(name, detailLevel, Tags.of("key", k)))
			.record(value);
	}

	private DistributionSummary summary(String name, DetailLevel detailLevel, Tags tags) {
		DistributionSummary.Builder builder = DistributionSummary.builder(PREFIX + name).tags(tags);
		if (detailLevel == DetailLevel.ADVANCED) {
			builder.publishPercentiles(0.5, 0.99);
		}
		return builder.register(this.registry);
	}

	/** A ZooKeeper gauge's value; NaN while it has none (ZooKeeper's own answer may be null). */
	private static double value(org.apache.zookeeper.metrics.Gauge gauge) {
		Number value = gauge.get();
		return (value != null) ? value.doubleValue() : Double.NaN;
	}

}
