package io.kolo.transport;

import io.kolo.KoloException;
import io.kolo.bootstrap.LazyLogger;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;

/**
 * One rank's shared-memory inbox: a file under {@code /dev/shm} holding a header and room for one {@link ShmRing} per
 * rank of the host (ring {@code i} carries bytes from the host's {@code i}-th other rank to the owner).
 *
 * <p>The file is created by its owner with mode 0600 and named {@code kolo-<job>-<rank>-<pid>}, so a later run can
 * tell whose it was and whether that process still lives ({@link #removeStale}). Only its header takes memory at
 * creation; the rest is a hole until the owner adds a ring ({@link #addRing}), the first time it receives from that
 * rank, so that a host's ranks hold rings only for the pairs that exchange (a ring allreduce: one per rank) rather
 * than for every pair. A ring's pages are written through the file, never first touched through a mapping: tmpfs
 * allocates lazily, and touching a page of a full tmpfs through a mapping kills the JVM with SIGBUS, whereas a write
 * reports "no space left" as an ordinary exception we can explain. The owner then marks the ring ready in its header,
 * and only then may the sending rank touch it.
 *
 * <p>Header: magic, owner pid, owner rank, ring count, ring capacity, (on its own cache line) the owner's state
 * ({@link #RUNNING}, {@link #CLOSED}, {@link #ABORTED}), which peers poll while they wait, and one byte per ring
 * saying whether it is ready.
 */
final class ShmFile {
    private static final System.Logger LOG = LazyLogger.of(ShmFile.class);
    static final String PREFIX = "kolo-";
    static final int RUNNING = 0;
    static final int CLOSED = 1;
    static final int ABORTED = 2;
    /** "KOLOSHM2": the second layout (rings with slot keys); a rank of another layout refuses the file. */
    private static final long MAGIC = 0x4b4f4c4f53484d32L;
    private static final long HEADER_BYTES = 4096;
    private static final long OFF_MAGIC = 0;
    private static final long OFF_PID = 8;
    private static final long OFF_RANK = 16;
    private static final long OFF_RINGS = 20;
    private static final long OFF_CAPACITY = 24;
    private static final long OFF_STATE = 64;
    /** Doorbell: bumped by any rank that gives the owner something to do (data, ring space, a state change). */
    private static final long OFF_BELL = 128;
    /** How many of the owner's threads sleep on the doorbell; wakers skip the system call when none do. */
    private static final long OFF_SLEEPERS = 192;
    /** One byte per ring, non-zero once the owner has added it: the sender's go-ahead to map and use it. */
    private static final long OFF_READY = 256;
    /** The most rings a header has flags for: the most ranks one host may run, less one. */
    static final int MAX_RINGS = (int) (HEADER_BYTES - OFF_READY);
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final Path path;
    private final MemorySegment segment;
    private final MemorySegment bellWord;
    private final int rings;
    private final long capacity;
    /** The owner's handle on its own file, through which it adds rings; null for a peer's file. */
    private final FileChannel channel;

    private ShmFile(Path path, MemorySegment segment, int rings, long capacity, FileChannel channel) {
        this.path = path;
        this.segment = segment;
        this.bellWord = segment.asSlice(OFF_BELL, 4);
        this.rings = rings;
        this.capacity = capacity;
        this.channel = channel;
    }

    /** Data bytes of each of this file's rings. */
    long ringBytes() {
        return capacity;
    }

    static long fileBytes(int rings, long capacity) {
        return HEADER_BYTES + rings * ShmRing.bytes(capacity);
    }

    static String name(String job, int rank, long pid) {
        return PREFIX + job + "-" + rank + "-" + pid;
    }

    /**
     * Creates and maps this rank's inbox with room for {@code rings} rings, none of them added yet; the caller
     * publishes {@link #path()}, later {@link #unlink}s it, and {@link #close}s it with the transport.
     */
    static ShmFile create(Path dir, String job, int rank, int rings, long capacity, Arena arena) {
        if (rings > MAX_RINGS) {
            throw new KoloException("rank " + rank + ": " + (rings + 1) + " ranks on one host share memory, at most "
                    + (MAX_RINGS + 1) + " can; run fewer ranks per host or set KOLO_TRANSPORT=tcp");
        }
        long pid = ProcessHandle.current().pid();
        Path path = dir.resolve(name(job, rank, pid));
        long bytes = fileBytes(rings, capacity);
        boolean ok = false;
        FileChannel ch = null;
        try {
            ch = FileChannel.open(path, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rw-------")));
            writeZeros(ch, 0, HEADER_BYTES);
            // The rest stays a hole, which takes no memory: extending a file's length allocates nothing.
            try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(path.toFile(), "rw")) {
                file.setLength(bytes);
            }
            MemorySegment seg = map(ch, bytes, arena);
            LONG.set(seg, OFF_PID, pid);
            INT.set(seg, OFF_RANK, rank);
            INT.set(seg, OFF_RINGS, rings);
            LONG.set(seg, OFF_CAPACITY, capacity);
            INT.setRelease(seg, OFF_STATE, RUNNING);
            LONG.setRelease(seg, OFF_MAGIC, MAGIC);
            ok = true;
            return new ShmFile(path, seg, rings, capacity, ch);
        } catch (IOException e) {
            throw new KoloException("rank " + rank + " could not create its shared-memory segment " + path + ": " + e
                    + "; free space in " + dir + " (containers: raise --shm-size), or set KOLO_TRANSPORT=tcp", e);
        } finally {
            if (!ok) {
                closeQuietly(ch);
                deleteQuietly(path);
            }
        }
    }

    private static void writeZeros(FileChannel ch, long from, long bytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(bytes, 1 << 20));
        for (long at = from; at < from + bytes; ) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), from + bytes - at));
            at += ch.write(zeros, at);
        }
    }

    /**
     * Owner side, the first time it receives from the host's {@code index}-th other rank: gives that rank's ring
     * its memory, sets it up and marks it ready, so that the sender may map it ({@link #ringIfReady}). The file may
     * be unlinked by now; its channel still reaches it.
     *
     * @throws KoloException naming the space {@code /dev/shm} has and the space the ring needs, when it is full
     */
    ShmRing addRing(int index, int rank, int sender) {
        checkIndex(index);
        long offset = HEADER_BYTES + index * ShmRing.bytes(capacity);
        try {
            writeZeros(channel, offset, ShmRing.bytes(capacity));
        } catch (IOException e) {
            Path dir = path.getParent();
            String free;
            try {
                java.nio.file.FileStore store = Files.getFileStore(dir);
                free = (store.getUsableSpace() >> 10) + " KiB free of " + (store.getTotalSpace() >> 10) + " KiB";
            } catch (IOException unknown) {
                free = "an unknown amount free";
            }
            throw new KoloException("rank " + rank + " could not set up its shared-memory ring for messages from rank "
                    + sender + ": " + dir + " has " + free + ", the ring needs " + (ShmRing.bytes(capacity) >> 10)
                    + " KiB (" + e.getMessage() + "); raise its size (containers: --shm-size), lower"
                    + " KOLO_SHM_RING_BYTES, or set KOLO_TRANSPORT=tcp", e);
        }
        ShmRing.initialize(segment, offset, java.util.concurrent.ThreadLocalRandom.current().nextLong());
        BYTE.setRelease(segment, OFF_READY + index, (byte) 1);
        return ring(index);
    }

    /** Sender side: the ring the owner receives through from its {@code index}-th other rank, or null until added. */
    ShmRing ringIfReady(int index) {
        checkIndex(index);
        return (byte) BYTE.getAcquire(segment, OFF_READY + index) != 0 ? ring(index) : null;
    }

    /** Whether the owner has added ring {@code index} ({@link #addRing}). */
    boolean ringReady(int index) {
        return (byte) BYTE.getAcquire(segment, OFF_READY + index) != 0;
    }

    /** Owner side: lets go of the file's handle (the mapping stays until the arena closes). */
    void close() {
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "could not close a shared-memory segment's handle", e);
            }
        }
    }

    /** Maps a peer's inbox published at {@code path} and checks that it is what the peer said it is. */
    static ShmFile open(Path path, int expectedRank, int rings, long capacity, Arena arena, int rank) {
        long bytes = fileBytes(rings, capacity);
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() != bytes) {
                throw new KoloException("rank " + rank + ": shared-memory segment " + path + " of rank " + expectedRank
                        + " has " + ch.size() + " bytes, expected " + bytes + " (do all ranks use the same Kolo version"
                        + " and KOLO_SHM_RING_BYTES?)");
            }
            MemorySegment seg = map(ch, bytes, arena);
            ShmFile f = new ShmFile(path, seg, rings, capacity, null);
            if ((long) LONG.getAcquire(seg, OFF_MAGIC) != MAGIC || f.rank() != expectedRank
                    || (int) INT.get(seg, OFF_RINGS) != rings || (long) LONG.get(seg, OFF_CAPACITY) != capacity) {
                throw new KoloException("rank " + rank + ": shared-memory segment " + path + " is not rank "
                        + expectedRank + "'s inbox with " + rings + " rings of " + capacity + " bytes (do all ranks use"
                        + " the same Kolo version?)");
            }
            return f;
        } catch (IOException e) {
            throw new KoloException("rank " + rank + " could not map rank " + expectedRank + "'s shared-memory segment "
                    + path + ": " + e + " (are the ranks really on one host, sharing /dev/shm? else set"
                    + " KOLO_TRANSPORT=tcp)", e);
        }
    }

    /**
     * Maps the file and views it as plain native memory of the same arena. A mapped segment is a class of its own, so
     * the rings' copies would meet three or more segment classes (mapped, the buffers' native, arrays) in the JDK's
     * shared accessor code, where C2 then calls through virtual-dispatch stubs instead of inlining, a measurable share
     * of a small message's time in {@code kolo bench allreduce -np 2 --sizes 8B..4KiB}. Without native access for Kolo (viewing
     * memory anew is a restricted method) the mapped segment serves as it is.
     */
    // Sizes the mapping to the file, which this method made that long.
    @SuppressWarnings("restricted")
    private static MemorySegment map(FileChannel ch, long bytes, Arena arena) throws IOException {
        MemorySegment mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
        try {
            return mapped.reinterpret(bytes, arena, null);
        } catch (IllegalCallerException e) {
            return mapped;
        }
    }

    Path path() {
        return path;
    }

    long pid() {
        return (long) LONG.get(segment, OFF_PID);
    }

    int rank() {
        return (int) INT.get(segment, OFF_RANK);
    }

    private void checkIndex(int index) {
        if (index < 0 || index >= rings) {
            throw new IndexOutOfBoundsException("ring " + index + " of " + rings);
        }
    }

    private ShmRing ring(int index) {
        return new ShmRing(segment, HEADER_BYTES + index * ShmRing.bytes(capacity), capacity);
    }

    int state() {
        return (int) INT.getAcquire(segment, OFF_STATE);
    }

    /** Moves RUNNING to {@code state}; an ABORTED file stays aborted. */
    void setState(int state) {
        if (state() != ABORTED) {
            INT.setRelease(segment, OFF_STATE, state);
        }
    }

    /** Wakes the owner if it sleeps: call after every change the owner may be waiting for. */
    void ringBell() {
        INT.getAndAdd(segment, OFF_BELL, 1);
        if ((int) INT.getVolatile(segment, OFF_SLEEPERS) > 0 && Futex.AVAILABLE) {
            Futex.wakeAll(bellWord);
        }
    }

    /** Owner side: announce a sleeper (+1) before reading {@link #bell()} and re-checking, and retract it (-1) after. */
    void sleepers(int delta) {
        INT.getAndAdd(segment, OFF_SLEEPERS, delta);
    }

    int bell() {
        return (int) INT.getVolatile(segment, OFF_BELL);
    }

    MemorySegment bellWord() {
        return bellWord;
    }

    /** Removes the name; mappings stay valid until every process unmaps or exits. */
    void unlink() {
        deleteQuietly(path);
    }

    /**
     * Deletes this user's {@code kolo-*} segments whose creating process is gone (a job killed before it could unlink
     * them). Returns how many were removed.
     */
    static int removeStale(Path dir) {
        return remove(dir, null);
    }

    /** Deletes every segment of job {@code job} in {@code dir}, live or not: for the launcher once its job ended. */
    static int removeJob(Path dir, String job) {
        return remove(dir, PREFIX + job + "-");
    }

    private static int remove(Path dir, String jobPrefix) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        int removed = 0;
        UserPrincipal me = null;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*")) {
            for (Path p : files) {
                String name = p.getFileName().toString();
                boolean match;
                if (jobPrefix != null) {
                    match = name.startsWith(jobPrefix);
                } else {
                    long pid = pidOf(name);
                    match = pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) == false;
                }
                if (!match) {
                    continue;
                }
                try {
                    if (me == null) {
                        me = dir.getFileSystem().getUserPrincipalLookupService()
                                .lookupPrincipalByName(System.getProperty("user.name"));
                    }
                    if (!Files.getOwner(p).equals(me)) {
                        continue;
                    }
                    if (Files.deleteIfExists(p)) {
                        removed++;
                        LOG.log(System.Logger.Level.DEBUG, "removed stale shared-memory segment {0}", p);
                    }
                } catch (NoSuchFileException gone) {
                    // Its owner unlinked it meanwhile.
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "could not remove " + p, e);
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "could not list " + dir, e);
        }
        return removed;
    }

    /** The creator pid at the end of {@code kolo-<job>-<rank>-<pid>}, or -1. */
    static long pidOf(String name) {
        int dash = name.lastIndexOf('-');
        if (dash < 0 || dash == name.length() - 1) {
            return -1;
        }
        try {
            return Long.parseLong(name.substring(dash + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "could not remove " + p, e);
        }
    }
}
