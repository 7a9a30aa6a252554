package io.github.zklock.sample.demo;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.metrics.impl.NullMetricsProvider;
import org.apache.zookeeper.server.ServerMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link ZooKeeperMeters} as the demo's server runs it: a real ZooKeeper server that starts it from
 * its configuration, and a client's requests seen in what {@code /metrics} serves.
 */
class ZooKeeperMetersTests {

	private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-z_]+)(\\{[^}]*\\})? ([0-9.eE+-]+|NaN)$");

	@TempDir
	Path dataDir;

	private ZooKeeperMeters meters;

	@AfterEach
	void resetServerMetrics() {
		// The provider is the server's static state: the JVM's other servers record nowhere again.
		ServerMetrics.metricsProviderInitialized(NullMetricsProvider.INSTANCE);
		if (this.meters != null) {
			// Stopped by the server as it closes; again, harmlessly.
			this.meters.stop();
		}
	}

	@Test
	void portOfTheConfigurationIsValidated() {
		ZooKeeperMeters provider = new ZooKeeperMeters();
		Properties properties = new Properties();
		properties.setProperty("httpPort", "seven");
		assertThatIllegalArgumentException().isThrownBy(() -> provider.configure(properties))
			.withMessageContaining("metricsProvider.httpPort");
		properties.setProperty("httpPort", "70000");
		assertThatIllegalArgumentException().isThrownBy(() -> provider.configure(properties))
			.withMessageContaining("70000");
	}

	@Test
	void servesTheServersOwnMetricsOnceItRuns() throws Exception {
		InstanceSpec spec = new InstanceSpec(this.dataDir.toFile(), -1, -1, -1, true, -1, -1, -1,
				Map.of("metricsProvider.className", ZooKeeperMeters.class.getName(), "metricsProvider.httpPort", "0"),
				"127.0.0.1");
		try (TestingServer server = new TestingServer(spec, true);
				CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100))) {
			assertThat(ServerMetrics.getMetrics().getMetricsProvider()).isInstanceOf(ZooKeeperMeters.class);
			this.meters = (ZooKeeperMeters) ServerMetrics.getMetrics().getMetricsProvider();
			client.start();
			assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
			Map<String, Double> before = samples(scrape());
			assertThat(before).containsKeys("zookeeper_outstanding_requests", "zookeeper_avg_latency");
			assertThat(before.get("zookeeper_num_alive_connections")).isEqualTo(1.0);
			assertThat(before.get("zookeeper_ephemerals_count")).isEqualTo(0.0);

			client.create().withMode(CreateMode.EPHEMERAL).forPath("/metered");
			String scraped = scrape();
			Map<String, Double> after = samples(scraped);
			assertThat(after.get("zookeeper_ephemerals_count")).isEqualTo(1.0);
			assertThat(after.get("zookeeper_znode_count")).isEqualTo(before.get("zookeeper_znode_count") + 1);
			// The one write under /metered, in the server's summary of writes by namespace.
			assertThat(scraped).containsPattern("(?m)^zookeeper_write_per_namespace_count\\{key=\"metered\"\\} 1(\\.0)?$");
		}
	}

	private String scrape() throws Exception {
		return HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.meters.port() + "/metrics"))
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.ofString())
			.body();
	}

	/** The untagged samples of a scrape, by name. */
	private static Map<String, Double> samples(String scraped) {
		Map<String, Double> samples = new HashMap<>();
		Matcher matcher = SAMPLE.matcher(scraped);
		while (matcher.find()) {
			if (matcher.group(2) == null) {
				samples.put(matcher.group(1), Double.parseDouble(matcher.group(3)));
			}
		}
		return samples;
	}

}
