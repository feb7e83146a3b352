package io.kolo.launch;

import io.kolo.transport.ShmSegments;

/**
 * Cleanup of the host's shared memory ({@code /dev/shm}) that ranks on one host talk through. A rank unlinks its
 * segments once its peers have mapped them, so only a rank killed while the job was setting up leaves one behind;
 * {@code kolo run} removes those before it starts a job, and an embedder should do the same once per host.
 *
 * <pre>{@code
 * if (firstRankOnThisHost) {
 *     SharedMemory.removeStaleSegments();   // before this host's ranks join
 * }
 * }</pre>
 */
public final class SharedMemory {
    private SharedMemory() {
    }

    /**
     * Removes this user's Kolo segments whose creating process is gone, and returns how many. Segments of live
     * processes are left alone, so it is safe while other jobs run on the host, ranks in this JVM included.
     */
    public static int removeStaleSegments() {
        return ShmSegments.removeStale();
    }
}
