package io.kolo;

import io.kolo.bootstrap.CapturedLog;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What rank 0's stall inspector logs about ops some ranks submitted and others have not. */
class StallWarningTest {

    /**
     * A rank late for a step of 30 gradients: rank 0 logged 30 warnings (60 lines of stderr), one per tensor. It now
     * logs one, naming the late rank, how many ops wait and the first few. (A group's ops reach rank 0 together, so
     * that every one of them is past the warning time at the same look.)
     */
    @Test
    void opsWaitingForTheSameRankAreOneWarning() {
        try (CapturedLog log = CapturedLog.of("io.kolo.engine.MessageTable")) {
            Ranks.run(3, Map.of("KOLO_STALL_CHECK_TIME_SECONDS", "1"), comm -> {
                if (comm.rank() == 1) {
                    Thread.sleep(2500);
                }
                List<Tensor> grads = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    grads.add(Tensor.of(new float[4]));
                }
                comm.groupedAllreduce(grads, ReduceOp.SUM);
                return null;
            });
            List<String> warnings = log.records().stream().map(LogRecord::getMessage).toList();
            assertEquals(1, warnings.size(), warnings.toString());
            String expected = "Kolo stall: 30 ops submitted by ranks [0, 2] have waited 1 s for ranks [1]: allreduce"
                    + " 'grouped_allreduce.noname.1.0', allreduce 'grouped_allreduce.noname.1.1', allreduce"
                    + " 'grouped_allreduce.noname.1.2', allreduce 'grouped_allreduce.noname.1.3', allreduce"
                    + " 'grouped_allreduce.noname.1.4' and 25 more (warning after KOLO_STALL_CHECK_TIME_SECONDS); the"
                    + " missing ranks have not called them yet: they are still busy or hung, or call other ops (names"
                    + " and order must match on every rank)";
            // The seconds are those of the first look past the warning time: 1 unless the machine stalled too.
            assertEquals(expected, warnings.getFirst().replaceFirst("have waited \\d+ s", "have waited 1 s"));
        }
    }
}
