package io.github.zklock.docs;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
		for (String chart : new String[] { "lock-kinds.png", "hot-key.png", "async-vs-sync.png", "requests.png",
				"kept-locks.png" }) {
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

	/**
	 * The production chapter's figures of the fault campaign are those of the report that
	 * {@code ./chaos.sh --publish} wrote: its {@code CAMPAIGN} line and its per-kind lines.
	 */
	@Test
	void faultCampaignFiguresAreThePublishedReports() throws IOException {
		Path results = Path.of("../zk-lock-chaos/results");
		List<String> report = Files.readAllLines(results.resolve("report.txt"));
		String campaign = report.get(report.size() - 1);
		assertThat(campaign).startsWith("CAMPAIGN ");
		Map<String, String> fields = new TreeMap<>();
		for (String field : campaign.substring("CAMPAIGN ".length()).split(" ")) {
			fields.put(field.substring(0, field.indexOf('=')), field.substring(field.indexOf('=') + 1));
		}
		String chapter = Files.readString(Path.of("src/docs/asciidoc/production.adoc"));
		int faults = Integer.parseInt(fields.get("faults"));
		int kinds = Integer.parseInt(fields.get("kinds"));
		assertThat(chapter)
			.contains(String.format(Locale.ROOT, "--minutes %.0f --seed %s", Double.parseDouble(fields.get("minutes")),
					fields.get("seed")))
			.contains(String.format(Locale.ROOT, "%,d faults, %d of each kind", faults, faults / kinds))
			.contains(String.format(Locale.ROOT, "%,d operations", Long.parseLong(fields.get("operations"))))
			.contains("and " + fields.get("unfenced_violations") + " in the unfenced counter");
		assertThat(fields.get("violations")).isEqualTo("0");
		for (String line : report) {
			if (line.startsWith("FAULTS kind=") && !line.contains("injected=0")) {
				Matcher kind = Pattern.compile("kind=(\\S+) injected=(\\d+) unavailable_p50_ms=(\\d+) unavailable_p99_ms=(\\d+)")
					.matcher(line);
				assertThat(kind.find()).as(line).isTrue();
				String row = chapter.lines()
					.filter((text) -> text.startsWith("| `" + kind.group(1) + "` | ") && text.matches("\\| `[^`]+` \\| [0-9.]+ s \\|.*"))
					.findFirst()
					.orElseThrow(() -> new AssertionError("no row of figures for " + kind.group(1)));
				assertThat(row).as(kind.group(1)).contains(String.format(Locale.ROOT, "| %s s | %s s |",
						seconds(kind.group(3)), seconds(kind.group(4))));
			}
		}
		assertThat(results.resolve("throughput.png")).isRegularFile();
	}

	/** Milliseconds as the chapter writes them: two decimals under a second, else one. */
	private static String seconds(String millis) {
		double seconds = Long.parseLong(millis) / 1000.0;
		return String.format(Locale.ROOT, (seconds < 1) ? "%.2f" : "%.1f", seconds);
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
