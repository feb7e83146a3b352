package io.kolo.bench;

import java.util.List;

/**
 * The curve of one implementation (Kolo over shm, Open MPI over TCP, Gloo, ...): its measurements, or why
 * there are none. A skipped series is a peer that is not installed; a failed one ran and broke.
 */
public record Series(String name, Status status, String reason, List<Measurement> measurements) {
    public enum Status { OK, SKIPPED, FAILED }

    public Series {
        measurements = List.copyOf(measurements);
    }

    public static Series ok(String name, List<Measurement> measurements) {
        return new Series(name, Status.OK, null, measurements);
    }

    public static Series skipped(String name, String reason) {
        return new Series(name, Status.SKIPPED, reason, List.of());
    }

    public static Series failed(String name, String reason) {
        return new Series(name, Status.FAILED, reason, List.of());
    }

    /** The measurement at exactly this size, or null. */
    public Measurement at(long bytes) {
        for (Measurement m : measurements) {
            if (m.bytes() == bytes) {
                return m;
            }
        }
        return null;
    }
}
