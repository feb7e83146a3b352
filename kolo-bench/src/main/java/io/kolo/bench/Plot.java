package io.kolo.bench;

import org.knowm.xchart.ChartEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Bus bandwidth against message size, one line per series, message size on a log axis: the curve users
 * compare collective libraries by. Drawn by XChart and written as SVG or PNG, chosen by the file extension.
 */
public final class Plot {
    static final int WIDTH = 960;
    static final int HEIGHT = 560;
    /** Fixed rather than XChart's theme colours, so a series has the same colour in the SVG and the PNG of a run. */
    static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x17becf)};
    static final String X_TITLE = "message size (bytes, log scale)";
    static final String Y_TITLE = "bus bandwidth (GB/s)";

    private final Report report;
    /** Skipped and failed series have no line, and take no colour from those that do. */
    private final List<Series> shown;

    public Plot(Report report) {
        this.report = report;
        this.shown = report.series().stream()
                .filter(s -> s.status() == Series.Status.OK && !s.measurements().isEmpty()).toList();
    }

    /** Writes {@code out}: {@code .svg} or {@code .png}. */
    public void write(Path out) throws IOException {
        boolean svg = isSvg(out);
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        if (svg) {
            Files.writeString(out, svg());
        } else {
            try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(out))) {
                ChartEncoder.saveChart(chart(), os, "png");
            }
        }
    }

    /** Checked before a long run, so a typo fails at once rather than after the measurements. */
    public static void checkName(Path out) {
        isSvg(out);
    }

    private static boolean isSvg(Path out) {
        String name = out.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!name.endsWith(".svg") && !name.endsWith(".png")) {
            throw new IllegalArgumentException("--plot " + out + ": use a file name ending in .svg or .png");
        }
        return name.endsWith(".svg");
    }

    /**
     * XChart draws every letter as an outline, so the drawing alone names nothing a search or a screen reader
     * could find; a {@code <title>} and {@code <desc>} right after the root tag name the axes and series.
     */
    String svg() throws IOException {
        XYChart chart = chart();
        String svg = new String(ChartEncoder.getBytes(chart, "svg"), StandardCharsets.UTF_8);
        int root = svg.indexOf('>', svg.indexOf("<svg")) + 1;
        String desc = Y_TITLE + " against " + X_TITLE + ", " + Sizes.format(report.steps().getFirst().bytes())
                + " to " + Sizes.format(report.steps().getLast().bytes()) + "; series: "
                + String.join(", ", shown.stream().map(Series::name).toList());
        return svg.substring(0, root) + "\n  <title>" + escape(chart.getTitle()) + "</title>\n  <desc>"
                + escape(desc) + "</desc>" + svg.substring(root);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /**
     * The x values are log2 of the size on a linear axis rather than XChart's logarithmic axis: that one puts
     * its ticks at powers of ten, where no measured size lies, while here XChart ticks the measured sizes.
     */
    XYChart chart() {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title(String.format(Locale.ROOT, "%s bus bandwidth, %d ranks, higher is better",
                        report.collective().id(), report.ranks()))
                .xAxisTitle(X_TITLE).yAxisTitle(Y_TITLE).build();
        XYStyler styler = chart.getStyler();
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotBackgroundColor(Color.WHITE);
        styler.setPlotGridLinesColor(new Color(0xdddddd));
        styler.setLegendPosition(Styler.LegendPosition.InsideNW);
        styler.setMarkerSize(6);
        styler.setXAxisTickLabelsFormattingFunction(Plot::sizeLabel);
        styler.setXAxisMin(log2(report.steps().getFirst().bytes()));
        styler.setXAxisMax(log2(report.steps().getLast().bytes()));
        styler.setYAxisMin(0.0);
        styler.setYAxisDecimalPattern("0.###");
        double maxBus = 0;
        for (int s = 0; s < shown.size(); s++) {
            List<Measurement> ms = shown.get(s).measurements();
            double[] xs = new double[ms.size()];
            double[] ys = new double[ms.size()];
            for (int i = 0; i < ms.size(); i++) {
                xs[i] = log2(ms.get(i).bytes());
                ys[i] = report.busBandwidth(ms.get(i)) / 1e9;
                maxBus = Math.max(maxBus, ys[i]);
            }
            XYSeries line = chart.addSeries(shown.get(s).name(), xs, ys);
            Color color = COLORS[s % COLORS.length];
            line.setLineColor(color);
            line.setMarkerColor(color);
            line.setMarker(SeriesMarkers.CIRCLE);
            line.setLineWidth(shown.get(s).name().startsWith("Kolo") ? 2.5f : 1.8f);
        }
        styler.setYAxisMax(niceCeiling(maxBus));
        return chart;
    }

    /** Labels only whole powers of two: a tick XChart puts between them would name a size nobody measured. */
    static String sizeLabel(double log2) {
        long exponent = Math.round(log2);
        return Math.abs(log2 - exponent) < 1e-9 && exponent >= 0 && exponent < 63 ? Sizes.format(1L << exponent) : "";
    }

    private static double log2(long bytes) {
        return Long.bitCount(bytes) == 1 ? Long.numberOfTrailingZeros(bytes) : Math.log(bytes) / Math.log(2);
    }

    /** 1, 2, 2.5 or 5 times a power of ten at or above v (never 0, so an empty plot still has an axis). */
    static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double exp = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * exp >= v) {
                return m * exp;
            }
        }
        return 10 * exp;
    }
}
