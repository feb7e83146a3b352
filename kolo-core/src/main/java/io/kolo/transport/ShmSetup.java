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
import java.util.List;
import java.util.Objects;

/**
 * Sets up a host's shared-memory links over the rendezvous store, as Gloo's transports are handed finished pairs:
 * the ring size every rank of the host agrees on, each rank's inbox file created, published, mapped by the others and
 * unlinked, and the probe of which pairs may read each other's memory. Each step is one write and one read of the
 * host's whole table ({@link KeyValueStore#getEach}), so a rank's setup costs the store the same few requests
 * however many ranks share its host. The rings themselves come later, per pair, on its first exchange
 * ({@link ShmRings}). The transport only ever sees the result
 * ({@link ShmLinks}), never the store.
 */
final class ShmSetup {
    private static final System.Logger LOG = LazyLogger.of(ShmSetup.class);
    private static final String FILE = "file/";
    private static final String MAPPED = "mapped/";
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
        // Room for one ring per other rank of the host; each takes memory only once its pair first exchanges.
        int rings = hostRanks.length - 1;
        ShmFile.removeStale(dir);
        long requested = ringBytes;
        ringBytes = agreeOnRingBytes(dir, rank, hostRanks, store, requested, deadline, startTimeout);
        String keys = StoreKeys.shmHost(hostRanks[0]);
        int me = Arrays.binarySearch(hostRanks, rank);
        Arena arena = Arena.ofShared();
        ShmFile own = null;
        boolean ok = false;
        try {
            own = ShmFile.create(dir, job, rank, rings, ringBytes, arena);
            MemorySegment probe = arena.allocate(8, 8);
            long magic = RandomBytes.nextLong() | 1;
            probe.set(ValueLayout.JAVA_LONG, 0, magic);
            // One write and one read of the host's table per step, whatever the host's number of ranks.
            store.put(keys + FILE + me, own.path() + "\t" + probe.address() + ":" + magic);
            List<String> published = StartWait.awaitEach(store, keys + FILE, hostRanks.length, deadline, rank,
                    startTimeout, "to publish their shared-memory segments");
            ShmFile[] peerFiles = new ShmFile[size];
            boolean[] readsFrom = new boolean[size];
            CrossMemory cross = singleCopy != ShmTransport.SingleCopy.NEVER && CrossMemory.AVAILABLE
                    ? new CrossMemory(arena) : null;
            MemorySegment got = arena.allocate(8, 8);
            StringBuilder reads = new StringBuilder(hostRanks.length);
            for (int i = 0; i < hostRanks.length; i++) {
                int peer = hostRanks[i];
                if (peer == rank) {
                    reads.append('0');
                    continue;
                }
                String entry = published.get(i);
                int tab = entry.lastIndexOf('\t');
                peerFiles[peer] = ShmFile.open(Path.of(entry.substring(0, tab)), peer, rings, ringBytes, arena, rank);
                readsFrom[peer] = probe(rank, peer, entry.substring(tab + 1), peerFiles[peer], cross, got);
                reads.append(readsFrom[peer] ? '1' : '0');
            }
            store.put(keys + MAPPED + me, reads.toString());
            List<String> mapped = StartWait.awaitEach(store, keys + MAPPED, hostRanks.length, deadline, rank,
                    startTimeout, "to map the shared-memory segments");
            // Every peer holds a mapping now: drop the name so no exit path, SIGKILL included, can leave it behind.
            own.unlink();
            boolean[] readBy = new boolean[size];
            int[] ringIn = new int[size];
            int[] ringOut = new int[size];
            Arrays.fill(ringIn, -1);
            Arrays.fill(ringOut, -1);
            for (int i = 0; i < hostRanks.length; i++) {
                int peer = hostRanks[i];
                if (peer != rank) {
                    readBy[peer] = mapped.get(i).charAt(me) == '1';
                    ringIn[peer] = i < me ? i : i - 1;
                    ringOut[peer] = me < i ? me : me - 1;
                }
            }
            ok = true;
            return new ShmLinks(rank, size, timeout, arena, own, peerFiles, ringIn, ringOut, hostRanks.length, cross,
                    readsFrom, readBy, singleCopy);
        } finally {
            if (!ok) {
                if (own != null) {
                    own.setState(ShmFile.ABORTED);
                    own.unlink();
                    own.close();
                }
                arena.close();
            }
        }
    }

    /**
     * Whether this rank can read {@code peer}'s memory directly: the peer published the address of a word of its
     * memory holding a random value ({@code address:value}); process_vm_readv must read that value back. Ptrace
     * restrictions (Yama, seccomp, containers) make it fail; those pairs copy through the ring.
     */
    private static boolean probe(int rank, int peer, String published, ShmFile peerFile, CrossMemory cross,
                                 MemorySegment got) {
        if (cross == null) {
            return false;
        }
        String[] p = published.split(":");
        long n = cross.read((int) peerFile.pid(), Long.parseLong(p[0]), got, 0, 8);
        boolean ok = n == 8 && got.get(ValueLayout.JAVA_LONG, 0) == Long.parseLong(p[1]);
        if (!ok) {
            LOG.log(System.Logger.Level.DEBUG, "rank {0} cannot read rank {1}''s memory (errno {2});"
                    + " messages from it are copied through shared memory twice", rank, peer,
                    n < 0 ? cross.lastErrno() : 0);
        }
        return ok;
    }

    /**
     * The rings a rank of a host of {@code hostRanks} is planned to hold: one per host mate it receives from in the
     * ring, recursive doubling, the binomial trees and the dissemination barrier, about two per doubling of the host's
     * ranks. An alltoall adds one per host mate, as space allows ({@link ShmFile#addRing} explains when it does not).
     */
    static int plannedRings(int hostRanks) {
        int log2 = 32 - Integer.numberOfLeadingZeros(hostRanks - 1);
        return Math.min(hostRanks - 1, 2 * log2 + 1);
    }

    /**
     * The host's lowest rank picks the ring size for all: the requested one, halved while the host's planned rings
     * ({@link #plannedRings}) would take more than half of the free space in {@code dir} (a container's /dev/shm is
     * often 64 MiB), down to {@link #MIN_RING_BYTES}. One rank decides so that every rank of the host maps files of
     * the same layout.
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
                int planned = plannedRings(n);
                while (ring > MIN_RING_BYTES && n * ShmFile.fileBytes(planned, ring) > usable / 2) {
                    ring /= 2;
                }
                long need = n * ShmFile.fileBytes(planned, ring);
                if (need > usable) {
                    decision = "error:" + dir + " has " + bytes(usable) + " free but " + n + " ranks need at least "
                            + bytes(need) + " of shared memory (" + planned + " rings of " + bytes(ring) + " each);"
                            + " raise its size (containers: --shm-size) or set KOLO_TRANSPORT=tcp";
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

    /** "640 KiB", "12 MiB". */
    static String bytes(long n) {
        return n >= 10L << 20 ? (n >> 20) + " MiB" : (n >> 10) + " KiB";
    }

    private static String await(KeyValueStore store, String key, long deadline, int rank, int peer,
                                Duration startTimeout, String what) {
        return StartWait.await(store, key, deadline, rank, "rank " + peer, startTimeout, what);
    }

}
