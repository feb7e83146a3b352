package io.kolo.bench;

import javax.imageio.ImageIO;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Bus bandwidth against message size, one line per series, message size on a log axis: the curve users
 * compare collective libraries by. Written as SVG or PNG (headless Java2D), chosen by the file extension.
 */
public final class Plot {
    static final int WIDTH = 960;
    static final int HEIGHT = 560;
    private static final double LEFT = 80;
    private static final double RIGHT = 30;
    private static final double TOP = 60;
    private static final double BOTTOM = 70;
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
            "#e377c2", "#17becf"};

    private final Report report;

    public Plot(Report report) {
        this.report = report;
    }

    /** Writes {@code out}: {@code .svg} or {@code .png}. */
    public void write(Path out) throws IOException {
        String name = out.getFileName().toString().toLowerCase(Locale.ROOT);
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        if (name.endsWith(".svg")) {
            Files.writeString(out, svg());
        } else if (name.endsWith(".png")) {
            ImageCanvas canvas = new ImageCanvas(WIDTH, HEIGHT);
            draw(canvas);
            if (!ImageIO.write(canvas.finish(), "png", out.toFile())) {
                throw new IOException("no PNG writer in this JDK");
            }
        } else {
            throw new IllegalArgumentException("--plot " + out + ": use a file name ending in .svg or .png");
        }
    }

    /** Checked before a long run, so a typo fails at once rather than after the measurements. */
    public static void checkName(Path out) {
        String name = out.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!name.endsWith(".svg") && !name.endsWith(".png")) {
            throw new IllegalArgumentException("--plot " + out + ": use a file name ending in .svg or .png");
        }
    }

    String svg() {
        SvgCanvas canvas = new SvgCanvas(WIDTH, HEIGHT);
        draw(canvas);
        return canvas.finish();
    }

    void draw(Canvas c) {
        List<Series> shown = report.series().stream()
                .filter(s -> s.status() == Series.Status.OK && !s.measurements().isEmpty()).toList();
        List<Step> steps = report.steps();
        long minBytes = steps.getFirst().bytes();
        long maxBytes = steps.getLast().bytes();
        double maxBus = 0;
        for (Series s : shown) {
            for (Measurement m : s.measurements()) {
                maxBus = Math.max(maxBus, report.busBandwidth(m) / 1e9);
            }
        }
        double yTop = niceCeiling(maxBus);
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        double logMin = log2(minBytes);
        double logSpan = Math.max(1, log2(maxBytes) - logMin);

        c.rect(0, 0, WIDTH, HEIGHT, "#ffffff", null);
        c.text(WIDTH / 2.0, 28, String.format(Locale.ROOT, "%s bus bandwidth, %d ranks, %s", report.collective().id(),
                report.ranks(), "higher is better"), 18, Canvas.Anchor.MIDDLE, "#222222", true);
        // y grid and labels
        double yStep = yTop / 5;
        for (int i = 0; i <= 5; i++) {
            double v = i * yStep;
            double y = TOP + plotH - v / yTop * plotH;
            c.line(LEFT, y, LEFT + plotW, y, "#dddddd", 1, i != 0);
            c.text(LEFT - 8, y + 4, trim(v), 12, Canvas.Anchor.END, "#333333", false);
        }
        c.verticalText(24, TOP + plotH / 2, "bus bandwidth (GB/s)", 14, "#222222");
        // x grid at powers of two, labelled every other one when crowded
        int labelEvery = logSpan > 16 ? 2 : 1;
        for (long b = Long.highestOneBit(minBytes) == minBytes ? minBytes : Long.highestOneBit(minBytes) << 1;
             b <= maxBytes; b <<= 1) {
            double x = LEFT + (log2(b) - logMin) / logSpan * plotW;
            boolean label = ((Long.numberOfTrailingZeros(b) - Long.numberOfTrailingZeros(Long.highestOneBit(maxBytes)))
                    % labelEvery) == 0;
            c.line(x, TOP, x, TOP + plotH, label ? "#dddddd" : "#f0f0f0", 1, false);
            if (label) {
                c.text(x, TOP + plotH + 18, Sizes.format(b), 11, Canvas.Anchor.MIDDLE, "#333333", false);
            }
        }
        c.text(LEFT + plotW / 2, HEIGHT - 22, "message size (bytes, log scale)", 14, Canvas.Anchor.MIDDLE,
                "#222222", false);
        c.line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, "#333333", 1.2, false);
        c.line(LEFT, TOP, LEFT, TOP + plotH, "#333333", 1.2, false);
        // series
        for (int s = 0; s < shown.size(); s++) {
            Series series = shown.get(s);
            String color = COLORS[s % COLORS.length];
            List<Measurement> ms = series.measurements();
            double[] xs = new double[ms.size()];
            double[] ys = new double[ms.size()];
            for (int i = 0; i < ms.size(); i++) {
                xs[i] = LEFT + (log2(ms.get(i).bytes()) - logMin) / logSpan * plotW;
                ys[i] = TOP + plotH - report.busBandwidth(ms.get(i)) / 1e9 / yTop * plotH;
            }
            c.polyline(xs, ys, color, series.name().startsWith("Kolo") ? 2.5 : 1.8);
            for (int i = 0; i < xs.length; i++) {
                c.circle(xs[i], ys[i], 3, color);
            }
        }
        // legend, top left where small messages leave the plot empty
        double lx = LEFT + 16;
        double ly = TOP + 12;
        c.rect(lx - 8, ly - 6, 190, 22.0 * shown.size() + 8, "#ffffff", "#cccccc");
        for (int s = 0; s < shown.size(); s++) {
            String color = COLORS[s % COLORS.length];
            double y = ly + 22.0 * s + 8;
            c.line(lx, y, lx + 28, y, color, 2.5, false);
            c.circle(lx + 14, y, 3, color);
            c.text(lx + 36, y + 5, shown.get(s).name(), 13, Canvas.Anchor.START, "#222222", false);
        }
    }

    private static double log2(double v) {
        return Math.log(v) / Math.log(2);
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

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, "%.2f", v);
        return s.replaceAll("\\.?0+$", "");
    }
}
