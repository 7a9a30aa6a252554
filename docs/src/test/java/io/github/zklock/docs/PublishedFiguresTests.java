package io.github.zklock.docs;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One source for the figures users read: the README and the guide quote
 * {@code zk-lock-benchmarks/results/latest.properties}, which {@code ./bench.sh} writes. The
 * guide's attribute file (written with the charts from that file) holds its figures, and the
 * README's front-page figures are that file's.
 */
class PublishedFiguresTests {

	private static final Path RESULTS = Path.of("../zk-lock-benchmarks/results");

	@Test
	void guidesFiguresAreTheResultsFiles() throws IOException {
		Properties results = results();
		Map<String, String> expected = new TreeMap<>();
		results.stringPropertyNames().forEach((key) -> expected.put(
				key.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-"), attributeValue(key, results.getProperty(key))));
		Map<String, String> attributes = new TreeMap<>();
		for (String line : Files.readAllLines(RESULTS.resolve("charts/figures.adoc"))) {
			if (line.startsWith(":")) {
				int end = line.indexOf(": ", 1);
				attributes.put(line.substring(1, end), line.substring(end + 2));
			}
		}
		assertThat(attributes).isEqualTo(expected);
		for (String chart : new String[] { "lock-kinds.png", "hot-key.png", "async-vs-sync.png", "requests.png" }) {
			assertThat(RESULTS.resolve("charts").resolve(chart)).isRegularFile();
		}
	}

	@Test
	void readmeQuotesTheLatestRun() throws IOException {
		Properties results = results();
		String readme = Files.readString(Path.of("../README.md"));
		assertThat(readme)
			.contains(String.format(Locale.ROOT, "at %.2f × its cycles per second",
					number(results, "ratio.template_vs_raw_mutex")))
			.contains(String.format(Locale.ROOT, "%.1f × raw Curator and %.1f × Redisson",
					number(results, "ratio.hotkey_3jvm_vs_raw_mutex"), number(results, "ratio.hotkey_3jvm_vs_redisson")))
			.contains("(" + results.getProperty("requests.EXCLUSIVE.per_cycle") + " for EXCLUSIVE");
	}

	private static Properties results() throws IOException {
		Properties results = new Properties();
		try (Reader in = Files.newBufferedReader(RESULTS.resolve("latest.properties"), StandardCharsets.UTF_8)) {
			results.load(in);
		}
		assertThat(results.getProperty("run.started")).as("a run's figures").isNotBlank();
		return results;
	}

	private static double number(Properties results, String key) {
		assertThat(results.getProperty(key)).as(key).isNotNull();
		return Double.parseDouble(results.getProperty(key));
	}

	private static String attributeValue(String key, String value) {
		if (key.startsWith("ratio.") && value.matches("-?[0-9.]+")) {
			return String.format(Locale.ROOT, "%.2f", Double.parseDouble(value));
		}
		return value.replace("\n", " ");
	}

}
