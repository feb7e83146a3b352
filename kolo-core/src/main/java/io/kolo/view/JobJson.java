package io.kolo.view;

/** A {@link JobSnapshot} as {@code /api/job} serves it: the schema of docs/jobs.md. */
final class JobJson {
    private JobJson() {
    }

    static String render(JobSnapshot v) {
        double elapsed = v.elapsedSeconds();
        Json j = new Json().beginObject();
        j.field("state", v.state()).field("size", v.size());
        j.name("hosts").beginArray();
        v.hosts().forEach(j::value);
        j.endArray();
        j.field("generation", v.generation()).field("elastic", v.elastic())
                .field("startedAtMillis", v.startedAtMillis()).field("elapsedSeconds", elapsed)
                .field("command", v.command());
        Double progress = v.progress();
        j.name("progressPercentage").value(progress == null ? null : 100 * progress);
        j.name("estimatedRemainingSeconds").value(progress == null ? null : progress >= 1 ? 0.0
                : progress <= 0 ? null : elapsed * (1 - progress) / progress);
        j.name("ranks").beginArray();
        for (JobSnapshot.RankState r : v.ranks()) {
            rank(j, r, v.nowMillis());
        }
        j.endArray();
        j.field("metricsCursor", v.pointsCursor()).name("metricsSince").value(v.metricsSince());
        j.name("metrics").beginArray();
        for (JobSnapshot.Series series : v.metrics()) {
            for (RankSnapshot.Point p : series.points()) {
                j.beginObject().field("name", series.name()).field("rank", series.rank()).field("value", p.value());
                j.name("step").value(p.step() < 0 ? null : p.step()).field("timeMillis", p.timeMillis());
                j.endObject();
            }
        }
        j.endArray();
        j.name("stalls").beginArray();
        for (RankSnapshot.Stall st : v.stalls()) {
            j.beginObject().field("op", st.op()).name("missingRanks").beginArray();
            for (int m : st.missingRanks()) {
                j.value(m);
            }
            j.endArray().field("seconds", st.seconds()).endObject();
        }
        j.endArray();
        j.name("events").beginArray();
        for (JobSnapshot.Event e : v.events()) {
            j.beginObject().field("timeMillis", e.timeMillis()).field("kind", e.kind()).name("rank")
                    .value(e.rank()).field("message", e.message()).endObject();
        }
        j.endArray();
        return j.endObject().toString();
    }

    private static void rank(Json j, JobSnapshot.RankState r, long now) {
        RankSnapshot s = r.latest();
        double collective = s == null ? 0 : s.collectiveNanos() / 1e9;
        double alive = s == null ? 0 : Math.max(0, (s.timeMillis() - r.startedMillis()) / 1000.0);
        j.beginObject().field("rank", r.rank()).field("host", r.host()).field("pid", r.pid())
                .field("state", r.state()).field("ops", s == null ? 0 : s.ops()).field("collectiveSeconds", collective)
                .field("betweenSeconds", Math.max(0, alive - collective)).field("bytes", s == null ? 0 : s.bytes());
        j.name("lastOp").value(s == null || s.lastOp().isEmpty() ? null : s.lastOp());
        j.name("lastOpAgoSeconds").value(s == null || s.lastOpEndMillis() <= 0 ? null
                : Math.max(0, (now - s.lastOpEndMillis()) / 1000.0));
        j.field("latenessSeconds", r.latenessSeconds())
                .field("coordinatorLatenessSeconds", r.coordinatorLatenessSeconds())
                .field("collectiveLatenessSeconds", r.collectiveLatenessSeconds()).field("lastCount", r.lastCount())
                .field("straggler", r.straggler()).field("resets", s == null ? 0 : s.resets());
        j.name("exitCode").value(r.exitCode()).field("cause", r.cause());
        j.name("output").beginArray();
        r.output().forEach(j::value);
        j.endArray().endObject();
    }
}
