package io.github.zklock.actuate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusOutputFormat;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusScrapeEndpoint;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockMetricsAutoConfiguration;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The meters table of {@code monitoring/zk-lock-meters.adoc} (included by the production chapter)
 * is the one source of the meters' names: every series it lists is what {@code /actuator/prometheus}
 * serves once each kind of meter has a value, every {@code zk_lock_} series served is in it, and
 * the alert rules ({@code monitoring/prometheus/zk-lock-alerts.yml}) and the Grafana dashboard
 * ({@code monitoring/grafana/zk-lock-dashboard.json}) use only series of it; the production
 * chapter names no meter outside it. On a real ZooKeeper, with Spring Boot's Prometheus endpoint.
 */
class MonitoringTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Path MONITORING = Path.of("..", "monitoring");

	/** A series name of zk-lock in PromQL or in the scrape. */
	private static final Pattern SERIES = Pattern.compile("\\bzk_lock_[a-z_]+\\b");

	/** A meter name of zk-lock, as Micrometer writes it, in back quotes in the guide. */
	private static final Pattern METER = Pattern.compile("`(zk\\.lock\\.[a-z.]+)`");

	private static Set<String> served;

	@BeforeAll
	static void scrape() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class,
					ZkLockMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
					ObservationAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
					"zk.lock.connection-timeout=2s", "zk.lock.keep.enabled=true",
					"management.endpoints.web.exposure.include=prometheus",
					"management.metrics.distribution.percentiles-histogram.zk.lock.acquire=true",
					"management.metrics.distribution.percentiles-histogram.zk.lock.held=true")
			.run((context) -> {
				LockTemplate template = context.getBean(LockTemplate.class);
				// Every kind of value: grants (one kept), a wait held while it is scraped, a timeout and a
				// ceiling's end.
				template.execute(LockRequest.of("/monitored"), (handle) -> null);
				template.execute(LockRequest.of("/monitored"), (handle) -> null);
				LockHandle held = template.acquire(LockRequest.of("/ceiling").withLockAtMostFor(Duration.ofMillis(300)));
				await().atMost(Duration.ofSeconds(10)).until(() -> held.state() == io.github.zklock.LockState.LOST);
				held.release();
				CuratorLockRegistry other = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
				try {
					LockHandle busy = other
						.tryAcquire(new LockTarget("/busy", LockMode.EXCLUSIVE, true, 0, Duration.ofSeconds(10)))
						.orElseThrow();
					assertThat(template.tryAcquire("/busy", LockMode.EXCLUSIVE, Duration.ofMillis(50))).isEmpty();
					busy.release();
				}
				finally {
					other.close();
				}
				template.execute(LockRequest.of("/scraped"), (handle) -> {
					served = seriesIn(scrapeText(context.getBean(PrometheusScrapeEndpoint.class)));
					return null;
				});
			});
	}

	/** The samples' lines of the text format (not its HELP and TYPE comments, which name families). */
	private static String scrapeText(PrometheusScrapeEndpoint endpoint) {
		WebEndpointResponse<byte[]> response = endpoint.scrape(PrometheusOutputFormat.CONTENT_TYPE_004, null);
		assertThat(response.getStatus()).isEqualTo(200);
		return new String(response.getBody(), StandardCharsets.UTF_8).lines()
			.filter((line) -> !line.startsWith("#"))
			.collect(Collectors.joining("\n"));
	}

	@Test
	void theTableListsExactlyTheSeriesServed() throws IOException {
		Set<String> listed = seriesIn(servedAsColumn());
		System.out.println("SERIES served=" + served.size() + " listed=" + listed.size());
		assertThat(served).as("zk_lock_ series served").isNotEmpty();
		assertThat(listed).as("the series of the table, against those served").isEqualTo(served);
	}

	@Test
	void theAlertRulesUseOnlySeriesOfTheTable() throws IOException {
		Set<String> used = seriesIn(read(MONITORING.resolve("prometheus/zk-lock-alerts.yml")));
		assertThat(used).isNotEmpty();
		assertThat(served).containsAll(used);
	}

	@Test
	void theDashboardUsesOnlySeriesOfTheTable() throws IOException {
		String dashboard = read(MONITORING.resolve("grafana/zk-lock-dashboard.json"));
		List<String> queries = JsonPath.read(dashboard, "$.panels[*].targets[*].expr");
		assertThat(queries).hasSizeGreaterThanOrEqualTo(9);
		Set<String> used = new TreeSet<>();
		queries.forEach((query) -> used.addAll(seriesIn(query)));
		List<String> variables = JsonPath.read(dashboard, "$.templating.list[*].definition");
		variables.forEach((query) -> used.addAll(seriesIn(query)));
		assertThat(served).containsAll(used);
	}

	@Test
	void theProductionChapterIncludesTheTableAndNamesNoOtherMeter() throws IOException {
		String chapter = read(Path.of("..", "docs", "src", "docs", "asciidoc", "production.adoc"));
		assertThat(chapter).contains("include::{monitoring}/zk-lock-meters.adoc[]");
		Set<String> meters = new TreeSet<>();
		Matcher named = METER.matcher(read(MONITORING.resolve("zk-lock-meters.adoc")));
		while (named.find()) {
			meters.add(named.group(1));
		}
		Set<String> inChapter = new TreeSet<>();
		Matcher mentioned = METER.matcher(chapter);
		while (mentioned.find()) {
			inChapter.add(mentioned.group(1));
		}
		// Properties (zk.lock.keep.max-keys) are not meters: only names without a dash are.
		inChapter.removeIf((name) -> name.contains("-") || !name.matches("zk\\.lock\\.(acquire|held|active|lost|ceiling|connected|kept).*"));
		assertThat(meters).containsAll(inChapter);
	}

	/**
	 * The "Served as" column of the table: each row is three lines (the meter, its type and tags;
	 * the series served; what it tells), rows apart by a blank line.
	 */
	private static String servedAsColumn() throws IOException {
		StringBuilder column = new StringBuilder();
		for (String row : read(MONITORING.resolve("zk-lock-meters.adoc")).split("\\n\\s*\\n")) {
			List<String> lines = row.strip().lines().filter((line) -> !line.equals("|===")).toList();
			if (lines.size() == 3 && lines.get(0).startsWith("| `zk.lock.")) {
				column.append(lines.get(1)).append('\n');
			}
		}
		return column.toString();
	}

	private static Set<String> seriesIn(String text) {
		Set<String> series = new TreeSet<>();
		Matcher matcher = SERIES.matcher(text);
		while (matcher.find()) {
			series.add(matcher.group());
		}
		return series;
	}

	private static String read(Path file) throws IOException {
		return Files.readString(file, StandardCharsets.UTF_8);
	}

}
