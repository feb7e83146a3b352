package io.kolo.bench;

import org.knowm.xchart.ChartEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.io.IOException;
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
    private record Figure(String name, ToDoubleFunction<ScaleStep> value) {
    }

    private static final List<Figure> FIGURES = List.of(
            new Figure("init (ms)", ScaleStep::initMs),
            new Figure("first op (ms)", ScaleStep::firstOpMs),
            new Figure("8 B allreduce (us)", ScaleStep::smallUs),
            new Figure("1 MiB allreduce (us)", ScaleStep::largeUs),
            new Figure("store requests per rank", ScaleStep::storeRequestsPerRank),
            new Figure("store KiB per rank", s -> s.storeBytesPerRank() / 1024),
            new Figure("fds per rank", ScaleStep::fdsPerRank),
            new Figure("socket fds per rank", ScaleStep::socketFdsPerRank),
            new Figure("heap MiB per rank", s -> s.heapBytesPerRank() / ScaleReport.MIB),
            new Figure("RSS MiB per rank", s -> s.rssBytesPerRank() / ScaleReport.MIB));

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
        Files.write(out, ChartEncoder.getBytes(chart(), svg ? "svg" : "png"));
    }

    XYChart chart() {
        XYChart chart = new XYChartBuilder().width(Plot.WIDTH).height(Plot.HEIGHT)
                .title("kolo bench scale: each figure against the number of ranks (log-log)")
                .xAxisTitle("ranks (log scale)").yAxisTitle("value in the legend's unit (log scale)").build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setMarkerSize(6);
        int colour = 0;
        for (Figure f : FIGURES) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (ScaleStep s : report.steps()) {
                double v = f.value().applyAsDouble(s);
                if (s.ok() && v > 0) {
                    xs.add((double) s.ranks());
                    ys.add(v);
                }
            }
            if (xs.isEmpty()) {
                continue;
            }
            XYSeries line = chart.addSeries(f.name(), xs, ys);
            Color c = Plot.COLORS[colour % Plot.COLORS.length];
            line.setLineColor(c);
            line.setMarkerColor(c);
            line.setMarker(colour < Plot.COLORS.length ? SeriesMarkers.CIRCLE : SeriesMarkers.DIAMOND);
            colour++;
        }
        return chart;
    }
}
