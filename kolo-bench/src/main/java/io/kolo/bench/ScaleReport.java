package io.kolo.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;

/** The steps of one {@code kolo bench scale} run: a table for the terminal, JSON for docs/results. */
public record ScaleReport(ScaleBench.Config config, int hostCpus, List<ScaleStep> steps) {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    static final double MIB = 1024.0 * 1024.0;

    /**
     * Renders a report of every kind of step once, so that every class the report needs is loaded before a step
     * runs: after a step that timed out, its ranks may still hold every file descriptor, and then no class file
     * (Jackson's, in the kolo jar) can be opened to load.
     */
    static void loadClasses(ScaleBench.Config config) {
        ScaleStep ok = new ScaleStep(1, "threads", ScaleStep.OK, "", 1.5, 1.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
        ScaleReport sample = new ScaleReport(config, 1, List.of(ok,
                ScaleStep.failed(2, "threads", ScaleStep.TIMED_OUT, "sample", 1)));
        sample.table();
        sample.json();
    }

    /** Whether more ranks ran as processes at once than this machine has CPUs. */
    boolean oversubscribed() {
        return steps.stream().anyMatch(s -> s.ranks() > hostCpus);
    }

    /**
     * The small allreduce's time per core-share: its time divided by how many ranks share each CPU (1 while they do not
     * outnumber the CPUs), so that how it grows with n shows apart from the oversubscription of one machine.
     */
    static double perCoreShare(double us, int ranks, int cpus) {
        return us / Math.max(1.0, (double) ranks / Math.max(1, cpus));
    }

    public String table() {
        StringBuilder t = new StringBuilder(String.format(Locale.ROOT,
                "kolo bench scale: transport %s, %d CPUs%s; times are the slowest rank's, the rest per rank;"
                        + " us/cs: per core-share (divided by ranks per CPU)%n",
                config.transport(), hostCpus, oversubscribed() ? " (oversubscribed: more ranks than CPUs)" : ""));
        t.append(String.format(Locale.ROOT, "%6s %-9s %9s %9s %9s %9s %10s %8s %9s %6s %7s %8s %8s %7s  %s%n", "ranks",
                "mode", "init ms", "1st op ms", "8B us", "8B us/cs", "1MiB us", "store rq", "store KiB", "fds", "sockets",
                "heap MiB", "RSS MiB", "shm MiB", "status"));
        for (ScaleStep s : steps) {
            t.append(String.format(Locale.ROOT, "%6d %-9s %9s %9s %9s %9s %10s %8s %9s %6s %7s %8s %8s %7s  %s%n",
                    s.ranks(), s.mode(), fmt(s.initMs()), fmt(s.firstOpMs()), fmt(s.smallUs()),
                    fmt(perCoreShare(s.smallUs(), s.ranks(), hostCpus)), fmt(s.largeUs()),
                    fmt(s.storeRequestsPerRank()), fmt(s.storeBytesPerRank() / 1024), fmt(s.fdsPerRank()),
                    fmt(s.socketFdsPerRank()), fmt(s.heapBytesPerRank() / MIB), fmt(s.rssBytesPerRank() / MIB),
                    fmt(s.shmBytesPerRank() / MIB), s.ok() ? "ok" : s.status() + ": " + s.reason()));
        }
        return t.toString();
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    public String json() {
        ObjectNode root = JSON.createObjectNode();
        root.put("benchmark", "scale");
        root.put("command", config.commandLine());
        root.put("transport", config.transport());
        root.put("mode", config.mode().id());
        root.put("max_ranks", config.maxRanks());
        root.put("max_processes", config.maxProcesses());
        root.put("step_timeout_s", config.stepTimeout().toSeconds());
        root.put("host_cpus", hostCpus);
        root.put("oversubscribed", oversubscribed());
        root.put("small_bytes", ScaleRank.SMALL_FLOATS * 4);
        root.put("large_bytes", ScaleRank.LARGE_FLOATS * 4);
        ArrayNode array = root.putArray("steps");
        for (ScaleStep s : steps) {
            ObjectNode o = array.addObject();
            o.put("ranks", s.ranks());
            o.put("mode", s.mode());
            o.put("status", s.status());
            o.put("reason", s.reason());
            Report.number(o, "wall_s", round(s.wallSeconds()));
            Report.number(o, "init_ms", round(s.initMs()));
            Report.number(o, "first_op_ms", round(s.firstOpMs()));
            Report.number(o, "small_allreduce_us", round(s.smallUs()));
            Report.number(o, "small_allreduce_us_per_core_share",
                    round(perCoreShare(s.smallUs(), s.ranks(), hostCpus)));
            Report.number(o, "large_allreduce_us", round(s.largeUs()));
            Report.number(o, "store_requests_per_rank", round(s.storeRequestsPerRank()));
            Report.number(o, "store_bytes_per_rank", round(s.storeBytesPerRank()));
            Report.number(o, "fds_per_rank", round(s.fdsPerRank()));
            Report.number(o, "socket_fds_per_rank", round(s.socketFdsPerRank()));
            Report.number(o, "heap_bytes_per_rank", Math.rint(s.heapBytesPerRank()));
            Report.number(o, "rss_bytes_per_rank", Math.rint(s.rssBytesPerRank()));
            Report.number(o, "shm_bytes_per_rank", Math.rint(s.shmBytesPerRank()));
        }
        try {
            return JSON.writer(Report.PRETTY).writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static double round(double v) {
        return Double.isNaN(v) ? v : Math.rint(v * 100) / 100;
    }
}
