package io.kolo.bench;

import org.knowm.xchart.ChartEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Every figure of {@code kolo bench scale} against the number of ranks, both axes logarithmic, one line per figure in
 * its own unit (named in the legend): a line that rises one decade per decade of ranks grows linearly with n.
 */
public final class ScalePlot {
    private record Figure(String name, java.util.function.ToDoubleBiFunction<ScaleStep, Integer> value) {
        Figure(String name, ToDoubleFunction<ScaleStep> value) {
            this(name, (s, cpus) -> value.applyAsDouble(s));
        }
    }

    private static final List<Figure> FIGURES = List.of(
            new Figure("init (ms)", ScaleStep::initMs),
            new Figure("first op (ms)", ScaleStep::firstOpMs),
            new Figure("8 B allreduce (us)", ScaleStep::smallUs),
            new Figure("8 B allreduce per core-share (us)",
                    (s, cpus) -> ScaleReport.perCoreShare(s.smallUs(), s.ranks(), cpus)),
            new Figure("1 MiB allreduce (us)", ScaleStep::largeUs),
            new Figure("store requests per rank", ScaleStep::storeRequestsPerRank),
            new Figure("store KiB per rank", s -> s.storeBytesPerRank() / 1024),
            new Figure("fds per rank", ScaleStep::fdsPerRank),
            new Figure("socket fds per rank", ScaleStep::socketFdsPerRank),
            new Figure("heap MiB per rank", s -> s.heapBytesPerRank() / ScaleReport.MIB),
            new Figure("RSS MiB per rank", s -> s.rssBytesPerRank() / ScaleReport.MIB));

    /** Plot's colours and two more, one per figure. */
    private static final Color[] COLORS = {Plot.COLORS[0], Plot.COLORS[1], Plot.COLORS[2], Plot.COLORS[3],
            Plot.COLORS[4], Plot.COLORS[5], Plot.COLORS[6], Plot.COLORS[7], new Color(0x7f7f7f), new Color(0xbcbd22), new Color(0x17becf)};

    private final ScaleReport report;

    public ScalePlot(ScaleReport report) {
        this.report = report;
    }

    public void write(Path out) throws IOException {
        Plot.checkName(out);
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        boolean svg = out.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".svg");
        List<String> shown = new ArrayList<>();
        XYChart chart = chart(shown);
        if (!svg) {
            Files.write(out, ChartEncoder.getBytes(chart, "png"));
            return;
        }
        // As Plot does: the drawing's letters are outlines, so name the chart and its lines in words.
        String text = new String(ChartEncoder.getBytes(chart, "svg"), StandardCharsets.UTF_8);
        int root = text.indexOf('>', text.indexOf("<svg")) + 1;
        String desc = "against ranks " + report.steps().stream().filter(ScaleStep::ok).map(st -> Integer.toString(
                st.ranks())).toList() + "; lines: " + String.join(", ", shown);
        Files.writeString(out, text.substring(0, root) + "\n  <title>" + chart.getTitle() + "</title>\n  <desc>"
                + desc + "</desc>" + text.substring(root));
    }

    /** Labels whole powers of two only: the ranks measured. */
    static String ranksLabel(double log2) {
        long exponent = Math.round(log2);
        return Math.abs(log2 - exponent) < 1e-9 && exponent >= 0 && exponent < 31 ? Long.toString(1L << exponent) : "";
    }

    /** The chart; adds the names of the lines it draws to {@code shown}. */
    XYChart chart(List<String> shown) {
        XYChart chart = new XYChartBuilder().width(Plot.WIDTH).height(Plot.HEIGHT)
                .title("kolo bench scale: each figure against the number of ranks (log-log)")
                .xAxisTitle("ranks (log scale)").yAxisTitle("value in the legend's unit (log scale)").build();
        // x is log2(n) on a linear axis, as Plot draws sizes: XChart's log axis ticks powers of ten, where no n lies.
        chart.getStyler().setXAxisTickLabelsFormattingFunction(ScalePlot::ranksLabel);
        chart.getStyler().setYAxisLogarithmic(true);
        // The log axis's grid draws every minor decade line: many times the drawing's size for little reading.
        chart.getStyler().setPlotGridLinesVisible(false);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setMarkerSize(6);
        int colour = 0;
        for (Figure f : FIGURES) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (ScaleStep s : report.steps()) {
                double v = f.value().applyAsDouble(s, report.hostCpus());
                if (s.ok() && v > 0) {
                    xs.add(Math.log(s.ranks()) / Math.log(2));
                    ys.add(v);
                }
            }
            if (xs.isEmpty()) {
                continue;
            }
            XYSeries line = chart.addSeries(f.name(), xs, ys);
            shown.add(f.name());
            Color c = COLORS[colour % COLORS.length];
            line.setLineColor(c);
            line.setMarkerColor(c);
            line.setMarker(SeriesMarkers.CIRCLE);
            colour++;
        }
        return chart;
    }
}
