package io.kolo.djl;

import ai.djl.training.tracker.Tracker;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DistributedSamplerTest {

    private static List<long[]> shards(int size, long n, int epoch, DistributedSampler.Tail tail) {
        List<long[]> out = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            out.add(new DistributedSampler(r, size, 4, true, 11, tail).indices(n, epoch));
        }
        return out;
    }

    @Test
    void paddedShardsAreEqualAndCoverEverySampleOnce() {
        List<long[]> shards = shards(3, 100, 0, DistributedSampler.Tail.PAD);
        Set<Long> seen = new HashSet<>();
        int total = 0;
        for (long[] s : shards) {
            assertEquals(34, s.length);
            total += s.length;
            for (long i : s) {
                seen.add(i);
            }
        }
        assertEquals(102, total);
        assertEquals(100, seen.size(), "every sample appears; two are repeated to even the shards out");
    }

    @Test
    void droppedAndUnevenTails() {
        for (long[] s : shards(3, 100, 0, DistributedSampler.Tail.DROP)) {
            assertEquals(33, s.length);
        }
        List<long[]> uneven = shards(3, 100, 0, DistributedSampler.Tail.UNEVEN);
        assertEquals(List.of(34, 33, 33), uneven.stream().map(s -> s.length).toList());
        Set<Long> seen = new HashSet<>();
        uneven.forEach(s -> Arrays.stream(s).forEach(seen::add));
        assertEquals(100, seen.size());
    }

    @Test
    void everyEpochIsADifferentPermutationTheSameOnEveryRank() {
        long[] epoch0 = shards(2, 50, 0, DistributedSampler.Tail.PAD).getFirst();
        long[] again = shards(2, 50, 0, DistributedSampler.Tail.PAD).getFirst();
        long[] epoch1 = shards(2, 50, 1, DistributedSampler.Tail.PAD).getFirst();
        assertArrayEquals(epoch0, again);
        assertFalse(Arrays.equals(epoch0, epoch1));
        long[] sorted = new DistributedSampler(1, 2, 4, false, 11, DistributedSampler.Tail.PAD).indices(7, 0);
        assertArrayEquals(new long[]{1, 3, 5, 0}, sorted, "unshuffled: rank 1 takes every other index, padded");
    }

    @Test
    void badArgumentsNameTheProblem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DistributedSampler(2, 2, 4, true, 0, DistributedSampler.Tail.PAD));
        assertEquals("rank 2 is not in a job of 2 ranks", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new DistributedSampler(0, 2, 4, true, 0, DistributedSampler.Tail.PAD).indices(0, 0));
        assertTrue(e.getMessage().contains("the dataset is empty"), e.getMessage());
    }

    @Test
    void learningRateGrowsLinearlyToSizeTimesTheBase() {
        ScaledLearningRate lr = new ScaledLearningRate(Tracker.fixed(0.1f), 4, 10);
        assertEquals(0.1f, lr.getNewValue(0), 1e-7);
        assertEquals(0.25f, lr.getNewValue(5), 1e-6);
        assertEquals(0.4f, lr.getNewValue(10), 1e-6);
        assertEquals(0.4f, lr.getNewValue(1000), 1e-6);
        assertEquals(0.4f, new ScaledLearningRate(Tracker.fixed(0.1f), 4, 0).getNewValue(0), 1e-6);
    }
}
