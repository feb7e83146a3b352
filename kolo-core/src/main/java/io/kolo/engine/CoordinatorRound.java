package io.kolo.engine;

import io.kolo.collective.CollectiveOps;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The slow path of a cycle, Horovod's controller: every rank's new requests are gathered at rank 0, which keeps them
 * in its {@link MessageTable} until every rank has asked for the same op, checks that they agree, watches for stalls,
 * fuses what is ready and broadcasts the responses, which every rank then executes in the same order.
 */
final class CoordinatorRound {
    private final CollectiveOps ops;
    private final EngineSettings settings;
    private final FusionPlanner fusion;
    /** Rank 0 only. */
    private final MessageTable table;
    private volatile Map<String, String> waitingFor = Map.of();
    private volatile long rounds;
    /** Cycle thread only: see {@link #takeEnding}. */
    private String ending;

    /**
     * @param members the set's ranks in the job, by set rank (for messages)
     * @param set     the process set's id
     */
    CoordinatorRound(CollectiveOps ops, EngineSettings settings, FusionPlanner fusion, int[] members, int set) {
        this.ops = ops;
        this.settings = settings;
        this.fusion = fusion;
        this.table = ops.rank() == 0 ? new MessageTable(members, set) : null;
    }

    /** Whether rank 0 holds requests not every rank has made yet (false on other ranks). */
    boolean tableBusy() {
        return table != null && !table.isEmpty();
    }

    /**
     * Sends this rank's {@code requests} ({@link Admission#takeRequests}); returns the responses every rank executes.
     * Rank 0's {@code tuning} (or null) reaches every rank's {@code tuned}.
     */
    List<Response> run(List<Request> requests, Autotuner.Tuning tuning,
                       java.util.function.Consumer<Autotuner.Tuning> tuned) {
        rounds++;
        byte[][] all = ops.gather(ControlMessages.encodeRequests(requests), 0);
        byte[] answer = null;
        if (table != null) {
            table.newRound();
            List<Response> out = new ArrayList<>();
            for (byte[] b : all) {
                table.add(ControlMessages.decodeRequests(b), out);
            }
            String stalled = table.inspectStalls(settings.stallCheckTime().toNanos(),
                    settings.stallShutdownTime().toNanos());
            fusion.fuse(table.takeReady(), out);
            answer = ControlMessages.encode(out, table.takeWaitingFor(), tuning, stalled);
        }
        return ControlMessages.decode(ops.broadcast(answer, 0), w -> waitingFor = w, tuned, e -> ending = e);
    }

    /**
     * Why the set must end, when the last round said so (the stall shutdown: every rank of the set hears it in the
     * same round), else null; cleared by the call.
     */
    String takeEnding() {
        String e = ending;
        ending = null;
        return e;
    }

    /** What rank 0 last said the op named {@code name} waits for, or null. */
    String waitingFor(String name) {
        return waitingFor.get(name);
    }

    /** Rank 0's figures of who the set's ranks waited for, or null on the other ranks. */
    CoordinatorFigures figures() {
        return table == null ? null : table.figures();
    }

    long rounds() {
        return rounds;
    }
}
