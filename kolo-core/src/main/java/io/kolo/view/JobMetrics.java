package io.kolo.view;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * A {@link JobSnapshot} as {@code /metrics} serves it, in Prometheus' text exposition format 0.0.4: the job's state
 * and size, and per rank (labelled {@code rank} and {@code host}) its liveness, ops, time in collectives, bytes,
 * lateness, straggler flag, resets, and the newest value of each metric its program reports
 * ({@code kolo_metric{name=...}}).
 */
final class JobMetrics {
    private JobMetrics() {
    }

    static String render(JobSnapshot v) {
        Prometheus p = new Prometheus();
        p.family("kolo_job_state", "gauge", "1 for the job's current state (RUNNING, SUCCEEDED, FAILED)");
        for (String s : List.of(JobView.RUNNING, JobView.SUCCEEDED, JobView.FAILED)) {
            p.sample("kolo_job_state", s.equals(v.state()) ? 1 : 0, "state", s);
        }
        p.family("kolo_job_ranks", "gauge", "The job's number of ranks");
        p.sample("kolo_job_ranks", v.size());
        p.family("kolo_job_generation", "gauge", "The elastic job's generation (0 for a static job)");
        p.sample("kolo_job_generation", v.generation());
        p.family("kolo_job_elapsed_seconds", "gauge", "Seconds since the job started");
        p.sample("kolo_job_elapsed_seconds", v.elapsedSeconds());
        p.family("kolo_job_stalls", "gauge", "Ops some ranks submitted and others have not, for long");
        p.sample("kolo_job_stalls", v.stalls().size());
        if (v.progress() != null) {
            p.family("kolo_job_progress_ratio", "gauge", "The program's reported progress, 0 to 1");
            p.sample("kolo_job_progress_ratio", v.progress());
        }
        rankFamily(p, v, "kolo_rank_up", "gauge", "1 while the rank runs", r -> r.ended() ? 0 : 1);
        rankFamily(p, v, "kolo_rank_ops_total", "counter", "Collective ops the rank completed",
                r -> r.latest() == null ? 0 : r.latest().ops());
        rankFamily(p, v, "kolo_rank_collective_seconds_total", "counter", "Seconds the rank spent inside collectives",
                r -> r.latest() == null ? 0 : r.latest().collectiveNanos() / 1e9);
        rankFamily(p, v, "kolo_rank_bytes_total", "counter", "Payload bytes the rank contributed or moved",
                r -> r.latest() == null ? 0 : r.latest().bytes());
        rankFamily(p, v, "kolo_rank_lateness_seconds_total", "counter",
                "Seconds the other ranks waited for this rank in the ops the coordinator saw (outside the response"
                        + " cache)", JobSnapshot.RankState::coordinatorLatenessSeconds);
        rankFamily(p, v, "kolo_rank_collective_lateness_seconds", "gauge",
                "Seconds the other ranks waited for this rank in every op, estimated from the ranks' time in"
                        + " collectives", JobSnapshot.RankState::collectiveLatenessSeconds);
        rankFamily(p, v, "kolo_rank_last_total", "counter", "Ops this rank was the last to submit",
                JobSnapshot.RankState::lastCount);
        rankFamily(p, v, "kolo_rank_straggler", "gauge", "1 while the others keep waiting for this rank",
                r -> r.straggler() ? 1 : 0);
        rankFamily(p, v, "kolo_rank_resets_total", "counter", "Elastic resets the rank has been through",
                r -> r.latest() == null ? 0 : r.latest().resets());
        p.family("kolo_rank_exit_code", "gauge", "The rank's exit code, once it exited");
        for (JobSnapshot.RankState r : v.ranks()) {
            if (r.exitCode() != null) {
                p.sample("kolo_rank_exit_code", r.exitCode(), "rank", Integer.toString(r.rank()), "host", r.host());
            }
        }
        p.family("kolo_metric", "gauge", "The newest value of each metric the program reports with Kolo.report");
        for (JobSnapshot.Series series : v.metrics()) {
            if (!series.points().isEmpty()) {
                JobSnapshot.RankState r = v.rank(series.rank());
                p.sample("kolo_metric", series.points().getLast().value(), "name", series.name(), "rank",
                        Integer.toString(series.rank()), "host", r == null ? "" : r.host());
            }
        }
        return p.toString();
    }

    private static void rankFamily(Prometheus p, JobSnapshot v, String name, String type, String help,
                                   ToDoubleFunction<JobSnapshot.RankState> value) {
        p.family(name, type, help);
        for (JobSnapshot.RankState r : v.ranks()) {
            p.sample(name, value.applyAsDouble(r), "rank", Integer.toString(r.rank()), "host", r.host());
        }
    }
}
