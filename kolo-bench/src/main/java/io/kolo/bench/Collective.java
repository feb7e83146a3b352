package io.kolo.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The collectives {@code kolo bench} measures, with the bus-bandwidth factor of each (as nccl-tests defines
 * it): the fraction of the message every rank must send over its slowest link, so that bus bandwidth is
 * comparable to the hardware's link speed whatever the number of ranks.
 */
public enum Collective {
    ALLREDUCE,
    ALLGATHER,
    BROADCAST,
    ALLTOALL,
    REDUCESCATTER;

    /** Bus bandwidth = algorithm bandwidth x this factor, for {@code ranks} ranks. */
    public double busFactor(int ranks) {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be at least 1, got " + ranks);
        }
        double n = ranks;
        return switch (this) {
            case ALLREDUCE -> 2 * (n - 1) / n;
            case ALLGATHER, REDUCESCATTER, ALLTOALL -> (n - 1) / n;
            case BROADCAST -> 1;
        };
    }

    /** Lower-case name as typed on the command line and used in JSON. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Bytes of the message actually moved for a requested size: collectives that split the message into one
     * part per rank round it down to whole elements per rank. 0 when the size is too small for that.
     */
    public long effectiveBytes(long requested, int elementSize, int ranks) {
        long elements = requested / elementSize;
        if (this == ALLGATHER || this == ALLTOALL || this == REDUCESCATTER) {
            elements -= elements % ranks;
        }
        return elements * elementSize;
    }

    /** Parses a name as typed by a user; the error lists the valid names. */
    public static Collective parse(String name) {
        for (Collective c : values()) {
            if (c.id().equals(name.toLowerCase(Locale.ROOT))) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown collective '" + name + "'; use one of " + names());
    }

    static String names() {
        return Arrays.stream(values()).map(Collective::id).collect(Collectors.joining(", "));
    }
}
