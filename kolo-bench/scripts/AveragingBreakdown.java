import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where a DJL training step's gradient averaging goes, from one run of the synthetic example: its {@code --json}
 * (step and averaging time per rank) and rank 0's {@code KOLO_TIMELINE}, whose spans of each {@code djl.grad.*} op
 * say when the trainer submitted it, when the engine ran its collective and its fusion-buffer copies. Per step, from
 * the first gradient submitted to the last one averaged: waiting (for the other ranks to submit, and their
 * agreement), the fusion copies, the collectives, and the rest (cycles between responses). Medians over the steps
 * after the warm-up; the run is added to a results JSON under a label (replacing that label's runs with
 * {@code --replace}), so that builds can take turns run by run.
 *
 * <p>Run by {@code averaging-breakdown.sh}:
 * {@code java -cp "kolo-launcher/target/lib/*" AveragingBreakdown.java --out F --label L --command C --skip N RUN.json TIMELINE.json}
 */
public class AveragingBreakdown {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        Path out = null;
        String label = null;
        String command = "";
        Path bench = null;
        boolean bytesOnly = false;
        int skip = 2;
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--label" -> label = args[++i];
                case "--command" -> command = args[++i];
                case "--skip" -> skip = Integer.parseInt(args[++i]);
                case "--bench" -> bench = Path.of(args[++i]);
                case "--bytes" -> bytesOnly = true;
                default -> files.add(Path.of(args[i]));
            }
        }
        if ((!bytesOnly && (out == null || label == null)) || files.size() != 2) {
            System.err.println("averaging-breakdown: usage: --out FILE --label LABEL [--command C] [--skip N]"
                    + " [--bench BENCH.json] RUN.json TIMELINE.json (or --bytes RUN.json TIMELINE.json)");
            System.exit(2);
        }
        ObjectNode run = breakdown(JSON.readTree(files.get(0).toFile()), JSON.readTree(files.get(1).toFile()), skip);
        if (bytesOnly) {
            System.out.println(run.path("bytes").asLong());
            return;
        }
        if (bench != null) {
            // kolo bench allreduce of the step's bytes, from native memory, right after the run: the time the same
            // bytes take in one collective on the machine as it is then.
            run.put("bench_ms", Math.round(JSON.readTree(bench.toFile()).path("series").path(0).path("results")
                    .path(0).path("median_us").asDouble() / 100) / 10.0);
        }
        ObjectNode results = Files.exists(out) ? (ObjectNode) JSON.readTree(out.toFile()) : JSON.createObjectNode();
        ArrayNode sets = results.withArray("sets");
        ObjectNode set = null;
        for (JsonNode s : sets) {
            if (s.path("label").asText().equals(label)) {
                set = (ObjectNode) s;
            }
        }
        if (set == null) {
            set = sets.addObject().put("label", label);
        }
        set.put("command", command);
        set.withArray("runs").add(run);
        JSON.writerWithDefaultPrettyPrinter().writeValue(out.toFile(), results);
        System.out.println(label + ": " + run);
    }

    /** One run's medians per step. */
    static ObjectNode breakdown(JsonNode example, JsonNode timeline, int skip) {
        Map<Integer, String> rows = new HashMap<>();
        for (JsonNode e : timeline) {
            if ("M".equals(e.path("ph").asText()) && "process_name".equals(e.path("name").asText())) {
                rows.put(e.path("pid").asInt(), e.path("args").path("name").asText());
            }
        }
        // Each gradient's spans in time order; its k-th QUEUE span opens its part of step k.
        Map<Integer, List<JsonNode>> byRow = new HashMap<>();
        for (JsonNode e : timeline) {
            if ("X".equals(e.path("ph").asText()) && rows.getOrDefault(e.path("pid").asInt(), "").startsWith("djl.grad.")) {
                byRow.computeIfAbsent(e.path("pid").asInt(), k -> new ArrayList<>()).add(e);
            }
        }
        Map<Integer, List<JsonNode>> steps = new HashMap<>();
        for (List<JsonNode> spans : byRow.values()) {
            spans.sort((a, b) -> a.path("ts").asLong() != b.path("ts").asLong()
                    ? Long.compare(a.path("ts").asLong(), b.path("ts").asLong())
                    : Boolean.compare(!isQueue(a), !isQueue(b)));
            int step = -1;
            for (JsonNode e : spans) {
                if (isQueue(e)) {
                    step++;
                }
                steps.computeIfAbsent(step, k -> new ArrayList<>()).add(e);
            }
        }
        int n = steps.size() - skip;
        if (n < 1) {
            throw new IllegalArgumentException("the timeline has " + steps.size() + " steps, not more than the "
                    + skip + " of warm-up to skip");
        }
        double[] window = new double[n], submit = new double[n], wait = new double[n], copies = new double[n],
                collectives = new double[n], rest = new double[n], responses = new double[n];
        long bytes = 0;
        for (int s = 0; s < n; s++) {
            List<JsonNode> spans = steps.get(s + skip);
            long first = Long.MAX_VALUE, lastSubmit = 0, end = 0, firstRun = Long.MAX_VALUE, copy = 0, coll = 0;
            long stepBytes = 0;
            // A fused response's copies and collective are one span per member: count each once.
            Set<String> seen = new HashSet<>();
            int count = 0;
            for (JsonNode e : spans) {
                long ts = e.path("ts").asLong(), dur = e.path("dur").asLong();
                end = Math.max(end, ts + dur);
                String name = e.path("name").asText();
                if (isQueue(e)) {
                    first = Math.min(first, ts);
                    lastSubmit = Math.max(lastSubmit, ts);
                    continue;
                }
                if (name.startsWith("NEGOTIATE") || !seen.add(name + "@" + ts + "+" + dur)) {
                    continue;
                }
                firstRun = Math.min(firstRun, ts);
                if (name.startsWith("MEMCPY")) {
                    copy += dur;
                } else {
                    coll += dur;
                    count++;
                    stepBytes += e.path("args").path("bytes").asLong();
                }
            }
            bytes = stepBytes;
            window[s] = (end - first) / 1e3;
            submit[s] = (lastSubmit - first) / 1e3;
            wait[s] = (firstRun - first) / 1e3;
            copies[s] = copy / 1e3;
            collectives[s] = coll / 1e3;
            rest[s] = window[s] - wait[s] - copies[s] - collectives[s];
            responses[s] = count;
        }
        ObjectNode run = JSON.createObjectNode();
        JsonNode kolo = example.path("kolo");
        run.put("model", example.path("model").asText()).put("batch_size", example.path("batch_size").asInt())
                .put("ranks", example.path("ranks").asInt()).put("step_ms", kolo.path("step_ms").asDouble())
                .put("averaging_ms", kolo.path("averaging_ms").asDouble()).put("steps", n).put("bytes", bytes)
                .put("window_ms", median(window)).put("submit_ms", median(submit)).put("wait_ms", median(wait))
                .put("copies_ms", median(copies)).put("collectives_ms", median(collectives))
                .put("rest_ms", median(rest)).put("responses", median(responses));
        return run;
    }

    private static boolean isQueue(JsonNode e) {
        return "QUEUE".equals(e.path("name").asText());
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        double m = s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        return Math.round(m * 10) / 10.0;
    }
}
