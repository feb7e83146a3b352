package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;
import io.kolo.bootstrap.RandomBytes;
import io.kolo.bootstrap.StartWait;
import io.kolo.bootstrap.StoreKeys;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * Sets up a host's shared-memory links over the rendezvous store, as Gloo's transports are handed finished pairs:
 * the ring size every rank of the host agrees on, each rank's inbox file created, published, mapped by the others and
 * unlinked, and the probe of which pairs may read each other's memory. The transport only ever sees the result
 * ({@link ShmLinks}), never the store.
 */
final class ShmSetup {
    private static final System.Logger LOG = LazyLogger.of(ShmSetup.class);
    /** Smallest ring chosen when /dev/shm is short of space. */
    static final long MIN_RING_BYTES = 64 << 10;

    private ShmSetup() {
    }

    static ShmLinks links(Path dir, int rank, int size, int[] hostRanks, KeyValueStore store, String job,
                          long ringBytes, Duration startTimeout, Duration timeout, ShmTransport.SingleCopy singleCopy) {
        Objects.requireNonNull(singleCopy, "singleCopy");
        Objects.requireNonNull(store, "store");
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " is outside a job of size " + size);
        }
        if (Arrays.binarySearch(hostRanks, rank) < 0) {
            throw new IllegalArgumentException("rank " + rank + " is not among the host's ranks "
                    + Arrays.toString(hostRanks));
        }
        if (!job.matches("[A-Za-z0-9]+")) {
            throw new IllegalArgumentException("job tag must be letters and digits, got '" + job + "'");
        }
        if (ringBytes < 4096 || Long.bitCount(ringBytes) != 1) {
            throw new IllegalArgumentException("KOLO_SHM_RING_BYTES must be a power of two >= 4096, got " + ringBytes);
        }
        if (startTimeout.isNegative() || startTimeout.isZero() || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeouts must be positive: start " + startTimeout + ", data " + timeout);
        }
        long deadline = System.nanoTime() + startTimeout.toNanos();
        // One ring per other rank of the host.
        int rings = hostRanks.length - 1;
        ShmFile.removeStale(dir);
        long requested = ringBytes;
        ringBytes = agreeOnRingBytes(dir, rank, hostRanks, store, requested, deadline, startTimeout);
        Arena arena = Arena.ofShared();
        ShmFile own = null;
        boolean ok = false;
        try {
            own = ShmFile.create(dir, job, rank, rings, ringBytes, arena);
            store.put(StoreKeys.shmFile(rank), own.path().toString());
            ShmFile[] peerFiles = new ShmFile[size];
            ShmRing[] inbox = new ShmRing[size];
            ShmRing[] outbox = new ShmRing[size];
            int me = Arrays.binarySearch(hostRanks, rank);
            for (int i = 0; i < hostRanks.length; i++) {
                int peer = hostRanks[i];
                if (peer == rank) {
                    continue;
                }
                String path = await(store, StoreKeys.shmFile(peer), deadline, rank, peer, startTimeout,
                        "to publish its shared-memory segment");
                peerFiles[peer] = ShmFile.open(Path.of(path), peer, rings, ringBytes, arena, rank);
                inbox[peer] = own.ring(i < me ? i : i - 1);
                outbox[peer] = peerFiles[peer].ring(me < i ? me : me - 1);
            }
            store.put(StoreKeys.shmMapped(rank), "1");
            for (int peer : hostRanks) {
                if (peer != rank) {
                    await(store, StoreKeys.shmMapped(peer), deadline, rank, peer, startTimeout,
                            "to map the shared-memory segments");
                }
            }
            // Every peer holds a mapping now: drop the name so no exit path, SIGKILL included, can leave it behind.
            own.unlink();
            boolean[] readsFrom = new boolean[size];
            boolean[] readBy = new boolean[size];
            CrossMemory cross = singleCopy != ShmTransport.SingleCopy.NEVER && CrossMemory.AVAILABLE
                    ? new CrossMemory(arena) : null;
            probeDirectReads(rank, hostRanks, store, arena, peerFiles, cross, readsFrom, readBy, deadline,
                    startTimeout);
            ok = true;
            return new ShmLinks(rank, size, timeout, arena, own, peerFiles, inbox, outbox, hostRanks.length, cross,
                    readsFrom, readBy, singleCopy);
        } finally {
            if (!ok) {
                if (own != null) {
                    own.setState(ShmFile.ABORTED);
                    own.unlink();
                }
                arena.close();
            }
        }
    }

    /**
     * Which peers this rank can read directly, and which can read it: each rank publishes a word of its memory
     * holding a random value, reads every peer's with process_vm_readv, and publishes whether that worked. Ptrace
     * restrictions (Yama, seccomp, containers) make it fail; those pairs copy through the ring.
     */
    private static void probeDirectReads(int rank, int[] hostRanks, KeyValueStore store, Arena arena,
                                         ShmFile[] peerFiles, CrossMemory cross, boolean[] readsFrom,
                                         boolean[] readBy, long deadline, Duration startTimeout) {
        MemorySegment probe = arena.allocate(8, 8);
        long magic = RandomBytes.nextLong() | 1;
        probe.set(ValueLayout.JAVA_LONG, 0, magic);
        store.put(StoreKeys.shmProbe(rank), probe.address() + ":" + magic);
        MemorySegment got = arena.allocate(8, 8);
        for (int peer : hostRanks) {
            if (peer == rank) {
                continue;
            }
            String[] p = await(store, StoreKeys.shmProbe(peer), deadline, rank, peer, startTimeout,
                    "to publish its shared-memory probe").split(":");
            boolean ok = false;
            if (cross != null) {
                long n = cross.read((int) peerFiles[peer].pid(), Long.parseLong(p[0]), got, 0, 8);
                ok = n == 8 && got.get(ValueLayout.JAVA_LONG, 0) == Long.parseLong(p[1]);
                if (!ok) {
                    LOG.log(System.Logger.Level.DEBUG, "rank {0} cannot read rank {1}''s memory (errno {2});"
                            + " messages from it are copied through shared memory twice", rank, peer,
                            n < 0 ? cross.lastErrno() : 0);
                }
            }
            readsFrom[peer] = ok;
            store.put(StoreKeys.shmDirect(rank, peer), ok ? "1" : "0");
        }
        for (int peer : hostRanks) {
            if (peer != rank) {
                readBy[peer] = "1".equals(await(store, StoreKeys.shmDirect(peer, rank), deadline, rank, peer,
                        startTimeout, "to probe this rank's memory"));
            }
        }
    }

    /**
     * The host's lowest rank picks the ring size for all: the requested one, halved while the host's segments would
     * take more than half of the free space in {@code dir} (a container's /dev/shm is often 64 MiB), down to
     * {@link #MIN_RING_BYTES}. One rank decides so that every rank of the host maps files of the same layout.
     */
    private static long agreeOnRingBytes(Path dir, int rank, int[] hostRanks, KeyValueStore store, long requested,
                                         long deadline, Duration startTimeout) {
        int leader = hostRanks[0];
        String key = StoreKeys.shmRing(leader);
        if (rank == leader) {
            int n = hostRanks.length;
            String decision;
            try {
                long usable = java.nio.file.Files.getFileStore(dir).getUsableSpace();
                long ring = requested;
                while (ring > MIN_RING_BYTES && n * ShmFile.fileBytes(n - 1, ring) > usable / 2) {
                    ring /= 2;
                }
                long need = n * ShmFile.fileBytes(n - 1, ring);
                if (need > usable) {
                    decision = "error:" + dir + " has " + (usable >> 20) + " MiB free but " + n + " ranks need at least "
                            + (need >> 20) + " MiB of shared memory; raise its size (containers: --shm-size) or set"
                            + " KOLO_TRANSPORT=tcp";
                } else {
                    if (ring < requested) {
                        LOG.log(System.Logger.Level.WARNING, "{0} has only {1} MiB free: shared-memory rings shrink"
                                + " from {2} to {3} bytes (raise its size, e.g. --shm-size, for full speed)",
                                dir, String.valueOf(usable >> 20), String.valueOf(requested), String.valueOf(ring));
                    }
                    decision = Long.toString(ring);
                }
            } catch (java.io.IOException e) {
                decision = "error:cannot read the free space of " + dir + ": " + e.getMessage()
                        + "; set KOLO_TRANSPORT=tcp";
            }
            store.put(key, decision);
        }
        String decision = await(store, key, deadline, rank, leader, startTimeout, "to size the shared-memory rings");
        if (decision.startsWith("error:")) {
            throw new KoloException("rank " + rank + ": " + decision.substring(6));
        }
        return Long.parseLong(decision);
    }

    private static String await(KeyValueStore store, String key, long deadline, int rank, int peer,
                                Duration startTimeout, String what) {
        return StartWait.await(store, key, deadline, rank, "rank " + peer, startTimeout, what);
    }

}
