package io.kolo.bench;

import java.util.ArrayList;
import java.util.List;

/** Another collective library measured on the same steps for {@code --compare}. */
interface Peer {
    /** Series name in tables, JSON and plots. */
    String name();

    /**
     * Runs the steps; a skipped series when the peer is not installed or cannot do this collective or type,
     * a failed one when it ran and broke. Never throws for a missing peer.
     */
    Series run(Collective collective, ElementType type, int ranks, List<Step> steps) throws InterruptedException;

    /** A peer that cannot run in this setup: its series is always skipped for {@code reason}. */
    static Peer skipped(String name, String reason) {
        return new Peer() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Series run(Collective collective, ElementType type, int ranks, List<Step> steps) {
                return Series.skipped(name, reason);
            }
        };
    }

    /** The result lines of a finished peer process as a series, failed when it exited non-zero. */
    static Series fromOutput(String name, PeerProcess.Result result, List<Step> steps) {
        List<Measurement> measurements = new ArrayList<>();
        for (String line : result.stdout()) {
            if (line.startsWith("KOLO-BENCH-UNSUPPORTED")) {
                return Series.skipped(name, line.substring("KOLO-BENCH-UNSUPPORTED".length()).trim());
            }
            try {
                Measurement.parseLine(line).ifPresent(measurements::add);
            } catch (IllegalArgumentException e) {
                return Series.failed(name, e.getMessage());
            }
        }
        if (result.exitCode() != 0) {
            return Series.failed(name, "exited with code " + result.exitCode()
                    + (result.stderrTail().isEmpty() ? "" : ": " + result.stderrTail()));
        }
        if (measurements.size() != steps.size()) {
            return Series.failed(name, "reported " + measurements.size() + " of " + steps.size() + " sizes"
                    + (result.stderrTail().isEmpty() ? "" : ": " + result.stderrTail()));
        }
        return Series.ok(name, measurements);
    }
}
