package io.kolo.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the results tables of README.md and docs/*.md from the JSON files under docs/results/, so that every figure
 * a page shows comes from a file a command wrote. A page asks for a table with a pair of comments,
 * {@code <!-- results KIND docs/results/FILE.json -->} and {@code <!-- /results -->}; everything between them is
 * replaced. Run it with {@code kolo-bench/scripts/results-tables.sh}; {@code --check} only says which pages differ.
 */
public final class ResultsTables {
    /** The command a page names beside each table. */
    static final String COMMAND = "kolo-bench/scripts/results-tables.sh";
    private static final Pattern BLOCK = Pattern.compile(
            "(<!-- results ([a-z-]+) (\\S+) -->\\n)(.*?)(<!-- /results -->)", Pattern.DOTALL);
    private static final JsonMapper JSON = new JsonMapper();

    private ResultsTables() {
    }

    /** {@code [--check] [ROOT]}: rewrites the tables of ROOT's pages (default: the working directory). */
    public static void main(String[] args) {
        boolean check = args.length > 0 && args[0].equals("--check");
        Path root = Path.of(args.length > (check ? 1 : 0) ? args[args.length - 1] : ".");
        try {
            List<Path> stale = new ArrayList<>();
            for (Path page : pages(root)) {
                String text = Files.readString(page);
                String fresh = rewrite(root, page, text);
                if (!fresh.equals(text)) {
                    stale.add(root.relativize(page));
                    if (!check) {
                        Files.writeString(page, fresh);
                    }
                }
            }
            System.out.println((check ? "results tables out of date: " : "rewrote: ")
                    + (stale.isEmpty() ? "none" : stale));
            if (check && !stale.isEmpty()) {
                System.exit(1);
            }
        } catch (IOException | IllegalArgumentException | UncheckedIOException e) {
            System.err.println("results-tables: " + e.getMessage());
            System.exit(2);
        }
    }

    /** README.md and every page under docs/. */
    static List<Path> pages(Path root) throws IOException {
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    /** {@code text} of {@code page} with every results block made afresh from its JSON. */
    static String rewrite(Path root, Path page, String text) {
        Matcher m = BLOCK.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            Path json = root.resolve(m.group(3));
            String link = page.toAbsolutePath().getParent().relativize(json.toAbsolutePath()).toString();
            String table = table(m.group(2), read(json)) + "\n(From [" + json.getFileName() + "](" + link
                    + "); `" + COMMAND + "` rewrites this table from it.)\n";
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + table + m.group(5)));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static JsonNode read(Path json) {
        try {
            return JSON.readTree(json.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + json + ": " + e.getMessage(), e);
        }
    }

    static String table(String kind, JsonNode json) {
        return switch (kind) {
            case "bench" -> bench(json);
            case "first-run" -> firstRun(json);
            case "autotune" -> autotune(json);
            case "ddp" -> ddp(json);
            case "elastic-chaos" -> json.path("table").asText() + "\n";
            case "scale" -> scale(json);
            case "averaging" -> averaging(json);
            default -> throw new IllegalArgumentException("unknown results table '" + kind
                    + "' (bench, first-run, autotune, ddp, elastic-chaos, scale, averaging)");
        };
    }

    /** A {@code kolo bench --json} file: the median per size of every series that ran, and each peer against Kolo. */
    private static String bench(JsonNode json) {
        List<JsonNode> series = new ArrayList<>();
        json.path("series").forEach(s -> {
            if (s.path("status").asText().equals("ok")) {
                series.add(s);
            }
        });
        List<String[]> ratios = new ArrayList<>();   // {peer, Kolo series}
        for (JsonNode s : series) {
            String name = s.path("name").asText();
            if (!name.startsWith("Kolo")) {
                String kolo = name.endsWith("shm") && has(series, "Kolo shm") ? "Kolo shm" : "Kolo tcp";
                if (has(series, kolo)) {
                    ratios.add(new String[]{name, kolo});
                }
            }
        }
        StringBuilder t = new StringBuilder("`" + json.path("command").asText() + "`: " + json.path("collective")
                .asText() + ", " + json.path("ranks").asInt() + " ranks, " + json.path("dtype").asText()
                + "; median us per op; ratio = peer's time / Kolo's (above 1: Kolo faster).\n\n| size |");
        series.forEach(s -> t.append(' ').append(s.path("name").asText()).append(" |"));
        ratios.forEach(r -> t.append(' ').append(r[0]).append(" / ").append(r[1]).append(" |"));
        t.append("\n|---|").append("---|".repeat(series.size() + ratios.size())).append('\n');
        JsonNode first = series.isEmpty() ? null : series.getFirst().path("results");
        for (int i = 0; first != null && i < first.size(); i++) {
            long bytes = first.get(i).path("bytes").asLong();
            t.append("| ").append(Sizes.format(bytes)).append(" |");
            for (JsonNode s : series) {
                t.append(' ').append(number(median(s, bytes))).append(" |");
            }
            for (String[] r : ratios) {
                double peer = median(find(series, r[0]), bytes);
                double kolo = median(find(series, r[1]), bytes);
                t.append(' ').append(Double.isNaN(peer) || Double.isNaN(kolo) ? "–"
                        : String.format(Locale.ROOT, "%.2fx", peer / kolo)).append(" |");
            }
            t.append('\n');
        }
        return t.toString();
    }

    private static boolean has(List<JsonNode> series, String name) {
        return find(series, name) != null;
    }

    private static JsonNode find(List<JsonNode> series, String name) {
        return series.stream().filter(s -> s.path("name").asText().equals(name)).findFirst().orElse(null);
    }

    private static double median(JsonNode series, long bytes) {
        for (JsonNode r : series.path("results")) {
            if (r.path("bytes").asLong() == bytes && r.has("median_us")) {
                return r.path("median_us").asDouble();
            }
        }
        return Double.NaN;
    }

    private static String number(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return v >= 1000 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    /** {@code kolo bench scale --json}: one row per job size, and why growing stopped. */
    private static String scale(JsonNode json) {
        StringBuilder t = new StringBuilder("`" + json.path("command").asText() + "` (transport "
                + json.path("transport").asText() + ", " + json.path("host_cpus").asInt() + " CPUs"
                + (json.path("oversubscribed").asBoolean() ? ", oversubscribed: more ranks than CPUs" : "")
                + "); times are the slowest rank's, the other figures per rank:\n\n| ranks | as | init ms | first op ms"
                + " | " + Sizes.format(json.path("small_bytes").asLong()) + " allreduce us | per core-share us | "
                + Sizes.format(json.path("large_bytes").asLong()) + " allreduce us | store requests | store KiB | fds"
                + " | socket fds | heap MiB | RSS MiB | shm MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        List<String> stopped = new ArrayList<>();
        for (JsonNode s : json.path("steps")) {
            if (!s.path("status").asText().equals("ok")) {
                stopped.add(s.path("ranks").asInt() + " ranks as " + s.path("mode").asText() + ": "
                        + s.path("status").asText() + ", " + s.path("reason").asText());
                continue;
            }
            t.append("| ").append(s.path("ranks").asInt()).append(" | ").append(s.path("mode").asText());
            for (String f : List.of("init_ms", "first_op_ms", "small_allreduce_us")) {
                t.append(" | ").append(ScaleReport.fmt(s.path(f).asDouble()));
            }
            t.append(" | ").append(ScaleReport.fmt(ScaleReport.perCoreShare(s.path("small_allreduce_us").asDouble(),
                    s.path("ranks").asInt(), json.path("host_cpus").asInt())));
            for (String f : List.of("large_allreduce_us", "store_requests_per_rank")) {
                t.append(" | ").append(ScaleReport.fmt(s.path(f).asDouble()));
            }
            t.append(" | ").append(ScaleReport.fmt(s.path("store_bytes_per_rank").asDouble() / 1024));
            t.append(" | ").append(ScaleReport.fmt(s.path("fds_per_rank").asDouble()));
            t.append(" | ").append(ScaleReport.fmt(s.path("socket_fds_per_rank").asDouble()));
            for (String f : List.of("heap_bytes_per_rank", "rss_bytes_per_rank", "shm_bytes_per_rank")) {
                t.append(" | ").append(ScaleReport.fmt(s.path(f).asDouble() / ScaleReport.MIB));
            }
            t.append(" |\n");
        }
        for (String s : stopped) {
            t.append("\nStopped at ").append(s).append('\n');
        }
        return t.toString();
    }

    /** {@code first-run.sh --json}: the trivial job's phases, rank 0, the latest run. */
    private static String firstRun(JsonNode json) {
        JsonNode runs = json.path("runs");
        JsonNode last = runs.get(runs.size() - 1);
        JsonNode result = last.has("after") ? last.path("after") : last.path("result");
        StringBuilder t = new StringBuilder("`" + result.path("command").asText() + "` (" + result.path("host_cpus")
                .asInt() + " CPUs); medians, ms:\n\n| series | total | launcher | JVM | init | first op | shutdown | exit |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        for (JsonNode s : result.path("trivial_job")) {
            t.append("| ").append(s.path("series").asText()).append(" |");
            for (String phase : List.of("total_ms", "launcher_ms", "jvm_ms", "init_ms", "first_op_ms", "shutdown_ms",
                    "exit_ms")) {
                t.append(' ').append(s.has(phase) ? s.path(phase).asText() : "–").append(" |");
            }
            t.append('\n');
        }
        List<String> ratios = new ArrayList<>();
        result.path("readme_first10_over_steady").forEach(r -> ratios.add(r.asText() + "x"));
        if (!ratios.isEmpty()) {
            t.append("\nThe README's example in the same run: its first 10 ops took ").append(String.join(", ", ratios))
                    .append(" the steady state's time per op.\n");
        }
        return t.toString();
    }

    /** {@code autotune-compare.sh}: default against autotuned total img/sec per round, and what autotune chose. */
    private static String autotune(JsonNode json) {
        StringBuilder t = new StringBuilder("`autotune-compare.sh -np " + json.path("np").asInt() + " -- "
                + json.path("args").asText() + "`; total img/sec:\n\n| round | default | autotuned | autotune chose |\n"
                + "|---|---|---|---|\n");
        for (JsonNode r : json.path("rounds")) {
            t.append("| ").append(r.path("round").asInt()).append(" | ").append(r.path("default").asText())
                    .append(" | ").append(r.path("autotuned").asText()).append(" | ")
                    .append(r.path("chosen").asText()).append(" |\n");
        }
        return t.toString();
    }

    /** The synthetic example's {@code --compare --json}: Kolo+DJL against PyTorch DDP, per run. */
    private static String ddp(JsonNode json) {
        StringBuilder t = new StringBuilder("`" + json.path("command").asText() + "`; img/sec, efficiency = np=N total"
                + " / (N × np=1), paired = median of the iterations' efficiencies (each np=N run against the np=1 run"
                + " beside it); Kolo's own averaging as a share of the step:\n\n| run | model, ranks | Kolo+DJL np=1"
                + " | Kolo+DJL total | Kolo+DJL efficiency (paired) | DDP np=1 | DDP total | DDP efficiency (paired)"
                + " | ceiling | Kolo's own averaging |\n|---|---|---|---|---|---|---|---|---|---|\n");
        int i = 1;
        for (JsonNode run : json.path("runs")) {
            JsonNode r = run.path("result");
            JsonNode kolo = r.path("kolo");
            JsonNode ddp = r.path("ddp");
            t.append("| ").append(i++).append(" | ").append(r.path("model").asText()).append(", ")
                    .append(r.path("ranks").asInt()).append(" | ").append(fixed(kolo.path("np1_img_sec")))
                    .append(" | ").append(fixed(kolo.path("total_img_sec"))).append(" | ")
                    .append(percent(kolo.path("scaling_efficiency"))).append(paired(kolo)).append(" | ")
                    .append(fixed(ddp.path("np1_img_sec"))).append(" | ").append(fixed(ddp.path("total_img_sec")))
                    .append(" | ").append(percent(ddp.path("scaling_efficiency"))).append(paired(ddp)).append(" | ")
                    .append(percent(r.path("ceiling").path("scaling_efficiency"))).append(" | ")
                    .append(percent(kolo.path("averaging_own_share"))).append(" |\n");
        }
        return t.toString();
    }

    /**
     * averaging-breakdown.sh: where a training step's gradient averaging goes, per setting and run, beside kolo
     * bench's time for the same bytes.
     */
    private static String averaging(JsonNode json) {
        StringBuilder t = new StringBuilder("`kolo-bench/scripts/averaging-breakdown.sh`; medians per step after the"
                + " warm-up, in ms, from rank 0's timeline:\n\n| setting | run | step | averaging (trainer) | waiting for"
                + " the other rank | collectives | fusion copies | rest | kolo bench, same bytes |\n"
                + "|---|---|---|---|---|---|---|---|---|\n");
        for (JsonNode set : json.path("sets")) {
            int i = 1;
            for (JsonNode r : set.path("runs")) {
                t.append("| ").append(set.path("label").asText()).append(" | ").append(i++).append(" | ")
                        .append(fixed(r.path("step_ms"))).append(" | ").append(fixed(r.path("averaging_ms")))
                        .append(" | ").append(fixed(r.path("wait_ms"))).append(" | ")
                        .append(fixed(r.path("collectives_ms"))).append(" (").append(fixed(r.path("responses")))
                        .append(") | ").append(fixed(r.path("copies_ms"))).append(" | ")
                        .append(fixed(r.path("rest_ms"))).append(" | ").append(fixed(r.path("bench_ms")))
                        .append(" |\n");
            }
        }
        return t.toString();
    }

    /** " (81.2 %)": a framework's paired median efficiency, when the run has it. */
    private static String paired(JsonNode side) {
        JsonNode v = side.path("median_iteration_efficiency");
        return v.isNumber() ? " (" + percent(v) + ")" : "";
    }

    private static String fixed(JsonNode v) {
        return v.isNumber() ? String.format(Locale.ROOT, "%.1f", v.asDouble()) : "–";
    }

    private static String percent(JsonNode v) {
        return v.isNumber() ? String.format(Locale.ROOT, "%.1f %%", 100 * v.asDouble()) : "–";
    }
}
