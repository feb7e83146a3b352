package io.kolo.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What one {@code kolo bench} run measured: the printed tables and the JSON document. */
public final class Report {
    private final Collective collective;
    private final int ranks;
    private final ElementType type;
    private final String command;
    private final List<Step> steps;
    private final List<Series> series;
    private final List<Comparison> comparisons;
    private final Map<String, String> environment;

    public Report(Collective collective, int ranks, ElementType type, String command, List<Step> steps,
                  List<Series> series, List<Comparison> comparisons, Map<String, String> environment) {
        this.collective = collective;
        this.ranks = ranks;
        this.type = type;
        this.command = command;
        this.steps = List.copyOf(steps);
        this.series = List.copyOf(series);
        this.comparisons = List.copyOf(comparisons);
        this.environment = Map.copyOf(environment);
    }

    public Collective collective() {
        return collective;
    }

    public int ranks() {
        return ranks;
    }

    public List<Series> series() {
        return series;
    }

    public List<Comparison> comparisons() {
        return comparisons;
    }

    public List<Step> steps() {
        return steps;
    }

    public Series series(String name) {
        return series.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
    }

    /** Bus bandwidth in bytes per second. */
    public double busBandwidth(Measurement m) {
        return m.busBandwidth(collective, ranks);
    }

    // ---- text

    /** Detailed tables for the Kolo series, then (with peers) one row per size across all series and ratios. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%s, %d ranks, %s; bus bandwidth = algorithm bandwidth x %.3f%n",
                collective.id(), ranks, type.id(), collective.busFactor(ranks)));
        for (Series s : series) {
            if (s.status() == Series.Status.OK && s.name().startsWith("Kolo")) {
                sb.append('\n').append(detail(s));
            }
        }
        if (series.size() > 1) {
            sb.append('\n').append(summary());
        }
        for (Series s : series) {
            if (s.status() != Series.Status.OK) {
                sb.append(String.format(Locale.ROOT, "%s: %s (%s)%n", s.name(),
                        s.status() == Series.Status.SKIPPED ? "skipped" : "FAILED", s.reason()));
            }
        }
        return sb.toString();
    }

    private String detail(Series s) {
        StringBuilder sb = new StringBuilder(s.name()).append('\n');
        sb.append(String.format(Locale.ROOT, "%9s %6s %11s %11s %11s %11s %10s %10s%n", "size", "iters", "avg us",
                "min us", "median us", "max us", "algbw GB/s", "busbw GB/s"));
        for (Measurement m : s.measurements()) {
            sb.append(String.format(Locale.ROOT, "%9s %6d %11s %11s %11s %11s %10.3f %10.3f%n",
                    Sizes.format(m.bytes()), m.iterations(), us(m.avgSeconds()), us(m.minSeconds()),
                    us(m.medianSeconds()), us(m.maxSeconds()), m.algBandwidth() / 1e9, busBandwidth(m) / 1e9));
        }
        return sb.toString();
    }

    private String summary() {
        List<Series> ok = series.stream().filter(s -> s.status() == Series.Status.OK).toList();
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%9s", "size"));
        StringBuilder header2 = new StringBuilder(String.format(Locale.ROOT, "%9s", ""));
        for (Series s : ok) {
            header.append(String.format(Locale.ROOT, " | %-19s", s.name()));
            header2.append(String.format(Locale.ROOT, " | %9s %9s", "avg us", "busbw"));
        }
        List<Comparison> shown = comparisons.stream()
                .filter(c -> series(c.kolo()) != null && series(c.peer()) != null
                        && series(c.kolo()).status() == Series.Status.OK && series(c.peer()).status() == Series.Status.OK)
                .toList();
        for (Comparison c : shown) {
            header.append(String.format(Locale.ROOT, " | %-20s", c.label()));
            header2.append(String.format(Locale.ROOT, " | %20s", "ratio"));
        }
        StringBuilder sb = new StringBuilder("Comparison (avg us per op, busbw in GB/s; ratio = peer time / Kolo time"
                + " on averages (medians in the JSON), > 1: Kolo faster)\n");
        sb.append(header).append('\n').append(header2).append('\n');
        for (Step step : steps) {
            sb.append(String.format(Locale.ROOT, "%9s", Sizes.format(step.bytes())));
            for (Series s : ok) {
                Measurement m = s.at(step.bytes());
                sb.append(m == null ? String.format(Locale.ROOT, " | %9s %9s", "-", "-")
                        : String.format(Locale.ROOT, " | %9s %9.3f", us(m.avgSeconds()), busBandwidth(m) / 1e9));
            }
            for (Comparison c : shown) {
                double r = c.ratio(this, step.bytes());
                sb.append(Double.isNaN(r) ? String.format(Locale.ROOT, " | %20s", "-")
                        : String.format(Locale.ROOT, " | %19.2fx", r));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static String us(double seconds) {
        double us = seconds * 1e6;
        return us >= 1000 ? String.format(Locale.ROOT, "%.0f", us) : String.format(Locale.ROOT, "%.1f", us);
    }

    // ---- JSON

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Pretty-printed: two-space indent, {@code "name": value}, arrays one element per line, empty ones as {@code []}. */
    static final DefaultPrettyPrinter PRETTY;

    static {
        DefaultIndenter indent = new DefaultIndenter("  ", "\n");
        DefaultPrettyPrinter p = new DefaultPrettyPrinter().withSeparators(Separators.createDefaultInstance()
                .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                .withObjectEmptySeparator("").withArrayEmptySeparator(""));
        p.indentObjectsWith(indent);
        p.indentArraysWith(indent);
        PRETTY = p;
    }

    public String json() {
        ObjectNode root = JSON.createObjectNode();
        root.put("collective", collective.id());
        root.put("ranks", ranks);
        root.put("dtype", type.id());
        number(root, "bus_factor", collective.busFactor(ranks));
        root.put("command", command);
        ObjectNode env = root.putObject("environment");
        environment.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> env.put(e.getKey(), e.getValue()));
        ArrayNode seriesArray = root.putArray("series");
        for (Series s : series) {
            ObjectNode o = seriesArray.addObject();
            o.put("name", s.name());
            o.put("status", s.status().name().toLowerCase(Locale.ROOT));
            o.put("reason", s.reason());
            ArrayNode results = o.putArray("results");
            for (Measurement m : s.measurements()) {
                ObjectNode r = results.addObject();
                r.put("bytes", m.bytes());
                r.put("iterations", m.iterations());
                number(r, "avg_us", m.avgSeconds() * 1e6);
                number(r, "min_us", m.minSeconds() * 1e6);
                number(r, "median_us", m.medianSeconds() * 1e6);
                number(r, "max_us", m.maxSeconds() * 1e6);
                number(r, "algbw_gbps", m.algBandwidth() / 1e9);
                number(r, "busbw_gbps", busBandwidth(m) / 1e9);
            }
        }
        ArrayNode ratios = root.putArray("ratios");
        for (Comparison c : comparisons) {
            ObjectNode o = ratios.addObject();
            o.put("kolo", c.kolo());
            o.put("peer", c.peer());
            ArrayNode bySize = o.putArray("by_size");
            for (Step step : steps) {
                double r = c.ratio(this, step.bytes());
                if (!Double.isNaN(r)) {
                    ObjectNode b = bySize.addObject();
                    b.put("bytes", step.bytes());
                    number(b, "ratio", r);
                    number(b, "ratio_median", c.medianRatio(this, step.bytes()));
                }
            }
        }
        try {
            return JSON.writer(PRETTY).writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whole numbers as integers, others to six significant digits, NaN and infinities as null. */
    static void number(ObjectNode o, String name, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            o.putNull(name);
        } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            o.put(name, (long) v);
        } else {
            o.put(name, new BigDecimal(v).round(new MathContext(6)));
        }
    }
}
