package io.kolo.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What this process holds, read from Linux's /proc (and /dev/shm): how many file descriptors, how many of them
 * sockets, resident memory, the heap after a collection. -1 where the system has no such file.
 */
final class ProcessResources {
    private static final Path FDS = Path.of("/proc/self/fd");
    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path SHM = Path.of("/dev/shm");

    private ProcessResources() {
    }

    /** One reading of every figure. */
    record Sample(long fds, long socketFds, long rssBytes, long heapBytes, long shmBytes) {
        Sample minus(Sample before) {
            return new Sample(fds - before.fds, socketFds - before.socketFds, rssBytes - before.rssBytes,
                    heapBytes - before.heapBytes, shmBytes - before.shmBytes);
        }
    }

    /** Collects garbage first, so the heap figure is what is live, not what is yet to be collected. */
    static Sample sample() {
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long[] fds = descriptors();
        return new Sample(fds[0], fds[1], rssBytes(), heap, shmBytes());
    }

    /** {all descriptors, those that are sockets}. */
    private static long[] descriptors() {
        long all = 0;
        long sockets = 0;
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(FDS)) {
            for (Path fd : dir) {
                all++;
                try {
                    if (Files.readSymbolicLink(fd).toString().startsWith("socket:")) {
                        sockets++;
                    }
                } catch (IOException closedMeanwhile) {
                    // The descriptor that listed the directory, or one closed while reading: not ours to count.
                }
            }
        } catch (IOException e) {
            return new long[]{-1, -1};
        }
        return new long[]{all, sockets};
    }

    private static long rssBytes() {
        try {
            for (String line : Files.readAllLines(STATUS)) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    /**
     * Bytes in use on /dev/shm, where the shared-memory rings live: the host's, so what a job's ranks allocate there
     * shows as the difference between two samples, whoever maps it. Not the size of the mappings, which is address
     * space: a rank maps each host mate's segment whole, but only the rings of pairs that exchange take memory.
     */
    private static long shmBytes() {
        try {
            FileStore store = Files.getFileStore(SHM);
            return store.getTotalSpace() - store.getUnallocatedSpace();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
