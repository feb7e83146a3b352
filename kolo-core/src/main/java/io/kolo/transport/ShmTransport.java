package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.bootstrap.CpuBinding;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Transport} between ranks of one host through shared memory: every rank owns an inbox file under
 * {@code /dev/shm} ({@link ShmFile}) with one lock-free ring per rank that sends to it ({@link ShmRing}), set up on the
 * pair's first exchange ({@link ShmRings}); a send copies into the receiver's ring, a receive copies out of its own. Only the host's ranks ({@code hostRanks}) are reachable; other
 * peers need another transport ({@link HostRoutingTransport}).
 *
 * <p>Messages larger than a ring stream through it in chunks, and {@link #sendRecv} pushes what fits and pulls what
 * has arrived in one loop, so ring steps never deadlock whatever their size. An idle wait spins briefly, then yields,
 * then parks for short intervals: a host may have fewer cores than busy threads.
 *
 * <p>Single copy: a message of {@link ShmWire#DIRECT_MIN_BYTES} or more from native memory may travel as a header holding its
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
 * setup leaves files that the next job, or {@code kolo run}, removes ({@link ShmSegments#removeStale()}).
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

    private static final System.Logger LOG = LazyLogger.of(ShmTransport.class);
    /** Default bytes per ring (per ordered pair of ranks on a host). */
    public static final long DEFAULT_RING_BYTES = io.kolo.bootstrap.KoloSettings.SHM_RING_BYTES.defaultValue();
    static final Path DIR = ShmSegments.DIR;
    private static final int SPINS = 1_000;
    /**
     * How long a wait spins (after SPINS at least) before it sleeps in the kernel: a futex wake-up costs tens of
     * microseconds, more than a small op, and two ranks that both fall asleep at every step pay it every time.
     * Only when every rank of the host has a CPU of its own; otherwise the spinning rank takes the CPU from the one
     * it waits for.
     */
    private static final long SPIN_NANOS = 200_000;
    /** Yields before sleeping when there is no futex (with one, yielding on a crowded host gives away a slice). */
    private static final int YIELDS_WITHOUT_FUTEX = 50;
    private static final long PID_CHECK_NANOS = 10_000_000;

    private final int rank;
    private final int size;
    private final Duration timeout;
    private final long timeoutNanos;
    private final Arena arena;
    private final ShmFile own;
    /** Indexed by global rank; null for ranks of other hosts and for this rank. */
    private final ShmFile[] peerFiles;
    private final ShmRings rings;
    private final boolean[] readsFrom;
    private final boolean[] readBy;
    private final ShmPeers peers;
    private final ShmDoorbell doorbell;
    /** Whether either transfer could move now: a field, so that a wait allocates nothing. */
    private final java.util.function.BooleanSupplier canProgress;
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    private final StalledExchange stalled = new StalledExchange();
    /** Spins, then (without a futex) yields, then sleeps on the futex or parks. */
    private final Backoff backoff;
    /** The transfers in progress: one object each way, reused, so a call allocates nothing. */
    private final ShmOutgoing out;
    private final ShmIncoming in;
    private final long stashBytes;

    private ShmTransport(ShmLinks links) {
        this.rank = links.rank();
        this.size = links.size();
        this.timeout = links.timeout();
        this.timeoutNanos = timeout.toNanos();
        this.arena = links.arena();
        this.own = links.own();
        this.peerFiles = links.peerFiles();
        this.rings = new ShmRings(links);
        this.readsFrom = links.readsFrom();
        this.readBy = links.readBy();
        this.peers = new ShmPeers(peerFiles);
        this.doorbell = new ShmDoorbell(own, peerFiles, arena);
        // Spinning pays only when every rank of the host has a CPU of its own. Futex is read here, not in a static
        // field: the launcher uses this package's cleanup and must not load the native linker.
        this.backoff = new Backoff(SPINS, Futex.AVAILABLE ? 0 : YIELDS_WITHOUT_FUTEX,
                links.hostRanks() <= CpuBinding.onlineCpus() ? SPIN_NANOS : 0);
        boolean anyDirect = any(readsFrom);
        CopyChoice choice = any(readBy) && links.singleCopy() == SingleCopy.AUTO
                ? new CopyChoice(links.own().ringBytes()) : null;
        this.out = new ShmOutgoing(rings, peerFiles, readBy, choice, arena.allocate(ShmWire.HEADER_BYTES, 8));
        MemorySegment stash = arena.allocate(8, 8);
        this.stashBytes = stash.byteSize();
        this.in = new ShmIncoming(rank, links, rings, peers, arena.allocate(ShmWire.HEADER_BYTES, 8), stash,
                anyDirect ? arena.allocate(ShmWire.STAGE_BYTES, 64) : null, this::fail);
        this.canProgress = () -> out.canProgress() || in.canProgress();
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
        return new ShmTransport(ShmSetup.links(dir, rank, size, hostRanks, store, job, ringBytes, startTimeout,
                timeout, singleCopy));
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
        ShmRing ring = rings.receivedFrom(peer);
        return ring == null ? 0 : ring.directReads();
    }

    /** Rings this rank has set up with its host mates so far, each direction counted (tests, diagnostics). */
    int ringsInUse() {
        return rings.count();
    }

    /** Whether {@code peer} is reachable through shared memory (on this host and not this rank). */
    public boolean reaches(int peer) {
        return rings.reaches(peer);
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
        out.begin(peer, src, offset, length);
        in.begin(-1, null, 0, 0, null, 0);
        progress();
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        checkUsable();
        requireReachable(peer);
        Objects.checkFromIndexSize(offset, length, dst.byteSize());
        setUpReceive(peer);
        out.begin(-1, null, 0, 0);
        in.begin(peer, dst, offset, length, null, 0);
        progress();
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        exchange(sendPeer, src, srcOffset, srcLength, recvPeer, dst, dstOffset, dstLength, null, 0);
    }

    @Override
    public void sendRecvCombine(int sendPeer, MemorySegment src, long srcOffset, long srcLength, int recvPeer,
                                MemorySegment acc, long accOffset, long length, int unitBytes, MemorySegment scratch,
                                Combiner combiner) {
        if (unitBytes < 1 || unitBytes > stashBytes || length % unitBytes != 0) {
            throw new IllegalArgumentException("combine unit " + unitBytes + " bytes for a length of " + length);
        }
        if (length < ShmWire.COMBINE_IN_PLACE_MIN_BYTES) {
            Transport.super.sendRecvCombine(sendPeer, src, srcOffset, srcLength, recvPeer, acc, accOffset, length,
                    unitBytes, scratch, combiner);
            return;
        }
        exchange(sendPeer, src, srcOffset, srcLength, recvPeer, acc, accOffset, length, combiner, unitBytes);
    }

    private void exchange(int sendPeer, MemorySegment src, long srcOffset, long srcLength, int recvPeer,
                          MemorySegment dst, long dstOffset, long dstLength, Combiner combiner, int unit) {
        checkUsable();
        requireReachable(sendPeer);
        requireReachable(recvPeer);
        Objects.checkFromIndexSize(srcOffset, srcLength, src.byteSize());
        Objects.checkFromIndexSize(dstOffset, dstLength, dst.byteSize());
        setUpReceive(recvPeer);
        out.begin(sendPeer, src, srcOffset, srcLength);
        in.begin(recvPeer, dst, dstOffset, dstLength, combiner, unit);
        progress();
    }

    /** Sets the ring from {@code peer} up on the first message from it; a failure (no room) is the transport's. */
    private void setUpReceive(int peer) {
        try {
            rings.receiveFrom(peer);
        } catch (KoloException e) {
            throw fail(e);
        }
    }

    /** Pushes what fits and pulls what has arrived until both transfers are done. */
    private void progress() {
        backoff.reset();
        boolean sleeping = false;
        long nextPidCheck = 0;
        boolean completed = false;
        try {
            while (out.active() || in.active()) {
                if (step()) {
                    backoff.reset();
                    if (sleeping) {
                        sleeping = false;
                        stalled.clear();
                    }
                    continue;
                }
                checkUsable();
                if (backoff.idle()) {
                    continue;
                }
                long now = System.nanoTime();
                if (!sleeping) {
                    sleeping = true;
                    nextPidCheck = backoff.idleSince() + PID_CHECK_NANOS;
                    showStall(backoff.idleSince());
                }
                boolean checkPid = now - nextPidCheck >= 0;
                if (checkPid) {
                    nextPidCheck = now + PID_CHECK_NANOS;
                }
                checkPeers(checkPid);
                if (now - backoff.idleSince() >= timeoutNanos) {
                    throw fail(timedOut());
                }
                doorbell.sleep(canProgress);
            }
            completed = true;
        } catch (IllegalStateException e) {
            // The arena was closed under us by close() on another thread.
            RuntimeException first = failure.get();
            throw first != null ? first : fail(new KoloException("rank " + rank + ": shared memory unmapped", e));
        } finally {
            stalled.clear();
            out.end(completed);
            in.end();
        }
    }

    /** What {@link #stalledOn()} reads: the receive when it is pending (its peer sent nothing), else the send. */
    private void showStall(long since) {
        if (in.active()) {
            stalled.show(in.peer(), true, in.total(), in.total() - in.left(), since);
        } else {
            stalled.show(out.peer(), false, out.total(), out.total() - out.left(), since);
        }
    }

    @Override
    public PeerWait stalledOn() {
        return stalled.read(rank);
    }

    /** One attempt in each direction; true if any byte moved. */
    private boolean step() {
        boolean moved = out.step();
        return in.step() || moved;
    }

    private void checkPeers(boolean checkPid) {
        if (out.active()) {
            checkPeer(out.peer(), checkPid);
        }
        if (in.active() && (!out.active() || in.peer() != out.peer())) {
            checkPeer(in.peer(), checkPid);
        }
    }

    private void checkPeer(int peer, boolean checkPid) {
        PeerFailedException gone = peers.gone(peer, checkPid, false);
        if (gone != null && !step()) {
            // Bytes it wrote before leaving were taken by the step above; only now is the loss certain.
            throw fail(gone);
        }
    }

    private KoloTimeoutException timedOut() {
        String sending = out.waitingFor();
        String receiving = in.waitingFor();
        String what = sending.isEmpty() ? receiving : receiving.isEmpty() ? sending : sending + " and " + receiving;
        return new PeerTimeoutException("rank " + rank + " timed out after "
                + io.kolo.bootstrap.Durations.describe(timeout) + " waiting " + what + " over shared memory; raise"
                + " KOLO_TIMEOUT_SECONDS if ranks legitimately wait this long", stalled.read(rank));
    }

    /** Records the first failure and tells the host's ranks through this inbox's state; returns the first failure. */
    private RuntimeException fail(RuntimeException cause) {
        failure.compareAndSet(null, cause);
        own.setState(ShmFile.ABORTED);
        doorbell.wakeEveryone();
        return failure.get();
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
            if (p != rank && rings.reaches(p)) {
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
        if (!arena.scope().isAlive()) {
            // Closed already (a rank that dropped its connections, then left its job): nothing is mapped any more.
            return;
        }
        failure.compareAndSet(null, new KoloException("rank " + rank + ": the shared-memory transport is closed"));
        own.setState(ShmFile.CLOSED);
        doorbell.wakeEveryone();
        own.close();
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
