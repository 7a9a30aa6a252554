package io.github.zklock.chaos;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItem;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws a campaign's throughput over time as a PNG (JFreeChart): operations answered with success
 * per second, all workloads together and the fenced counter alone, with each fault marked as a band
 * from its injection to its heal in the colour of its family (partitions, pauses, crashes, clock
 * jumps), labelled with its kind when there are 30 faults or fewer. Runs headless.
 */
final class ThroughputChart {

	private static final int WIDTH = 1200;

	private static final int HEIGHT = 520;

	/** The fault kinds by family, each with its colour in the chart. */
	enum Family {

		PARTITION("partitions", new Color(0xE5, 0x8E, 0x8E, 90)),

		PAUSE("pauses, CPU starvation", new Color(0x9C, 0x8E, 0xE5, 90)),

		CRASH("crashes (SIGKILL)", new Color(0x8E, 0xC9, 0x8E, 110)),

		CLOCK("clock jumps", new Color(0xE5, 0xC8, 0x6E, 110));

		final String label;

		final Color colour;

		Family(String label, Color colour) {
			this.label = label;
			this.colour = colour;
		}

	}

	private ThroughputChart() {
	}

	/**
	 * Draw the chart of a finished campaign again from its files, {@code history.csv} and
	 * {@code faults.csv}, into its {@code throughput.png}.
	 * @param args the campaign's work directory, then the subtitle
	 * @throws IOException if a file cannot be read or the chart written
	 */
	public static void main(String[] args) throws IOException {
		if (args.length != 2) {
			throw new IllegalArgumentException("Usage: ThroughputChart WORK_DIRECTORY SUBTITLE");
		}
		Path work = Path.of(args[0]);
		List<History.Operation> operations = new ArrayList<>();
		long end = 0;
		List<String> history = Files.readAllLines(work.resolve("history.csv"));
		for (String line : history.subList(1, history.size())) {
			String[] fields = line.split(",", 8);
			long completed = nanos(fields[5]);
			end = Math.max(end, completed);
			operations.add(new History.Operation(fields[0], Workload.byLabel(fields[1]), Integer.parseInt(fields[2]),
					Integer.parseInt(fields[3]), nanos(fields[4]), completed, History.Outcome.valueOf(fields[6]), 0, -1,
					"", ""));
		}
		List<Nemesis.Fault> faults = new ArrayList<>();
		List<String> faultLines = Files.readAllLines(work.resolve("faults.csv"));
		for (String line : faultLines.subList(1, faultLines.size())) {
			String[] fields = line.split(",");
			faults.add(new Nemesis.Fault(Nemesis.Kind.byLabel(fields[0]), fields[1], nanos(fields[2]), nanos(fields[3]),
					nanos(fields[4])));
		}
		draw(work.resolve("throughput.png"), args[1], operations, faults, 0, end);
	}

	/**
	 * Write a campaign's faults as CSV ({@code kind,target,start_ms,heal_ms,recovered_ms}, from
	 * {@code originNanos}; -1 for a fault the system did not come back from).
	 * @throws IOException if the file cannot be written
	 */
	static void writeFaults(Path file, List<Nemesis.Fault> faults, long originNanos) throws IOException {
		List<String> lines = new ArrayList<>();
		lines.add("kind,target,start_ms,heal_ms,recovered_ms");
		for (Nemesis.Fault fault : faults) {
			lines.add(String.join(",", fault.kind().label(), fault.target(), millis(fault.startNanos() - originNanos),
					millis(fault.healNanos() - originNanos),
					(fault.recoveredNanos() < 0) ? "-1" : millis(fault.recoveredNanos() - originNanos)));
		}
		Files.write(file, lines);
	}

	private static String millis(long nanos) {
		return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
	}

	private static long nanos(String millis) {
		return (long) (Double.parseDouble(millis) * 1e6);
	}

	/**
	 * Draw the chart.
	 * @param file the PNG to write
	 * @param subtitle the run it comes from (seed, servers, minutes)
	 * @param operations the history
	 * @param faults the faults
	 * @param originNanos the campaign's start
	 * @param endNanos its end
	 * @throws IOException if the file cannot be written
	 */
	static void draw(Path file, String subtitle, List<History.Operation> operations, List<Nemesis.Fault> faults,
			long originNanos, long endNanos) throws IOException {
		System.setProperty("java.awt.headless", "true");
		int seconds = (int) Math.max(1, (endNanos - originNanos) / 1_000_000_000L + 1);
		int[] all = new int[seconds];
		int[] counter = new int[seconds];
		for (History.Operation operation : operations) {
			if (operation.outcome() != History.Outcome.OK) {
				continue;
			}
			int second = (int) ((operation.completedNanos() - originNanos) / 1_000_000_000L);
			if (second >= 0 && second < seconds) {
				all[second]++;
				if (operation.workload() == Workload.FENCED_COUNTER) {
					counter[second]++;
				}
			}
		}
		XYSeries total = new XYSeries("all workloads");
		XYSeries fenced = new XYSeries("fenced counter (one key)");
		for (int second = 0; second < seconds; second++) {
			total.add(second, all[second]);
			fenced.add(second, counter[second]);
		}
		XYSeriesCollection data = new XYSeriesCollection();
		data.addSeries(total);
		data.addSeries(fenced);
		JFreeChart chart = ChartFactory.createXYLineChart("Operations answered with success per second, faults marked",
				"seconds since the start", "operations / s", data, PlotOrientation.VERTICAL, true, false, false);
		chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
		chart.setBackgroundPaint(Color.WHITE);
		XYPlot plot = chart.getXYPlot();
		plot.setBackgroundPaint(Color.WHITE);
		plot.setDomainGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
		plot.setRangeGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
		renderer.setSeriesPaint(0, new Color(0x2F6FAB));
		renderer.setSeriesPaint(1, new Color(0xE0, 0x8A, 0x1E));
		renderer.setSeriesStroke(0, new BasicStroke(1.5f));
		renderer.setSeriesStroke(1, new BasicStroke(1.5f));
		plot.setRenderer(renderer);
		// Each fault a band from its injection to its heal, in its family's colour; labelled with
		// its kind when there are few enough to read.
		boolean labelled = faults.size() <= 30;
		for (int i = 0; i < faults.size(); i++) {
			Nemesis.Fault fault = faults.get(i);
			double start = (fault.startNanos() - originNanos) / 1e9;
			double heal = Math.max(start + 0.2, (fault.healNanos() - originNanos) / 1e9);
			IntervalMarker marker = new IntervalMarker(start, heal, family(fault.kind()).colour);
			if (labelled) {
				marker.setLabel(fault.kind().label());
				marker.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 9));
				marker.setLabelAnchor(RectangleAnchor.TOP_LEFT);
				marker.setLabelTextAnchor(TextAnchor.TOP_LEFT);
				// Staggered down the plot, so that the labels of faults close in time do not overlap.
				marker.setLabelOffset(new RectangleInsets(4 + (i % 6) * 11, 2, 2, 2));
			}
			plot.addDomainMarker(marker, Layer.BACKGROUND);
		}
		LegendItemCollection legend = new LegendItemCollection();
		legend.add(new LegendItem(total.getKey().toString(), new Color(0x2F6FAB)));
		legend.add(new LegendItem(fenced.getKey().toString(), new Color(0xE0, 0x8A, 0x1E)));
		for (Family family : Family.values()) {
			legend.add(new LegendItem(family.label, family.colour));
		}
		plot.setFixedLegendItems(legend);
		ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
	}

	static Family family(Nemesis.Kind kind) {
		return switch (kind) {
			case PARTITION_LEADER, PARTITION_MINORITY, PARTITION_CLIENT -> Family.PARTITION;
			case PAUSE, CPU_STARVATION -> Family.PAUSE;
			case KILL_LEADER, KILL_FOLLOWER, KILL_APPLICATION -> Family.CRASH;
			case CLOCK_FORWARD, CLOCK_BACKWARD -> Family.CLOCK;
		};
	}

	static String subtitle(long seed, int servers, int applications, double minutes) {
		return String.format(Locale.ROOT, "seed %d, %d ZooKeeper servers, %d instances of the sample app, %.1f minutes of faults",
				seed, servers, applications, minutes);
	}

}
