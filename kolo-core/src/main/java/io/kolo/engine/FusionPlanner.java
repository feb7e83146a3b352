package io.kolo.engine;

import java.util.List;

/**
 * Which responses run as one: consecutive compatible allreduces merge into buffers of at most the fusion threshold
 * ({@code KOLO_FUSION_THRESHOLD}); members of one group (a grouped allreduce) always fuse, whatever their size.
 */
final class FusionPlanner {
    private long thresholdBytes;
    private final PendingOps pending;

    /** The autotuner's choice, applied by every rank at the end of the same cycle. */
    void setThreshold(long bytes) {
        this.thresholdBytes = bytes;
    }

    FusionPlanner(long thresholdBytes, PendingOps pending) {
        this.thresholdBytes = thresholdBytes;
        this.pending = pending;
    }

    /** Appends {@code singles} to {@code out}, fused. */
    void fuse(List<Response> singles, List<Response> out) {
        Response current = null;
        String currentGroup = null;
        for (int i = 0; i < singles.size(); i++) {
            Response r = singles.get(i);
            String group = groupOf(r);
            boolean sameGroup = group != null && group.equals(currentGroup);
            if (current != null && current.fusableWith(r)
                    && (sameGroup || (group == null && currentGroup == null && thresholdBytes > 0
                    && current.totalBytes() + r.totalBytes() <= thresholdBytes))) {
                current = current.fuse(r);
                continue;
            }
            if (current != null) {
                out.add(current);
            }
            current = r;
            currentGroup = group;
        }
        if (current != null) {
            out.add(current);
        }
    }

    private String groupOf(Response r) {
        Op op = r.names().isEmpty() ? null : pending.get(r.names().getFirst());
        return op == null ? null : op.group;
    }
}
