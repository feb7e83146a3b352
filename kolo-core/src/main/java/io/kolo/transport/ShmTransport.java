package io.kolo.transport;

import io.kolo.bootstrap.StoreKeys;
import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.CpuBinding;
import io.kolo.bootstrap.KeyValueStore;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Transport} between ranks of one host through shared memory: every rank owns an inbox file under
 * {@code /dev/shm} ({@link ShmFile}) with one lock-free ring per sending rank ({@link ShmRing}); a send copies into the
 * receiver's ring, a receive copies out of its own. Only the host's ranks ({@code hostRanks}) are reachable; other
 * peers need another transport ({@link HostRoutingTransport}).
 *
 * <p>Messages larger than a ring stream through it in chunks, and {@link #sendRecv} pushes what fits and pulls what
 * has arrived in one loop, so ring steps never deadlock whatever their size. An idle wait spins briefly, then yields,
 * then parks for short intervals: a host may have fewer cores than busy threads.
 *
 * <p>Single copy: a message of {@link #DIRECT_MIN_BYTES} or more from native memory may travel as a header holding its
 * address; the receiver copies it straight out of the sender's process ({@link CrossMemory}) and counts it done in
 * the ring, and only then does the sender's call return. Each pair probes at setup whether the system allows such
 * reads. Whether a message goes that way or through the ring is the sender's choice ({@link SingleCopy}); the header
 * tells the receiver which. Every receive must take exactly one send's bytes ({@link Transport}), so both sides know
 * where headers are.
 *
 * <p>Failure detection: each inbox carries its owner's pid and state. A waiting rank checks the peer's state (closed,
 * aborted) and, every few milliseconds, whether its process still lives, so a peer killed with SIGKILL in the middle of
 * a transfer fails this rank within milliseconds with a {@link PeerFailedException}. Files are unlinked once every
 * rank of the host has mapped them, so nothing stays in {@code /dev/shm} however the job ends; a job killed during
 * setup leaves files that the next job, or {@code kolo run}, removes ({@link #removeStaleSegments()}).
 */
public final class ShmTransport implements Transport {
    /** How large messages from native memory travel between ranks that may read each other's memory. */
    public enum SingleCopy {
        /** Whichever way cost less in the latest probe of its size class ({@link CopyChoice}). */
        AUTO,
        /** Always read straight from the sender's memory. */
        ALWAYS,
        /** Always copy through the ring; no rank reads another's memory. */
        NEVER
    }

    private static final System.Logger LOG = System.getLogger(ShmTransport.class.getName());
    /** Default bytes per ring (per ordered pair of ranks on a host). */
    public static final long DEFAULT_RING_BYTES = io.kolo.bootstrap.KoloSettings.SHM_RING_BYTES.defaultValue();
    static final Path DIR = Path.of("/dev/shm");
    /** Smallest ring chosen when /dev/shm is short of space. */
    static final long MIN_RING_BYTES = 64 << 10;
    /**
     * Largest piece published at once, so the consumer starts copying while the producer still copies, and a piece is
     * still in cache when it is copied out: a 1 MiB allreduce through the ring (the collective alone) took 272-279 us
     * with 256 KiB pieces in a 4 MiB ring and 145-149 us with 32 KiB pieces in a 1 MiB ring; in the bench, 64 KiB
     * pieces took 160-163 us against 163-182 us for 32 KiB ones, with half the calls.
     */
    private static final long CHUNK = 64 << 10;
    /**
     * Bytes read straight from a sender's memory per call when they are combined or land in Java heap memory: one
     * process_vm_readv call per piece, so pieces are larger than {@link #CHUNK}: each call pins and walks the sender's
     * pages anew.
     */
    private static final long STAGE_BYTES = 256 << 10;
    private static final int SPINS = 1_000;
    /**
     * How long a wait spins (after SPINS at least) before it sleeps in the kernel: a futex wake-up costs tens of
     * microseconds, more than a small op, and two ranks that both fall asleep at every step pay it every time.
     * Only when every rank of the host has a CPU of its own; otherwise the spinning rank takes the CPU from the one
     * it waits for.
     */
    private static final long SPIN_NANOS = 200_000;
    /**
     * Received pieces at least this large are combined straight out of the ring; smaller ones are staged and
     * combined in one pass, which measured faster below it (a 2-rank allreduce: 12 % faster at 1 and 4 MiB combined
     * in place, 5-15 % slower at 64 and 256 KiB).
     */
    static final long COMBINE_IN_PLACE_MIN_BYTES = 256 << 10;
    /**
     * Messages at least this large travel in one copy where the receiver may read the sender's memory
     * ({@link CrossMemory}): the sender puts only a header with the address into the ring, the receiver copies the
     * bytes straight out of the sender's process and tells it so. Smaller ones, and any from Java heap memory (it has
     * no fixed address), are copied through the ring.
     */
    static final long DIRECT_MIN_BYTES = 64 << 10;
    /**
     * Messages this large always travel as single copies where they may. A message as large as the default ring
     * cannot run ahead of its reader: a 2 MiB allreduce (1 MiB messages) took 536-793 us as single copies, 662-1472
     * us through the ring and 830-1068 us choosing between them (alternated three times); a 4 MiB allreduce took
     * 1.00-1.24x the single copies' time through the ring.
     */
    static final long CHOICE_MAX_BYTES = 1L << 20;
    /** Header kinds, before every message of {@link #DIRECT_MIN_BYTES} or more between ranks that can read directly. */
    static final long HEADER_INLINE = 0x4B4F4C4F494E4C4EL;
    static final long HEADER_DIRECT = 0x4B4F4C4F44495254L;
    private static final int HEADER_BYTES = 16;
    private final long spinNanos;
    /** Yields before sleeping when there is no futex (with one, yielding on a crowded host gives away a slice). */
    private static final int YIELDS_WITHOUT_FUTEX = 50;
    private static final long PARK_NANOS = 20_000;
    /** Longest futex sleep: liveness and timeout checks run at least this often while a rank waits. */
    private static final long SLEEP_NANOS = 1_000_000;
    private static final long PID_CHECK_NANOS = 10_000_000;

    private final int rank;
    private final int size;
    private final Duration timeout;
    private final long timeoutNanos;
    private final Arena arena;
    private final ShmFile own;
    /** Indexed by global rank; null for ranks of other hosts and for this rank. */
    private final ShmFile[] peerFiles;
    private final ShmRing[] inbox;
    private final ShmRing[] outbox;
    private final ProcessHandle[] peerProcess;
    /** Native {@code struct timespec} of {@link #SLEEP_NANOS} for futex waits, allocated once. */
    private final MemorySegment sleepTimespec;
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    // Not static: the launcher uses this class's cleanup methods and must not load the native linker.
    private final int yields = Futex.AVAILABLE ? 0 : YIELDS_WITHOUT_FUTEX;

    // The transfers in progress: plain fields, not objects, so a call allocates nothing.
    private int outPeer = -1;
    private MemorySegment outSeg;
    private long outOff;
    private long outLeft;
    private long outTotal;
    private int inPeer = -1;
    /** Set while a {@link #sendRecvCombine} runs: received bytes are combined into inSeg rather than copied. */
    private Combiner inCombiner;
    private int inUnit;
    /** Gathers the one element that may wrap around a ring's end (the largest element has 8 bytes). */
    private final MemorySegment stash;
    private MemorySegment inSeg;
    private long inOff;
    private long inLeft;
    private long inTotal;

    // Single-copy transfers (see DIRECT_MIN_BYTES).
    /** Non-null when this process may use process_vm_readv at all. */
    private final CrossMemory cross;
    /** Non-null with {@link SingleCopy#AUTO}: picks the way of each large native message this rank sends. */
    private final CopyChoice choice;
    /** Whether the current call's outgoing message took part in the choice, so its time is recorded. */
    private boolean outTimed;
    /** When the timed call began ({@link System#nanoTime()}). */
    private long outStartNanos;
    /** readsFrom[p]: this rank reads large messages from p straight out of p's memory, so they carry a header. */
    private final boolean[] readsFrom;
    /** readBy[p]: p reads this rank's memory, so large messages to p carry a header. */
    private final boolean[] readBy;
    /** Direct sends to each peer so far: the count its {@link ShmRing#directReads()} must reach. */
    private final long[] directSends;
    private final MemorySegment outHeader;
    private final MemorySegment inHeader;
    /** Where directly read bytes land when they are combined, or when the destination is Java heap memory. */
    private final MemorySegment stage;
    private long outHeaderLeft;
    private boolean outDirect;
    private boolean awaitingRead;
    private long readTarget;
    private long inHeaderLeft;

    private ShmTransport(int rank, int size, Duration timeout, Arena arena, ShmFile own, ShmFile[] peerFiles,
                         ShmRing[] inbox, ShmRing[] outbox, int hostRanks, CrossMemory cross, boolean[] readsFrom,
                         boolean[] readBy, SingleCopy singleCopy) {
        this.rank = rank;
        this.size = size;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
        this.arena = arena;
        this.own = own;
        this.peerFiles = peerFiles;
        this.inbox = inbox;
        this.outbox = outbox;
        this.sleepTimespec = arena.allocate(16, 8);
        this.stash = arena.allocate(8, 8);
        this.spinNanos = hostRanks <= CpuBinding.onlineCpus() ? SPIN_NANOS : 0;
        this.readsFrom = readsFrom;
        this.readBy = readBy;
        this.directSends = new long[size];
        this.outHeader = arena.allocate(HEADER_BYTES, 8);
        this.inHeader = arena.allocate(HEADER_BYTES, 8);
        boolean anyDirect = any(readsFrom);
        this.cross = anyDirect ? cross : null;
        this.choice = any(readBy) && singleCopy == SingleCopy.AUTO ? new CopyChoice() : null;
        this.stage = anyDirect ? arena.allocate(STAGE_BYTES, 64) : null;
        sleepTimespec.set(ValueLayout.JAVA_LONG, 0, 0);
        sleepTimespec.set(ValueLayout.JAVA_LONG, 8, SLEEP_NANOS);
        this.peerProcess = new ProcessHandle[size];
        for (int p = 0; p < size; p++) {
            if (peerFiles[p] != null) {
                Optional<ProcessHandle> h = ProcessHandle.of(peerFiles[p].pid());
                peerProcess[p] = h.orElse(null);
            }
        }
    }

    private static boolean any(boolean[] flags) {
        for (boolean f : flags) {
            if (f) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sets up the shared-memory links between {@code hostRanks} (sorted, including {@code rank}); every rank in
     * {@code hostRanks} must call this concurrently with the same arguments except {@code rank}.
     *
     * @param job          names the files ({@code kolo-<job>-<rank>-<pid>}); unique per job, letters/digits only
     * @param ringBytes    bytes per ring, a power of two
     * @param startTimeout how long to wait for the host's other ranks during setup
     * @param timeout      how long a data call may go without progress before it fails
     */
    public static ShmTransport connect(int rank, int size, int[] hostRanks, KeyValueStore store, String job,
                                       long ringBytes, Duration startTimeout, Duration timeout) {
        return connect(DIR, rank, size, hostRanks, store, job, ringBytes, startTimeout, timeout, SingleCopy.AUTO);
    }

    /**
     * As {@link #connect(int, int, int[], KeyValueStore, String, long, Duration, Duration)}, with how large messages
     * travel ({@code KOLO_SHM_SINGLE_COPY}); {@link SingleCopy#NEVER} keeps this rank from reading other ranks'
     * memory, so every message to it is copied through the ring.
     */
    public static ShmTransport connect(int rank, int size, int[] hostRanks, KeyValueStore store, String job,
                                       long ringBytes, Duration startTimeout, Duration timeout,
                                       SingleCopy singleCopy) {
        return connect(DIR, rank, size, hostRanks, store, job, ringBytes, startTimeout, timeout, singleCopy);
    }

    static ShmTransport connect(Path dir, int rank, int size, int[] hostRanks, KeyValueStore store, String job,
                                long ringBytes, Duration startTimeout, Duration timeout) {
        return connect(dir, rank, size, hostRanks, store, job, ringBytes, startTimeout, timeout, SingleCopy.AUTO);
    }

    static ShmTransport connect(Path dir, int rank, int size, int[] hostRanks, KeyValueStore store, String job,
                                long ringBytes, Duration startTimeout, Duration timeout, SingleCopy singleCopy) {
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
            CrossMemory cross = singleCopy != SingleCopy.NEVER && CrossMemory.AVAILABLE ? new CrossMemory(arena) : null;
            probeDirectReads(rank, hostRanks, store, arena, peerFiles, cross, readsFrom, readBy, deadline,
                    startTimeout);
            ok = true;
            return new ShmTransport(rank, size, timeout, arena, own, peerFiles, inbox, outbox, hostRanks.length,
                    cross, readsFrom, readBy, singleCopy);
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
        long magic = new java.security.SecureRandom().nextLong() | 1;
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
        try {
            return store.get(key, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        } catch (KoloTimeoutException e) {
            throw new KoloTimeoutException("rank " + rank + " timed out after " + TcpTransport.describe(startTimeout)
                    + " waiting for rank " + peer + " " + what + " (it did not start, failed during startup, or cannot"
                    + " reach the rendezvous server); raise KOLO_START_TIMEOUT_SECONDS if it legitimately starts"
                    + " this slowly");
        } catch (KoloException e) {
            if (e instanceof KoloTimeoutException) {
                throw e;
            }
            throw new KoloException("rank " + rank + " was waiting for rank " + peer + " " + what + " when the"
                    + " rendezvous store went away (" + e.getMessage() + "); rank " + peer + " did not start in time or"
                    + " failed during startup; raise KOLO_START_TIMEOUT_SECONDS if it legitimately starts this slowly",
                    e);
        }
    }

    /** Removes {@code /dev/shm/kolo-*} segments of this user whose creating process is gone; returns how many. */
    public static int removeStaleSegments() {
        return ShmFile.removeStale(DIR);
    }

    /** Removes every {@code /dev/shm} segment of job {@code job}: for a launcher once all of the job's ranks ended. */
    public static int removeJobSegments(String job) {
        return ShmFile.removeJob(DIR, job);
    }

    /** Whether this machine offers POSIX shared memory as a directory ({@code /dev/shm}) this process can write. */
    public static boolean available() {
        return java.nio.file.Files.isDirectory(DIR) && java.nio.file.Files.isWritable(DIR);
    }

    /** Whether this rank reads large messages from {@code peer} straight out of its memory (tests, diagnostics). */
    boolean readsDirectlyFrom(int peer) {
        return readsFrom[peer];
    }

    /** Whether {@code peer} reads this rank's large messages straight out of its memory (tests, diagnostics). */
    boolean readDirectlyBy(int peer) {
        return readBy[peer];
    }

    /** Messages this rank has read straight out of {@code peer}'s memory so far (tests, diagnostics). */
    long directReadsFrom(int peer) {
        return inbox[peer].directReads();
    }

    /** Whether {@code peer} is reachable through shared memory (on this host and not this rank). */
    public boolean reaches(int peer) {
        return peer >= 0 && peer < size && outbox[peer] != null;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void send(int peer, MemorySegment src, long offset, long length) {
        checkUsable();
        requireReachable(peer);
        Objects.checkFromIndexSize(offset, length, src.byteSize());
        beginOut(peer, src, offset, length);
        beginIn(-1, null, 0, 0);
        transfer();
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        checkUsable();
        requireReachable(peer);
        Objects.checkFromIndexSize(offset, length, dst.byteSize());
        beginOut(-1, null, 0, 0);
        beginIn(peer, dst, offset, length);
        progress();
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        checkUsable();
        requireReachable(sendPeer);
        requireReachable(recvPeer);
        Objects.checkFromIndexSize(srcOffset, srcLength, src.byteSize());
        Objects.checkFromIndexSize(dstOffset, dstLength, dst.byteSize());
        beginOut(sendPeer, src, srcOffset, srcLength);
        beginIn(recvPeer, dst, dstOffset, dstLength);
        transfer();
    }

    @Override
    public void sendRecvCombine(int sendPeer, MemorySegment src, long srcOffset, long srcLength, int recvPeer,
                                MemorySegment acc, long accOffset, long length, int unitBytes, MemorySegment scratch,
                                Combiner combiner) {
        if (unitBytes < 1 || unitBytes > stash.byteSize() || length % unitBytes != 0) {
            throw new IllegalArgumentException("combine unit " + unitBytes + " bytes for a length of " + length);
        }
        if (length < COMBINE_IN_PLACE_MIN_BYTES) {
            Transport.super.sendRecvCombine(sendPeer, src, srcOffset, srcLength, recvPeer, acc, accOffset, length,
                    unitBytes, scratch, combiner);
            return;
        }
        inCombiner = combiner;
        inUnit = unitBytes;
        try {
            sendRecv(sendPeer, src, srcOffset, srcLength, recvPeer, acc, accOffset, length);
        } finally {
            inCombiner = null;
        }
    }

    private void beginOut(int peer, MemorySegment seg, long offset, long length) {
        outPeer = peer;
        outSeg = seg;
        outOff = offset;
        outLeft = length;
        outTotal = length;
        outHeaderLeft = 0;
        outDirect = false;
        outTimed = false;
        awaitingRead = false;
        if (peer >= 0 && length >= DIRECT_MIN_BYTES && readBy[peer]) {
            // Both sides know the length and the pair's ability, so both know a header comes. Heap memory has no
            // fixed address for the receiver to read: it goes through the ring behind an inline header.
            outTimed = choice != null && seg.isNative() && length < CHOICE_MAX_BYTES;
            if (outTimed) {
                outStartNanos = System.nanoTime();
            }
            outDirect = seg.isNative() && (!outTimed || choice.direct(length, outStartNanos));
            outHeader.set(ValueLayout.JAVA_LONG, 0, outDirect ? HEADER_DIRECT : HEADER_INLINE);
            outHeader.set(ValueLayout.JAVA_LONG, 8, outDirect ? seg.address() + offset : 0);
            outHeaderLeft = HEADER_BYTES;
        }
    }

    private void beginIn(int peer, MemorySegment seg, long offset, long length) {
        inPeer = peer;
        inSeg = seg;
        inOff = offset;
        inLeft = length;
        inTotal = length;
        inHeaderLeft = peer >= 0 && length >= DIRECT_MIN_BYTES && readsFrom[peer] ? HEADER_BYTES : 0;
    }

    /** Whether this call still has anything to send, or waits for the receiver to finish reading its memory. */
    private boolean sending() {
        return outHeaderLeft > 0 || outLeft > 0 || awaitingRead;
    }

    private boolean receiving() {
        return inHeaderLeft > 0 || inLeft > 0;
    }

    /** Runs the call's transfers, timing them when its outgoing message's way was chosen ({@link CopyChoice}). */
    private void transfer() {
        if (!outTimed) {
            progress();
            return;
        }
        progress();
        choice.record(outTotal, System.nanoTime() - outStartNanos);
    }

    /** Pushes what fits and pulls what has arrived until both transfers are done. */
    private void progress() {
        int idle = 0;
        long idleSince = 0;
        long nextPidCheck = 0;
        try {
            while (sending() || receiving()) {
                if (step()) {
                    idle = 0;
                    continue;
                }
                checkUsable();
                if (++idle == 1) {
                    idleSince = System.nanoTime();
                    nextPidCheck = idleSince + PID_CHECK_NANOS;
                }
                if (idle <= SPINS || System.nanoTime() - idleSince < spinNanos) {
                    Thread.onSpinWait();
                } else if (idle <= SPINS + yields) {
                    Thread.yield();
                } else {
                    long now = System.nanoTime();
                    boolean checkPid = now - nextPidCheck >= 0;
                    if (checkPid) {
                        nextPidCheck = now + PID_CHECK_NANOS;
                    }
                    checkPeers(checkPid);
                    if (now - idleSince >= timeoutNanos) {
                        throw fail(timedOut());
                    }
                    sleep();
                }
            }
        } catch (IllegalStateException e) {
            // The arena was closed under us by close() on another thread.
            RuntimeException first = failure.get();
            throw first != null ? first : fail(new KoloException("rank " + rank + ": shared memory unmapped", e));
        } finally {
            outSeg = null;
            inSeg = null;
        }
    }

    /** Waits in the kernel until a peer rings this rank's doorbell, or a short while. */
    private void sleep() {
        if (!Futex.AVAILABLE || Thread.currentThread().isVirtual()) {
            // A virtual thread in a system call would pin its carrier; parking lets others run.
            LockSupport.parkNanos(PARK_NANOS);
            return;
        }
        own.sleepers(1);
        try {
            int bell = own.bell();
            // Re-check after announcing the sleep: a peer that changed something before it saw us rang already.
            if (canProgress()) {
                return;
            }
            Futex.await(own.bellWord(), bell, sleepTimespec);
        } finally {
            own.sleepers(-1);
        }
    }

    /** Whether a {@link #step} could move something now (re-checked after announcing a sleep). */
    private boolean canProgress() {
        if (outHeaderLeft > 0 || outLeft > 0) {
            if (outbox[outPeer].free() > 0) {
                return true;
            }
        } else if (awaitingRead && outbox[outPeer].directReads() >= readTarget) {
            return true;
        }
        if (inHeaderLeft > 0) {
            return inbox[inPeer].available() > 0;
        }
        return inLeft > 0 && inbox[inPeer].available() >= (inCombiner == null ? 1 : inUnit);
    }

    /** One attempt in each direction; true if any byte moved. */
    private boolean step() {
        boolean moved = false;
        if (outHeaderLeft > 0) {
            long n = outbox[outPeer].offer(outHeader, HEADER_BYTES - outHeaderLeft, outHeaderLeft);
            if (n > 0) {
                outHeaderLeft -= n;
                moved = true;
                peerFiles[outPeer].ring();
                if (outHeaderLeft == 0 && outDirect) {
                    outOff += outLeft;
                    outLeft = 0;
                    awaitingRead = true;
                    readTarget = ++directSends[outPeer];
                }
            }
        } else if (awaitingRead) {
            if (outbox[outPeer].directReads() >= readTarget) {
                awaitingRead = false;
                moved = true;
            }
        } else if (outLeft > 0) {
            long n = outbox[outPeer].offer(outSeg, outOff, Math.min(outLeft, CHUNK));
            if (n > 0) {
                outOff += n;
                outLeft -= n;
                moved = true;
                peerFiles[outPeer].ring();
            }
        }
        if (inHeaderLeft > 0) {
            long n = inbox[inPeer].poll(inHeader, HEADER_BYTES - inHeaderLeft, inHeaderLeft);
            if (n > 0) {
                inHeaderLeft -= n;
                moved = true;
                peerFiles[inPeer].ring();
                if (inHeaderLeft == 0) {
                    long kind = inHeader.get(ValueLayout.JAVA_LONG, 0);
                    if (kind == HEADER_DIRECT) {
                        readDirect(inHeader.get(ValueLayout.JAVA_LONG, 8));
                    } else if (kind != HEADER_INLINE) {
                        throw fail(new KoloException("rank " + rank + " received a message header it does not know"
                                + " from rank " + inPeer + " over shared memory (0x" + Long.toHexString(kind)
                                + "); do all ranks run the same Kolo version?"));
                    }
                }
            }
        } else if (inLeft > 0) {
            long n = inCombiner == null ? inbox[inPeer].poll(inSeg, inOff, Math.min(inLeft, CHUNK))
                    : inbox[inPeer].pollCombine(inSeg, inOff, Math.min(inLeft, CHUNK), inUnit, stash, inCombiner);
            if (n > 0) {
                inOff += n;
                inLeft -= n;
                moved = true;
                peerFiles[inPeer].ring();
            }
        }
        return moved;
    }

    /**
     * Copies the whole incoming message out of the sender's memory at {@code address}, then tells the sender it may
     * reuse it. Straight into a native destination; through {@link #stage}, a piece at a time, into heap memory or
     * into the combiner.
     */
    private void readDirect(long address) {
        int pid = (int) peerFiles[inPeer].pid();
        long done = 0;
        while (done < inLeft) {
            boolean straight = inCombiner == null && inSeg.isNative();
            long piece = straight ? inLeft - done : Math.min(inLeft - done, stage.byteSize());
            long n = straight ? cross.read(pid, address + done, inSeg, inOff + done, piece)
                    : cross.read(pid, address + done, stage, 0, piece);
            if (n != piece) {
                throw fail(directReadFailed(n < 0 ? cross.lastErrno() : 0, n, piece));
            }
            if (!straight) {
                if (inCombiner != null) {
                    inCombiner.combine(inSeg, inOff + done, stage, 0, piece);
                } else {
                    MemorySegment.copy(stage, 0, inSeg, inOff + done, piece);
                }
            }
            done += piece;
        }
        inOff += inLeft;
        inLeft = 0;
        inbox[inPeer].directReadDone();
        peerFiles[inPeer].ring();
    }

    private RuntimeException directReadFailed(int errno, long got, long wanted) {
        int peer = inPeer;
        PeerFailedException gone = gone(peer, true, errno == CrossMemory.ESRCH);
        if (gone != null) {
            return gone;
        }
        return new KoloException("rank " + rank + " could not read " + wanted + " bytes from rank " + peer
                + "'s memory (process_vm_readv: " + (errno != 0 ? "errno " + errno : got + " bytes") + "); set"
                + " KOLO_SHM_SINGLE_COPY=0 to copy through shared memory instead");
    }

    private void checkPeers(boolean checkPid) {
        if (sending()) {
            checkPeer(outPeer, checkPid);
        }
        if (receiving() && (!sending() || inPeer != outPeer)) {
            checkPeer(inPeer, checkPid);
        }
    }

    private void checkPeer(int peer, boolean checkPid) {
        PeerFailedException gone = gone(peer, checkPid, false);
        if (gone != null && !step()) {
            // Bytes it wrote before leaving were taken by the step above; only now is the loss certain.
            throw fail(gone);
        }
    }

    /**
     * Why {@code peer} is lost, or null while it looks alive: it aborted, closed its transport, or (when
     * {@code checkPid}, or when the caller already knows) its process is gone. An abort only relays a failure the
     * aborting rank saw; when another rank of this host has died, that death is what this rank reports, so that
     * every rank names the same cause even when the job's store went down with the aborting rank.
     */
    private PeerFailedException gone(int peer, boolean checkPid, boolean knownDead) {
        int state = peerFiles[peer].state();
        String why;
        if (state == ShmFile.ABORTED) {
            PeerFailedException dead = deadHostRank(peer);
            if (dead != null) {
                return dead;
            }
            why = "rank " + peer + " aborted";
        } else if (state == ShmFile.CLOSED) {
            why = "rank " + peer + " closed its transport";
        } else if (knownDead || (checkPid && !alive(peer))) {
            return died(peer);
        } else {
            return null;
        }
        return new PeerFailedException(peer, "lost rank " + peer + " over shared memory: " + why, null,
                state == ShmFile.ABORTED);
    }

    /** A rank of this host other than {@code except} whose process is gone, as the failure to report; or null. */
    private PeerFailedException deadHostRank(int except) {
        for (int p = 0; p < size; p++) {
            if (p != except && peerFiles[p] != null && !alive(p)) {
                return died(p);
            }
        }
        return null;
    }

    private boolean alive(int peer) {
        return peerProcess[peer] == null || peerProcess[peer].isAlive();
    }

    private PeerFailedException died(int peer) {
        return new PeerFailedException(peer, "lost rank " + peer + " over shared memory: rank " + peer + " (pid "
                + peerFiles[peer].pid() + ") died: it exited, crashed or was killed", null, false);
    }

    private KoloTimeoutException timedOut() {
        StringBuilder what = new StringBuilder();
        if (awaitingRead) {
            what.append("for rank ").append(outPeer).append(" to read ").append(outTotal)
                    .append(" bytes straight from this rank's memory");
        } else if (outHeaderLeft > 0 || outLeft > 0) {
            what.append("to send ").append(outTotal).append(" bytes to rank ").append(outPeer)
                    .append(" (").append(outTotal - outLeft).append(" sent)");
        }
        if (receiving()) {
            if (!what.isEmpty()) {
                what.append(" and ");
            }
            what.append("to receive ").append(inTotal).append(" bytes from rank ").append(inPeer)
                    .append(" (").append(inTotal - inLeft).append(" received)");
        }
        return new KoloTimeoutException("rank " + rank + " timed out after " + TcpTransport.describe(timeout)
                + " waiting " + what + " over shared memory; raise KOLO_TIMEOUT_SECONDS if ranks legitimately wait"
                + " this long");
    }

    /** Records the first failure and tells the host's ranks through this inbox's state; returns the first failure. */
    private RuntimeException fail(RuntimeException cause) {
        failure.compareAndSet(null, cause);
        own.setState(ShmFile.ABORTED);
        wakeEveryone();
        return failure.get();
    }

    /** Rings this rank's doorbell (a thread of ours may sleep on it) and every peer's (they may wait on us). */
    private void wakeEveryone() {
        own.ring();
        for (ShmFile f : peerFiles) {
            if (f != null) {
                f.ring();
            }
        }
    }

    private void checkUsable() {
        RuntimeException first = failure.get();
        if (first != null) {
            throw first;
        }
    }

    private void requireReachable(int peer) {
        if (!reaches(peer)) {
            throw new IllegalArgumentException("rank " + rank + " cannot exchange with rank " + peer
                    + " over shared memory (ranks on this host: " + hostRanks() + ", job size " + size + ")");
        }
    }

    private String hostRanks() {
        StringBuilder b = new StringBuilder().append(rank);
        for (int p = 0; p < size; p++) {
            if (outbox[p] != null) {
                b.append(", ").append(p);
            }
        }
        return b.toString();
    }

    @Override
    public void abort(RuntimeException cause) {
        Objects.requireNonNull(cause, "cause");
        fail(cause);
    }

    @Override
    public void close() {
        failure.compareAndSet(null, new KoloException("rank " + rank + ": the shared-memory transport is closed"));
        own.setState(ShmFile.CLOSED);
        wakeEveryone();
        // A thread still inside progress() makes close fail for a moment; it sees the failure and leaves.
        for (int attempt = 0; ; attempt++) {
            try {
                arena.close();
                return;
            } catch (IllegalStateException e) {
                if (!arena.scope().isAlive()) {
                    return;
                }
                if (attempt == 100) {
                    LOG.log(System.Logger.Level.DEBUG, "rank {0}: shared memory still in use at close", rank);
                    return;
                }
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    @Override
    public String toString() {
        return "ShmTransport[rank " + rank + " of " + size + ", host ranks " + hostRanks() + "]";
    }
}
