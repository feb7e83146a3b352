package io.kolo.collective;

import io.kolo.BFloat16;
import io.kolo.DataType;
import io.kolo.Float16;
import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Adasum (adaptive summation, as Horovod's {@code hvd.Adasum}): two gradients a and b combine as
 * {@code (1 - a·b / (2|a|²)) a + (1 - a·b / (2|b|²)) b}: orthogonal ones add up, parallel ones average, so a large
 * batch needs no retuned learning rate. Across ranks the combination is applied pairwise as a tree: recursive doubling,
 * each step exchanging whole vectors with the partner and combining them.
 *
 * <p>Every rank ends with bit-identical values: both partners of a step compute the same expression with the same
 * operands in the same order, the lower rank's vector as a. Dot products and norms are summed in double precision; a
 * zero vector contributes nothing (its coefficient is taken as 1, so {@code combine(0, b) = b}, never NaN).
 *
 * <p>Any number of ranks: with {@code n} ranks and {@code 2^k} the largest power of two not above it, the first
 * {@code 2(n - 2^k)} ranks combine in pairs first (rank 2i's vector as a, rank 2i+1's as b; the odd rank takes part in
 * the tree, the even one waits), the {@code 2^k} remaining vectors go through the tree, and the odd ranks then send
 * the result to their even partners. This is the standard remainder step of recursive doubling; it weights the
 * paired ranks' gradients as one tree leaf, as Horovod's hierarchical Adasum weights a host's summed gradients.
 */
final class Adasum {
    private final Transport transport;
    private final Scratch scratch;
    private final int rank;
    private final int size;

    Adasum(Transport transport, Scratch scratch) {
        this.transport = transport;
        this.scratch = scratch;
        this.rank = transport.rank();
        this.size = transport.size();
    }

    /** In place: {@code count} elements of {@code type} at the start of {@code buf} become the Adasum of all ranks. */
    void allreduce(MemorySegment buf, long count, DataType type) {
        if (size == 1 || count == 0) {
            return;
        }
        long bytes = count * type.byteSize();
        MemorySegment other = scratch.get(bytes);
        int pow2 = Integer.highestOneBit(size);
        int extra = size - pow2;
        int virtual;
        if (rank < 2 * extra) {
            if (rank % 2 == 0) {
                // Paired out: hand the vector to the odd partner, which stands for both, and wait for the result.
                transport.send(rank + 1, buf, 0, bytes);
                transport.recv(rank + 1, buf, 0, bytes);
                return;
            }
            transport.recv(rank - 1, other, 0, bytes);
            combine(other, buf, buf, count, type);
            virtual = rank / 2;
        } else {
            virtual = rank - extra;
        }
        for (int mask = 1; mask < pow2; mask <<= 1) {
            int partnerVirtual = virtual ^ mask;
            int partner = partnerVirtual < extra ? 2 * partnerVirtual + 1 : partnerVirtual + extra;
            transport.sendRecv(partner, buf, 0, bytes, partner, other, 0, bytes);
            if (partner < rank) {
                combine(other, buf, buf, count, type);
            } else {
                combine(buf, other, buf, count, type);
            }
        }
        if (rank < 2 * extra) {
            transport.send(rank - 1, buf, 0, bytes);
        }
    }

    /** {@code out = ca * a + cb * b}, element by element; {@code out} may be {@code a} or {@code b}. */
    static void combine(MemorySegment a, MemorySegment b, MemorySegment out, long count, DataType type) {
        double dot = 0;
        double aa = 0;
        double bb = 0;
        for (long i = 0; i < count; i++) {
            double x = get(a, i, type);
            double y = get(b, i, type);
            dot += x * y;
            aa += x * x;
            bb += y * y;
        }
        double ca = aa == 0 ? 1 : 1 - dot / (2 * aa);
        double cb = bb == 0 ? 1 : 1 - dot / (2 * bb);
        for (long i = 0; i < count; i++) {
            set(out, i, type, ca * get(a, i, type) + cb * get(b, i, type));
        }
    }

    private static double get(MemorySegment s, long i, DataType type) {
        return switch (type) {
            case FLOAT32 -> s.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            case FLOAT64 -> s.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
            case FLOAT16 -> Float16.toFloat(s.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            case BFLOAT16 -> BFloat16.toFloat(s.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            default -> throw new IllegalArgumentException("Adasum combines floating-point tensors, not " + type);
        };
    }

    private static void set(MemorySegment s, long i, DataType type, double v) {
        switch (type) {
            case FLOAT32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) v);
            case FLOAT64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, v);
            case FLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float16.fromFloat((float) v));
            case BFLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, BFloat16.fromFloat((float) v));
            default -> throw new IllegalArgumentException("Adasum combines floating-point tensors, not " + type);
        }
    }
}
