package io.github.zklock.benchmarks.run;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Draws the figures of a {@link ResultsFile} as PNG charts (JFreeChart), for the guide's chapter
 * on benchmarks: the cost of each lock kind against raw Curator, the hot key against raw Curator
 * and Redisson, asynchronous against synchronous cycles, and the requests of one cycle; and writes
 * the figures as AsciiDoc attributes ({@value #FIGURES}) for the chapter's text. Each chart
 * names the run it comes from (date, mode, machine, load, fsync) under its title. A figure missing
 * from the file (a scenario the run skipped) is left out of its chart; a chart with no figure at
 * all is not written.
 * <p>
 * Usage: {@code Charts RESULTS_FILE OUTPUT_DIRECTORY}; {@code ./bench.sh} runs it after a complete
 * run. Runs headless.
 */
public final class Charts {

	static final List<String> FILES = List.of("lock-kinds.png", "hot-key.png", "async-vs-sync.png", "requests.png",
			"kept-locks.png");

	/** The figures as AsciiDoc attributes, for the guide's text ({@link #attributeName}). */
	static final String FIGURES = "figures.adoc";

	private static final int WIDTH = 880;

	private static final int HEIGHT = 480;

	private static final Color OURS = new Color(0x2F6FAB);

	private static final Color OTHER = new Color(0xB0B7BF);

	private static final Color SECOND = new Color(0x7FB2E5);

	private final Properties results;

	private Charts(Properties results) {
		this.results = results;
	}

	/**
	 * Draw the charts.
	 * @param args the results file, then the output directory
	 * @throws IOException if the file cannot be read or a chart cannot be written
	 */
	public static void main(String[] args) throws IOException {
		if (args.length != 2) {
			throw new IllegalArgumentException("Usage: Charts RESULTS_FILE OUTPUT_DIRECTORY");
		}
		System.setProperty("java.awt.headless", "true");
		Path out = Path.of(args[1]);
		Files.createDirectories(out);
		List<Path> written = new Charts(ResultsFile.read(Path.of(args[0]))).drawAll(out);
		written.forEach((file) -> System.out.println("Chart: " + file));
	}

	List<Path> drawAll(Path out) throws IOException {
		List<Path> written = new ArrayList<>();
		Path figures = out.resolve(FIGURES);
		Files.writeString(figures, attributes(this.results), java.nio.charset.StandardCharsets.UTF_8);
		written.add(figures);
		save(lockKinds(), out.resolve(FILES.get(0)), written);
		save(hotKey(), out.resolve(FILES.get(1)), written);
		save(asyncVsSync(), out.resolve(FILES.get(2)), written);
		save(requests(), out.resolve(FILES.get(3)), written);
		save(keptLocks(), out.resolve(FILES.get(4)), written);
		return written;
	}

	private static void save(JFreeChart chart, Path file, List<Path> written) throws IOException {
		if (chart != null) {
			ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
			written.add(file);
		}
	}

	/**
	 * The attribute entries of every figure, in the file's order: {@code ratio.*} rounded to two
	 * decimals, the rest as written.
	 */
	static String attributes(Properties results) {
		StringBuilder out = new StringBuilder("// The figures of zk-lock-benchmarks/results/latest.properties, written by "
				+ "Charts with the charts: do not edit.\n");
		for (String key : new java.util.TreeSet<>(results.stringPropertyNames())) {
			out.append(':').append(attributeName(key)).append(": ").append(attributeValue(key, results.getProperty(key)))
				.append('\n');
		}
		return out.toString();
	}

	/** {@code ratio.template_vs_raw_mutex} → {@code ratio-template-vs-raw-mutex}. */
	static String attributeName(String key) {
		return key.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
	}

	static String attributeValue(String key, String value) {
		if (key.startsWith("ratio.") && value.matches("-?[0-9.]+")) {
			return String.format(Locale.ROOT, "%.2f", Double.parseDouble(value));
		}
		return value.replace("\n", " ");
	}

	private JFreeChart lockKinds() {
		DefaultCategoryDataset data = new DefaultCategoryDataset();
		String[][] kinds = { { "EXCLUSIVE", "", "raw_mutex" }, { "READ", "_read", "raw_read" },
				{ "WRITE", "_write", "raw_write" }, { "non-reentrant", "_nonreentrant", "raw_semaphore_mutex" },
				{ "multi-lock, 2 keys", "_multi", "raw_multi_lock" }, { "permit", "_permit", "raw_semaphore" } };
		for (String[] kind : kinds) {
			add(data, "ratio.template" + kind[1] + "_vs_" + kind[2], "LockTemplate", kind[0]);
			add(data, "ratio.annotated" + kind[1] + "_vs_" + kind[2], "@DistributedLock", kind[0]);
		}
		return bars(data, "Uncontended lock cycle: zk-lock ÷ raw Curator (cycles per second)",
				"ratio (1 = as fast as Curator's recipe)", "0.00", true, false);
	}

	private JFreeChart hotKey() {
		DefaultCategoryDataset data = new DefaultCategoryDataset();
		String[][] contenders = { { "zk_lock.3x8", "zk-lock" }, { "zk_lock_no_handoff.3x8", "zk-lock, no hand-off" },
				{ "raw_mutex.3x8", "raw Curator" }, { "redisson.3x8", "Redisson RLock" },
				{ "zk_lock_async.3x500", "zk-lock async" }, { "redisson_async.3x500", "Redisson async" } };
		for (String[] contender : contenders) {
			add(data, "hotkey." + contender[0] + ".grants_per_s", "grants per second", contender[1]);
		}
		return bars(data, "Hot key: 3 JVMs on one key (8 threads each; async: 500 callers each)",
				"grants per second (log scale)", "#,##0", false, true);
	}

	private JFreeChart keptLocks() {
		DefaultCategoryDataset data = new DefaultCategoryDataset();
		String[][] workloads = { { "1 JVM, 1 thread, 1 key", "zk_lock_kept.1x1", "zk_lock.1x1", "redisson.1x1" },
				{ "3 JVMs x 8 threads, own keys", "affinity_zk_lock_kept.3x8", "", "affinity_raw_mutex.3x8" },
				{ "2 JVMs x 1 thread, taking strict turns", "pingpong_zk_lock_kept.2x1", "pingpong_zk_lock.2x1", "" } };
		for (String[] workload : workloads) {
			add(data, "hotkey." + workload[1] + ".grants_per_s", "zk-lock, kept locks", workload[0]);
			if (!workload[2].isEmpty()) {
				add(data, "hotkey." + workload[2] + ".grants_per_s", "zk-lock, kept locks off", workload[0]);
			}
			if (!workload[3].isEmpty()) {
				add(data, "hotkey." + workload[3] + ".grants_per_s",
						workload[3].startsWith("redisson") ? "Redisson RLock" : "raw Curator", workload[0]);
			}
		}
		return bars(data, "Kept locks: grants per second, kept locks on and their baselines",
				"grants per second (log scale)", "#,##0", false, true);
	}

	private JFreeChart asyncVsSync() {
		DefaultCategoryDataset data = new DefaultCategoryDataset();
		String[][] ratios = { { "template_async_vs_template_sync", "EXCLUSIVE" },
				{ "template_async_read_vs_template_sync_read", "READ" },
				{ "annotated_async_vs_annotated_sync", "EXCLUSIVE, annotated" },
				{ "template_async_permit_vs_template_sync_permit", "permit" },
				{ "template_async_multi_vs_template_sync_multi", "multi-lock, 2 keys" } };
		for (String[] ratio : ratios) {
			add(data, "ratio." + ratio[0], "async ÷ sync", ratio[1]);
		}
		return bars(data, "Uncontended cycle: asynchronous ÷ synchronous (cycles per second, one caller)",
				"ratio (1 = as fast as the blocking call)", "0.00", true, false);
	}

	private JFreeChart requests() {
		DefaultCategoryDataset data = new DefaultCategoryDataset();
		String[][] modes = { { "EXCLUSIVE", "EXCLUSIVE" }, { "READ", "READ" }, { "WRITE", "WRITE" },
				{ "EXCLUSIVE_NON_REENTRANT", "non-reentrant" }, { "EXCLUSIVE_MULTI_2", "multi-lock, 2 keys" },
				{ "PERMIT", "permit" }, { "EXCLUSIVE_ASYNC", "EXCLUSIVE async" },
				{ "EXCLUSIVE_COLD_KEY", "EXCLUSIVE, first use of a key" },
				{ "READ_COLD_KEY", "READ, first use of a key" }, { "WRITE_COLD_KEY", "WRITE, first use of a key" },
				{ "EXCLUSIVE_NON_REENTRANT_COLD_KEY", "non-reentrant, first use of a key" },
				{ "EXCLUSIVE_MULTI_2_COLD_KEY", "multi-lock, 2 keys, first use of both" },
				{ "PERMIT_COLD_KEY", "permit, first use of a key" },
				{ "EXCLUSIVE_ASYNC_COLD_KEY", "EXCLUSIVE async, first use of a key" } };
		for (String[] mode : modes) {
			add(data, "requests." + mode[0] + ".per_cycle", "zk-lock", mode[1]);
			add(data, "requests." + mode[0] + ".raw_per_cycle", "raw Curator", mode[1]);
		}
		return bars(data, "ZooKeeper requests per uncontended cycle", "requests per acquire and release", "0.#",
				false, false);
	}

	private void add(DefaultCategoryDataset data, String key, String series, String category) {
		String value = this.results.getProperty(key);
		if (value != null) {
			data.addValue(Double.parseDouble(value), series, category);
		}
	}

	private JFreeChart bars(DefaultCategoryDataset data, String title, String valueLabel, String labelFormat,
			boolean markOne, boolean logScale) {
		if (data.getRowCount() == 0) {
			return null;
		}
		BarRenderer renderer = new BarRenderer() {

			@Override
			public java.awt.Paint getItemPaint(int row, int column) {
				// One series: zk-lock's bars in colour, the others' grey.
				if (data.getRowCount() == 1) {
					return data.getColumnKey(column).toString().startsWith("zk-lock") ? OURS : OTHER;
				}
				return super.getItemPaint(row, column);
			}

		};
		CategoryPlot plot = new CategoryPlot(data, new CategoryAxis(null), null, renderer);
		plot.setOrientation(PlotOrientation.HORIZONTAL);
		if (logScale) {
			LogAxis axis = new LogAxis(valueLabel);
			axis.setBase(10);
			axis.setTickUnit(new NumberTickUnit(1));
			axis.setNumberFormatOverride(new java.text.DecimalFormat("#,##0"));
			double smallest = Double.MAX_VALUE;
			double largest = 0;
			// Every series' values: a baseline below the first series' smallest still shows.
			for (int row = 0; row < data.getRowCount(); row++) {
				for (int column = 0; column < data.getColumnCount(); column++) {
					Number value = data.getValue(row, column);
					if (value != null) {
						smallest = Math.min(smallest, value.doubleValue());
						largest = Math.max(largest, value.doubleValue());
					}
				}
			}
			axis.setRange(Math.pow(10, Math.floor(Math.log10(Math.max(1, smallest)))),
					Math.pow(10, Math.ceil(Math.log10(Math.max(10, largest * 1.5)))));
			plot.setRangeAxis(axis);
		}
		else {
			plot.setRangeAxis(new NumberAxis(valueLabel));
		}
		plot.setBackgroundPaint(Color.WHITE);
		plot.setRangeGridlinePaint(new Color(0xDDDDDD));
		renderer.setBarPainter(new StandardBarPainter());
		renderer.setShadowVisible(false);
		renderer.setItemMargin(0.05);
		renderer.setSeriesPaint(0, OURS);
		renderer.setSeriesPaint(1, (data.getRowCount() > 1 && data.getRowKey(1).toString().startsWith("raw"))
				? OTHER : SECOND);
		renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}",
				new java.text.DecimalFormat(labelFormat)));
		renderer.setDefaultItemLabelsVisible(true);
		renderer.setDefaultPositiveItemLabelPosition(
				new ItemLabelPosition(ItemLabelAnchor.OUTSIDE3, TextAnchor.CENTER_LEFT));
		renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		plot.getRangeAxis().setUpperMargin(0.08);
		if (markOne) {
			ValueMarker one = new ValueMarker(1.0, Color.DARK_GRAY, new BasicStroke(1.2f));
			plot.addRangeMarker(one);
		}
		JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 15), plot,
				data.getRowCount() > 1);
		chart.setBackgroundPaint(Color.WHITE);
		chart.addSubtitle(new TextTitle(runLine(), new Font(Font.SANS_SERIF, Font.PLAIN, 11)));
		return chart;
	}

	/** The run the figures come from, under each title. */
	private String runLine() {
		return String.format(Locale.ROOT, "%s run of %s; %s; load average %s before, %s after; log fsync %s",
				this.results.getProperty("run.mode", "?"), this.results.getProperty("run.started", "?"),
				this.results.getProperty("run.machine", "?").replaceFirst("^Machine: ", "").split(";")[0],
				this.results.getProperty("run.load_before", "?"),
				this.results.getProperty("run.load_after", "?"),
				Boolean.parseBoolean(this.results.getProperty("run.fsync", "false")) ? "on" : "off");
	}

}
