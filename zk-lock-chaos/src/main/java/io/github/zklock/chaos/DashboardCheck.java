package io.github.zklock.chaos;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.SimpleDateFormat;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.DateAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.RangeType;
import org.jfree.data.time.Millisecond;
import org.jfree.data.time.TimeSeries;
import org.jfree.data.time.TimeSeriesCollection;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs every query of the Grafana dashboard ({@code monitoring/grafana/zk-lock-dashboard.json})
 * against a Prometheus server that scraped the sample app's instances, over the time they ran, and
 * draws the dashboard's panels from the answers as one PNG (JFreeChart; no Grafana here). Prints one
 * line:
 *
 * <pre>
 * PROMETHEUS targets_up=3/3 samples_scraped=N queries_checked=Q/Q variables_checked=V/V png=PATH
 * </pre>
 *
 * (with {@code --zookeeper-job NAME}, after {@code targets_up}: {@code zookeeper_targets_up=1/1
 * zookeeper_series=N}, the ZooKeeper server's own metrics that Prometheus scraped as that job)
 * and, for each query that answered no series, a line {@code PROMETHEUS_EMPTY panel="..." query=...}.
 * The dashboard's variables are replaced as Grafana would with "All" selected ({@code .*}), and
 * {@code $__rate_interval} by the interval given (Grafana's rule: at least four scrape intervals).
 *
 * <p>Usage: {@code DashboardCheck --prometheus URL --job NAME --dashboard FILE --from EPOCH_SECONDS
 * --to EPOCH_SECONDS --rate-interval 30s --png FILE [--zookeeper-job NAME]}. Exit status 0 when
 * every query and variable answered at least one series, a target of the job was up and (with
 * {@code --zookeeper-job}) one of the ZooKeeper job answered series, 1 otherwise, 2 on bad
 * arguments.
 */
public final class DashboardCheck {

	private static final int PANEL_WIDTH = 640;

	private static final int PANEL_HEIGHT = 300;

	private static final int COLUMNS = 2;

	/** A variable's query: {@code label_values(selector, label)}. */
	private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.*),\\s*(\\w+)\\)");

	private DashboardCheck() {
	}

	/**
	 * @param args see the class's description
	 * @throws IOException if the server or a file cannot be read or written
	 */
	public static void main(String[] args) throws IOException {
		String prometheus = null;
		String job = null;
		Path dashboardFile = null;
		Instant from = null;
		Instant to = null;
		String rateInterval = "30s";
		Path png = null;
		String zookeeperJob = null;
		for (int i = 0; i + 1 < args.length; i += 2) {
			switch (args[i]) {
				case "--prometheus" -> prometheus = args[i + 1];
				case "--job" -> job = args[i + 1];
				case "--dashboard" -> dashboardFile = Path.of(args[i + 1]);
				case "--from" -> from = Instant.ofEpochSecond(Long.parseLong(args[i + 1]));
				case "--to" -> to = Instant.ofEpochSecond(Long.parseLong(args[i + 1]));
				case "--rate-interval" -> rateInterval = args[i + 1];
				case "--png" -> png = Path.of(args[i + 1]);
				case "--zookeeper-job" -> zookeeperJob = args[i + 1];
				default -> usage("unknown option " + args[i]);
			}
		}
		if (prometheus == null || job == null || dashboardFile == null || from == null || to == null || png == null
				|| args.length % 2 != 0) {
			usage("--prometheus, --job, --dashboard, --from, --to and --png are needed");
			return;
		}
		System.exit(check(new PrometheusApi(prometheus), job, zookeeperJob, dashboardFile, from, to, rateInterval, png)
				? 0 : 1);
	}

	private static void usage(String why) {
		System.err.println("DashboardCheck: " + why + " (usage: --prometheus URL --job NAME --dashboard FILE "
				+ "--from EPOCH_SECONDS --to EPOCH_SECONDS [--rate-interval 30s] --png FILE [--zookeeper-job NAME])");
		System.exit(2);
	}

	static boolean check(PrometheusApi api, String job, @Nullable String zookeeperJob, Path dashboardFile, Instant from,
			Instant to, String rateInterval, Path png) throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(dashboardFile));
		Duration step = Duration.ofSeconds(Math.max(1, Duration.between(from, to).toSeconds() / 200));
		int queries = 0;
		int answered = 0;
		List<JFreeChart> charts = new ArrayList<>();
		for (JsonNode panel : dashboard.path("panels")) {
			String title = panel.path("title").asString();
			TimeSeriesCollection lines = new TimeSeriesCollection();
			for (JsonNode target : panel.path("targets")) {
				String query = resolve(target.path("expr").asString(), rateInterval);
				queries++;
				List<PrometheusApi.Series> series = api.queryRange(query, from, to, step);
				if (series.isEmpty()) {
					System.out.println("PROMETHEUS_EMPTY panel=\"" + title + "\" query=" + query);
					continue;
				}
				answered++;
				for (PrometheusApi.Series each : series) {
					TimeSeries line = new TimeSeries(each.legend(target.path("legendFormat").asString("")));
					for (PrometheusApi.Sample sample : each.samples()) {
						if (Double.isFinite(sample.value())) {
							line.addOrUpdate(new Millisecond(new Date((long) (sample.epochSeconds() * 1000))),
									sample.value());
						}
					}
					if (lines.getSeries(line.getKey()) == null) {
						lines.addSeries(line);
					}
				}
			}
			charts.add(chart(title, panel.path("fieldConfig").path("defaults").path("unit").asString(""), lines));
		}
		int variables = 0;
		int variablesAnswered = 0;
		for (JsonNode variable : dashboard.path("templating").path("list")) {
			if (!"query".equals(variable.path("type").asString())) {
				continue;
			}
			variables++;
			if (!labelValues(api, variable.path("definition").asString(), to).isEmpty()) {
				variablesAnswered++;
			}
			else {
				System.out.println("PROMETHEUS_EMPTY variable=" + variable.path("name").asString());
			}
		}
		int[] targets = api.targets(job);
		double scraped = api.value("sum(sum_over_time(scrape_samples_scraped{job=\"" + job + "\"}["
				+ Math.max(1, Duration.between(from, to).toSeconds()) + "s]))", to);
		String server = "";
		boolean serverAnswered = true;
		if (zookeeperJob != null) {
			int[] serverTargets = api.targets(zookeeperJob);
			double series = api.value("count({job=\"" + zookeeperJob + "\"})", to);
			series = Double.isNaN(series) ? 0 : series;
			server = String.format(Locale.ROOT, " zookeeper_targets_up=%d/%d zookeeper_series=%.0f", serverTargets[0],
					serverTargets[1], series);
			serverAnswered = serverTargets[0] > 0 && series > 0;
		}
		draw(charts, png);
		System.out.printf(Locale.ROOT,
				"PROMETHEUS targets_up=%d/%d%s samples_scraped=%.0f queries_checked=%d/%d variables_checked=%d/%d png=%s%n",
				targets[0], targets[1], server, Double.isNaN(scraped) ? 0 : scraped, answered, queries,
				variablesAnswered, variables, png);
		return answered == queries && variablesAnswered == variables && targets[0] > 0 && serverAnswered;
	}

	/** The dashboard's variables as Grafana replaces them with "All" selected. */
	static String resolve(String query, String rateInterval) {
		return query.replace("$__rate_interval", rateInterval)
			.replaceAll("\\$\\{?(application|name)}?", ".*");
	}

	/**
	 * The values of a variable's {@code label_values(selector, label)} query: those of the label
	 * among the selector's series.
	 */
	private static List<String> labelValues(PrometheusApi api, String definition, Instant at) throws IOException {
		Matcher call = LABEL_VALUES.matcher(definition);
		if (!call.matches()) {
			throw new IOException("Not a label_values(selector, label) query: " + definition);
		}
		String label = call.group(2);
		List<String> values = new ArrayList<>();
		for (PrometheusApi.Series series : api.query("group by (" + label + ") (last_over_time(("
				+ resolve(call.group(1), "1m") + ")[1h:]))", at)) {
			String value = series.labels().get(label);
			if (value != null && !value.isEmpty()) {
				values.add(value);
			}
		}
		return values;
	}

	private static JFreeChart chart(String title, String unit, TimeSeriesCollection lines) {
		JFreeChart chart = ChartFactory.createTimeSeriesChart(title, null, unitLabel(unit), lines, true, false, false);
		chart.setBackgroundPaint(Color.WHITE);
		XYPlot plot = chart.getXYPlot();
		plot.setBackgroundPaint(new Color(0xF7, 0xF7, 0xF7));
		plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
		plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
		((DateAxis) plot.getDomainAxis()).setDateFormatOverride(new SimpleDateFormat("HH:mm:ss"));
		// A flat line at zero shows as such, not as a range of 1e-8 around it.
		NumberAxis range = (NumberAxis) plot.getRangeAxis();
		range.setAutoRangeIncludesZero(true);
		// Every panel's values are counts, rates, times or shares: none below zero.
		range.setRangeType(RangeType.POSITIVE);
		range.setAutoRangeMinimumSize(switch (unit) {
			case "s" -> 0.001;
			case "percentunit" -> 0.1;
			default -> 1;
		});
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
		plot.setRenderer(renderer);
		return chart;
	}

	private static String unitLabel(String unit) {
		return switch (unit) {
			case "reqps" -> "requests/s";
			case "ops" -> "per second";
			case "s" -> "seconds";
			case "percentunit" -> "share";
			default -> "";
		};
	}

	private static void draw(List<JFreeChart> charts, Path png) throws IOException {
		int rows = (charts.size() + COLUMNS - 1) / COLUMNS;
		BufferedImage image = new BufferedImage(COLUMNS * PANEL_WIDTH, Math.max(1, rows) * PANEL_HEIGHT,
				BufferedImage.TYPE_INT_RGB);
		Graphics2D graphics = image.createGraphics();
		graphics.setColor(Color.WHITE);
		graphics.fillRect(0, 0, image.getWidth(), image.getHeight());
		for (int i = 0; i < charts.size(); i++) {
			int x = (i % COLUMNS) * PANEL_WIDTH;
			int y = (i / COLUMNS) * PANEL_HEIGHT;
			charts.get(i).draw(graphics, new Rectangle2D.Double(x, y, PANEL_WIDTH, PANEL_HEIGHT));
		}
		graphics.dispose();
		Path parent = png.toAbsolutePath().getParent();
		if (parent != null) {
			Files.createDirectories(parent);
		}
		ImageIO.write(image, "png", png.toFile());
	}

}
