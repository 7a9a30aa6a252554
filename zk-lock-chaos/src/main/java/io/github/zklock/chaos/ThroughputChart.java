package io.github.zklock.chaos;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
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
 * from its injection to its heal, labelled with its kind. Runs headless.
 */
final class ThroughputChart {

	private static final int WIDTH = 1200;

	private static final int HEIGHT = 520;

	private static final Color FAULT = new Color(0xF2, 0xB8, 0xB5, 110);

	private ThroughputChart() {
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
		for (int i = 0; i < faults.size(); i++) {
			Nemesis.Fault fault = faults.get(i);
			double start = (fault.startNanos() - originNanos) / 1e9;
			double heal = Math.max(start + 0.2, (fault.healNanos() - originNanos) / 1e9);
			IntervalMarker marker = new IntervalMarker(start, heal, FAULT);
			marker.setLabel(fault.kind().label());
			marker.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 9));
			marker.setLabelAnchor(RectangleAnchor.TOP_LEFT);
			marker.setLabelTextAnchor(TextAnchor.TOP_LEFT);
			// Staggered down the plot, so that the labels of faults close in time do not overlap.
			marker.setLabelOffset(new RectangleInsets(4 + (i % 6) * 11, 2, 2, 2));
			plot.addDomainMarker(marker, Layer.BACKGROUND);
		}
		ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
	}

	static String subtitle(long seed, int servers, int applications, double minutes) {
		return String.format(Locale.ROOT, "seed %d, %d ZooKeeper servers, %d instances of the sample app, %.1f minutes of faults",
				seed, servers, applications, minutes);
	}

}
