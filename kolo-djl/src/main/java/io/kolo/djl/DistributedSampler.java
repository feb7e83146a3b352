package io.kolo.djl;

import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Sampler;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Shards any DJL {@link RandomAccessDataset} across ranks: each rank sees a disjoint part of every epoch, in
 * mini-batches. Plug it in with {@code builder.setSampling(new DistributedSampler(...))}.
 *
 * <p>With shuffling, every epoch is a fresh permutation drawn from {@code seed + epoch}, the same on every
 * rank, so the shards stay disjoint. The epoch advances by one at each {@link #sample} call (each pass over
 * the dataset), or is set with {@link #setEpoch}.
 *
 * <p>{@link Tail#PAD} (default) gives every rank the same number of samples by repeating the first ones of
 * the permutation, so all ranks run the same number of steps; {@link Tail#DROP} drops the remainder instead;
 * {@link Tail#UNEVEN} keeps each sample exactly once and leaves ranks with different batch counts, for loops
 * that end with {@link DistributedTrainer#join()}.
 */
public final class DistributedSampler implements Sampler {
    /** What to do with the samples that do not divide evenly among the ranks. */
    public enum Tail { PAD, DROP, UNEVEN }

    private final int rank;
    private final int size;
    private final int batchSize;
    private final boolean shuffle;
    private final long seed;
    private final Tail tail;
    private int epoch;

    /** Shuffled, padded shards for the rank and size of {@link io.kolo.Kolo}. */
    public DistributedSampler(int batchSize, boolean shuffle, long seed) {
        this(io.kolo.Kolo.rank(), io.kolo.Kolo.size(), batchSize, shuffle, seed, Tail.PAD);
    }

    public DistributedSampler(int rank, int size, int batchSize, boolean shuffle, long seed, Tail tail) {
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " is not in a job of " + size + " ranks");
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be >= 1, not " + batchSize);
        }
        this.rank = rank;
        this.size = size;
        this.batchSize = batchSize;
        this.shuffle = shuffle;
        this.seed = seed;
        this.tail = java.util.Objects.requireNonNull(tail, "tail");
    }

    public void setEpoch(int epoch) {
        this.epoch = epoch;
    }

    public int epoch() {
        return epoch;
    }

    @Override
    public int getBatchSize() {
        return batchSize;
    }

    /** This rank's indices for the current epoch, then advances the epoch. */
    @Override
    public Iterator<List<Long>> sample(RandomAccessDataset dataset) {
        long[] mine = indices(dataset.size(), epoch++);
        List<List<Long>> batches = new ArrayList<>();
        for (int start = 0; start < mine.length; start += batchSize) {
            List<Long> batch = new ArrayList<>(batchSize);
            for (int i = start; i < Math.min(mine.length, start + batchSize); i++) {
                batch.add(mine[i]);
            }
            batches.add(batch);
        }
        return batches.iterator();
    }

    /** The dataset indices this rank gets in {@code epoch}, in order. */
    long[] indices(long datasetSize, int epoch) {
        int n = Math.toIntExact(datasetSize);
        if (n < 1) {
            throw new IllegalArgumentException("the dataset is empty: nothing to shard across " + size + " ranks");
        }
        if (n < size && tail != Tail.PAD) {
            throw new IllegalArgumentException("a dataset of " + n + " samples cannot be split across " + size
                    + " ranks");
        }
        long[] order = new long[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        if (shuffle) {
            SplittableRandom random = new SplittableRandom(seed + epoch);
            for (int i = n - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                long t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        int per = switch (tail) {
            case PAD -> Math.ceilDiv(n, size);
            case DROP -> n / size;
            case UNEVEN -> (n - rank + size - 1) / size;
        };
        long[] mine = new long[per];
        for (int k = 0; k < per; k++) {
            mine[k] = order[(rank + k * size) % n];
        }
        return mine;
    }
}
