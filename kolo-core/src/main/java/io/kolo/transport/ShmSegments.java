package io.kolo.transport;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The host's {@code /dev/shm} as a launcher sees it: whether shared memory is usable, and removing the segments of
 * jobs that were killed before their ranks could unlink them. Loads nothing native, so a launcher may call it.
 */
public final class ShmSegments {
    static final Path DIR = Path.of("/dev/shm");

    private ShmSegments() {
    }

    /** Removes {@code /dev/shm/kolo-*} segments of this user whose creating process is gone; returns how many. */
    public static int removeStale() {
        return ShmFile.removeStale(DIR);
    }

    /** Removes every {@code /dev/shm} segment of job {@code job}: for a launcher once all of the job's ranks ended. */
    public static int removeJob(String job) {
        return ShmFile.removeJob(DIR, job);
    }

    /** Whether this machine offers POSIX shared memory as a directory ({@code /dev/shm}) this process can write. */
    public static boolean available() {
        return Files.isDirectory(DIR) && Files.isWritable(DIR);
    }
}
