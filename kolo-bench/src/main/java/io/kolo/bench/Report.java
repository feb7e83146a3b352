package io.kolo.bench;

import java.util.ArrayList;
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

    public String json() {
        Json j = new Json();
        j.open('{');
        j.field("collective").string(collective.id());
        j.field("ranks").number(ranks);
        j.field("dtype").string(type.id());
        j.field("bus_factor").number(collective.busFactor(ranks));
        j.field("command").string(command);
        j.field("environment").open('{');
        environment.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> j.field(e.getKey()).string(e.getValue()));
        j.close('}');
        j.field("series").open('[');
        for (Series s : series) {
            j.open('{');
            j.field("name").string(s.name());
            j.field("status").string(s.status().name().toLowerCase(Locale.ROOT));
            j.field("reason").string(s.reason());
            j.field("results").open('[');
            for (Measurement m : s.measurements()) {
                j.open('{');
                j.field("bytes").number(m.bytes());
                j.field("iterations").number(m.iterations());
                j.field("avg_us").number(m.avgSeconds() * 1e6);
                j.field("min_us").number(m.minSeconds() * 1e6);
                j.field("median_us").number(m.medianSeconds() * 1e6);
                j.field("max_us").number(m.maxSeconds() * 1e6);
                j.field("algbw_gbps").number(m.algBandwidth() / 1e9);
                j.field("busbw_gbps").number(busBandwidth(m) / 1e9);
                j.close('}');
            }
            j.close(']');
            j.close('}');
        }
        j.close(']');
        j.field("ratios").open('[');
        for (Comparison c : comparisons) {
            j.open('{');
            j.field("kolo").string(c.kolo());
            j.field("peer").string(c.peer());
            j.field("by_size").open('[');
            for (Step step : steps) {
                double r = c.ratio(this, step.bytes());
                if (!Double.isNaN(r)) {
                    j.open('{');
                    j.field("bytes").number(step.bytes());
                    j.field("ratio").number(r);
                    j.field("ratio_median").number(c.medianRatio(this, step.bytes()));
                    j.close('}');
                }
            }
            j.close(']');
            j.close('}');
        }
        j.close(']');
        j.close('}');
        return j.toString();
    }

    /** Just enough of a JSON writer for the report: pretty, comma-correct, escaped. */
    static final class Json {
        private final StringBuilder sb = new StringBuilder();
        private final List<Boolean> first = new ArrayList<>();
        private boolean afterField;

        Json open(char c) {
            value();
            sb.append(c);
            first.add(true);
            return this;
        }

        Json close(char c) {
            boolean empty = first.removeLast();
            if (!empty) {
                newline();
            }
            sb.append(c);
            return this;
        }

        Json field(String name) {
            value();
            afterField = true;
            string(name);
            sb.append(": ");
            afterField = true;
            return this;
        }

        Json string(String s) {
            value();
            if (s == null) {
                sb.append("null");
                return this;
            }
            sb.append('"');
            for (char ch : s.toCharArray()) {
                switch (ch) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    case '\t' -> sb.append("\\t");
                    default -> {
                        if (ch < 0x20) {
                            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                        } else {
                            sb.append(ch);
                        }
                    }
                }
            }
            sb.append('"');
            return this;
        }

        Json number(double v) {
            value();
            if (Double.isNaN(v) || Double.isInfinite(v)) {
                sb.append("null");
            } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
                sb.append((long) v);
            } else {
                sb.append(String.format(Locale.ROOT, "%.6g", v));
            }
            return this;
        }

        /** Before any value: a comma and newline unless it is the first in its container or follows its name. */
        private void value() {
            if (afterField) {
                afterField = false;
                return;
            }
            if (!first.isEmpty()) {
                if (!first.getLast()) {
                    sb.append(',');
                }
                first.set(first.size() - 1, false);
                newline();
            }
        }

        private void newline() {
            sb.append('\n').append("  ".repeat(first.size()));
        }

        @Override
        public String toString() {
            return sb + "\n";
        }
    }
}
