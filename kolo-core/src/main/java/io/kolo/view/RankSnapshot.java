package io.kolo.view;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * What one rank tells the job's view, as of {@link #timeMillis}: who it is, what its engine has done, and the newest
 * points its program reported. Each rank's reporter writes one to the store key {@code StoreKeys.view(rank)} every
 * {@code KOLO_VIEW_INTERVAL_MS}; the view holder reads them back with {@link #decode}.
 *
 * <p>The coordinator's figures ({@link #latenessNanos}, {@link #lastCounts}, {@link #stalls}) are only in rank 0's
 * snapshot: only the coordinator sees every rank's requests arrive. Elsewhere they are empty.
 *
 * @param rank             this rank
 * @param size             the job's number of ranks
 * @param host             the host this rank runs on
 * @param pid              this rank's process id
 * @param generation       the elastic generation (0 in a static job)
 * @param timeMillis       wall clock of the snapshot
 * @param ops              collective ops completed
 * @param collectiveNanos  wall time with at least one op in flight (submit to done), never more than the time since start
 * @param bytes            payload bytes this rank contributed or moved
 * @param lastOp           name (or kind) of the last op completed, "" before the first
 * @param lastOpEndMillis  wall clock when it completed, 0 before the first
 * @param latenessNanos    rank 0 only, per rank: how long the others waited for it in total (the first request of an op
 *                         to its request, when it was the last to submit)
 * @param lastCounts       rank 0 only, per rank: the number of ops it was last to submit
 * @param stalls           rank 0 only: the stall inspector's current view
 * @param resets           elastic resets this rank has been through
 * @param points           the newest (at most {@link #MAX_POINTS}) metric points its program reported, oldest first
 */
public record RankSnapshot(int rank, int size, String host, long pid, int generation, long timeMillis, long ops,
                           long collectiveNanos, long bytes, String lastOp, long lastOpEndMillis, long[] latenessNanos,
                           long[] lastCounts, List<Stall> stalls, int resets, List<Point> points) {
    /** The most points one snapshot carries: the reporter keeps the newest this many. */
    public static final int MAX_POINTS = 256;

    /** The format {@link #encode} writes; {@link #decode} refuses any other, naming both. */
    static final int VERSION = 1;
    private static final int MAGIC = 0x4B4F5653;   // "KOVS"

    /**
     * An op some ranks submitted and others have not, as rank 0's stall inspector sees it.
     *
     * @param op           the op's name
     * @param missingRanks the ranks that have not submitted it
     * @param seconds      how long it has waited
     */
    public record Stall(String op, int[] missingRanks, double seconds) {
        public Stall {
            op = op == null ? "" : op;
            missingRanks = missingRanks == null ? new int[0] : missingRanks;
        }
    }

    /**
     * One value a program reported with {@code Kolo.report}.
     *
     * @param seq        increases by one per point a rank reports, so a reader polling snapshots drops the points it
     *                   has seen
     * @param name       the metric's name
     * @param value      its value
     * @param step       the training step the program gave, -1 when it gave none
     * @param timeMillis wall clock when it was reported
     */
    public record Point(long seq, String name, double value, long step, long timeMillis) {
        public Point {
            name = name == null ? "" : name;
        }
    }

    public RankSnapshot {
        host = host == null ? "" : host;
        lastOp = lastOp == null ? "" : lastOp;
        latenessNanos = latenessNanos == null ? new long[0] : latenessNanos;
        lastCounts = lastCounts == null ? new long[0] : lastCounts;
        stalls = stalls == null ? List.of() : List.copyOf(stalls);
        points = points == null ? List.of() : List.copyOf(points);
    }

    /** The snapshot in the compact, versioned binary form {@link #decode} reads. */
    public byte[] encode() {
        ByteArrayOutputStream bytesOut = new ByteArrayOutputStream(256 + points.size() * 40);
        try (DataOutputStream out = new DataOutputStream(bytesOut)) {
            out.writeInt(MAGIC);
            out.writeByte(VERSION);
            out.writeInt(rank);
            out.writeInt(size);
            out.writeUTF(host);
            out.writeLong(pid);
            out.writeInt(generation);
            out.writeLong(timeMillis);
            out.writeLong(ops);
            out.writeLong(collectiveNanos);
            out.writeLong(bytes);
            out.writeUTF(lastOp);
            out.writeLong(lastOpEndMillis);
            writeLongs(out, latenessNanos);
            writeLongs(out, lastCounts);
            out.writeInt(stalls.size());
            for (Stall s : stalls) {
                out.writeUTF(s.op());
                out.writeInt(s.missingRanks().length);
                for (int r : s.missingRanks()) {
                    out.writeInt(r);
                }
                out.writeDouble(s.seconds());
            }
            out.writeInt(resets);
            // A name repeats in most points: each is written once, the points refer to it by index.
            List<String> names = new ArrayList<>();
            int[] nameIndex = new int[points.size()];
            for (int i = 0; i < points.size(); i++) {
                String name = points.get(i).name();
                int at = names.indexOf(name);
                if (at < 0) {
                    at = names.size();
                    names.add(name);
                }
                nameIndex[i] = at;
            }
            out.writeInt(names.size());
            for (String n : names) {
                out.writeUTF(n);
            }
            out.writeInt(points.size());
            for (int i = 0; i < points.size(); i++) {
                Point p = points.get(i);
                out.writeLong(p.seq());
                out.writeInt(nameIndex[i]);
                out.writeDouble(p.value());
                out.writeLong(p.step());
                out.writeLong(p.timeMillis());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);   // a byte array does not fail
        }
        return bytesOut.toByteArray();
    }

    /** The snapshot as the job's store holds it (its values are text): {@link #encode}'s bytes in Base64. */
    public String toStoreValue() {
        return Base64.getEncoder().encodeToString(encode());
    }

    /**
     * Reads a store value {@link #toStoreValue} wrote.
     *
     * @throws IllegalArgumentException when {@code value} is not one
     */
    public static RankSnapshot fromStoreValue(String value) {
        return decode(Base64.getDecoder().decode(value));
    }

    /**
     * Reads what {@link #encode} wrote.
     *
     * @throws IllegalArgumentException when {@code data} is not a snapshot, is cut short, or is of another version
     */
    public static RankSnapshot decode(byte[] data) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
            if (data.length < 5 || in.readInt() != MAGIC) {
                throw new IllegalArgumentException("not a Kolo rank snapshot (" + data.length + " bytes)");
            }
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException("rank snapshot of format version " + version
                        + "; this Kolo reads version " + VERSION + " (ranks and view from different Kolo versions?)");
            }
            int rank = in.readInt();
            int size = in.readInt();
            String host = in.readUTF();
            long pid = in.readLong();
            int generation = in.readInt();
            long timeMillis = in.readLong();
            long ops = in.readLong();
            long collectiveNanos = in.readLong();
            long bytes = in.readLong();
            String lastOp = in.readUTF();
            long lastOpEndMillis = in.readLong();
            long[] lateness = readLongs(in, data.length);
            long[] lastCounts = readLongs(in, data.length);
            int stallCount = count(in, data.length);
            List<Stall> stalls = new ArrayList<>(stallCount);
            for (int i = 0; i < stallCount; i++) {
                String op = in.readUTF();
                int[] missing = new int[count(in, data.length)];
                for (int j = 0; j < missing.length; j++) {
                    missing[j] = in.readInt();
                }
                stalls.add(new Stall(op, missing, in.readDouble()));
            }
            int resets = in.readInt();
            String[] names = new String[count(in, data.length)];
            for (int i = 0; i < names.length; i++) {
                names[i] = in.readUTF();
            }
            int pointCount = count(in, data.length);
            List<Point> points = new ArrayList<>(pointCount);
            for (int i = 0; i < pointCount; i++) {
                long seq = in.readLong();
                int name = in.readInt();
                if (name < 0 || name >= names.length) {
                    throw new IllegalArgumentException("rank snapshot names metric " + name + " of " + names.length);
                }
                points.add(new Point(seq, names[name], in.readDouble(), in.readLong(), in.readLong()));
            }
            return new RankSnapshot(rank, size, host, pid, generation, timeMillis, ops, collectiveNanos, bytes, lastOp,
                    lastOpEndMillis, lateness, lastCounts, stalls, resets, points);
        } catch (IOException e) {
            throw new IllegalArgumentException("rank snapshot cut short (" + data.length + " bytes)", e);
        }
    }

    private static void writeLongs(DataOutputStream out, long[] values) throws IOException {
        out.writeInt(values.length);
        for (long v : values) {
            out.writeLong(v);
        }
    }

    private static long[] readLongs(DataInputStream in, int limit) throws IOException {
        long[] values = new long[count(in, limit)];
        for (int i = 0; i < values.length; i++) {
            values[i] = in.readLong();
        }
        return values;
    }

    /** A count that cannot exceed the bytes there are, so a corrupt one is an error, not a huge allocation. */
    private static int count(DataInputStream in, int limit) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > limit) {
            throw new IllegalArgumentException("rank snapshot holds a count of " + n + " in " + limit + " bytes");
        }
        return n;
    }
}
