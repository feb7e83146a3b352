package io.kolo.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A rank that runs out of file descriptors while opening its TCP connections: recognised from the system's error, and
 * explained with what the job needs against the process's limit, so the user raises the limit rather than looking at
 * the network or the secret.
 */
final class DescriptorLimit {
    private static final Path LIMITS = Path.of("/proc/self/limits");
    /**
     * Read while descriptors are still to be had: once they have run out, reading the limit (or loading a class)
     * would fail too. {@link TcpConnections} loads this class before opening any connection.
     */
    private static final long SOFT_LIMIT = softLimit();

    private DescriptorLimit() {
    }

    /** Whether {@code e}, or what caused it, is the system's "Too many open files" (EMFILE). */
    static boolean exhausted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("Too many open files")) {
                return true;
            }
        }
        return false;
    }

    /** One line for rank {@code rank} of {@code size}: what each rank needs, the limit, and what to do. */
    static String explain(int rank, int size) {
        long limit = SOFT_LIMIT;
        // Its port and the store's connection, and one connection per rank it exchanges with: a ring's two neighbours
        // and recursive doubling's log2(n) partners for allreduce, broadcast and allgather; every other rank for alltoall.
        int fewPeers = 32 - Integer.numberOfLeadingZeros(Math.max(1, size - 1)) + 1;
        int fewest = 2 + Math.min(size - 1, fewPeers);
        int most = 2 + size - 1;
        return "rank " + rank + " ran out of file descriptors (Too many open files) with the TCP connections of a "
                + size + "-rank job: each rank needs its port, the store and one per rank it exchanges with, about "
                + fewest + " for allreduce, broadcast and allgather and up to " + most + " with alltoall, times the"
                + " ranks in one process, plus the JVM's own; ulimit -n is "
                + (limit < 0 ? "unknown" : Long.toString(limit)) + ": raise it (ulimit -n) or run fewer ranks per"
                + " process";
    }

    /** The soft "Max open files" of this process, or -1 where the system does not say. */
    private static long softLimit() {
        try {
            for (String line : Files.readAllLines(LIMITS)) {
                if (line.startsWith("Max open files")) {
                    String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
