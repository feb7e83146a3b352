package io.kolo.djl;

import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.RandomAccessDataset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link DistributedSampler} resuming an epoch at a commit with another number of ranks: one epoch is trained by a
 * sequence of jobs, each of a different size, each stopped some steps after its last commit (the steps a failure
 * rolls back); only the committed steps count as trained. Union of the trained samples == the dataset, no duplicates.
 */
class ElasticSamplerTest {
    private static NDManager manager;

    @BeforeAll
    static void engine() {
        KoloDjl.configureEngine(1);
        manager = NDManager.newBaseManager();
    }

    @AfterAll
    static void close() {
        manager.close();
    }

    /** One job of an elastic run: {@code size} ranks, {@code committedSteps} steps to the commit, then more lost. */
    private record Job(int size, int committedSteps, int lostSteps) {
    }

    private static RandomAccessDataset dataset(int n) {
        return new ArrayDataset.Builder().setData(manager.zeros(new ai.djl.ndarray.types.Shape(n, 1)))
                .setSampling(1, false).build();
    }

    /**
     * Trains epoch {@code epoch} of {@code n} samples through {@code jobs} (the last job runs to the end of the
     * epoch) as ranks with their own samplers would, and returns how often each sample was trained in committed steps.
     */
    private static Map<Long, Integer> trainEpoch(int n, int batch, DistributedSampler.Tail tail, int epoch,
                                                 List<Job> jobs) {
        RandomAccessDataset data = dataset(n);
        Map<Long, Integer> trained = new HashMap<>();
        long consumed = 0;
        for (int j = 0; j < jobs.size(); j++) {
            Job job = jobs.get(j);
            boolean last = j == jobs.size() - 1;
            List<Iterator<List<Long>>> ranks = new ArrayList<>();
            DistributedSampler first = null;
            for (int r = 0; r < job.size(); r++) {
                // Every rank's sampler has been somewhere else before: another rank, size, epoch.
                DistributedSampler s = new DistributedSampler(0, 1, batch, true, 5, tail);
                s.resume(epoch + 7, 3);
                s.reshard(r, job.size());
                s.resume(epoch, consumed);
                ranks.add(s.sample(data));
                first = first == null ? s : first;
            }
            int steps = 0;
            while (ranks.stream().anyMatch(Iterator::hasNext) && (last || steps < job.committedSteps() + job.lostSteps())) {
                for (Iterator<List<Long>> rank : ranks) {
                    if (rank.hasNext()) {
                        List<Long> b = rank.next();
                        if (last || steps < job.committedSteps()) {
                            b.forEach(i -> trained.merge(i, 1, Integer::sum));
                        }
                    }
                }
                steps++;
            }
            if (!last) {
                assertTrue(steps >= job.committedSteps(), "job " + j + " ended before its commit: " + jobs);
                consumed = first.consumedAfter(consumed, job.committedSteps());
            }
        }
        return trained;
    }

    private static void assertEachSampleOnce(int n, Map<Long, Integer> trained, String what) {
        for (long i = 0; i < n; i++) {
            assertEquals(1, trained.getOrDefault(i, 0), "sample " + i + " in " + what);
        }
        assertEquals(n, trained.size(), what);
    }

    @Test
    void threeRanksToTwoTrainEverySampleOnce() {
        List<Job> jobs = List.of(new Job(3, 5, 2), new Job(2, 0, 0));
        for (int n : new int[]{100, 101, 103, 97}) {
            for (int epoch = 0; epoch < 3; epoch++) {
                assertEachSampleOnce(n, trainEpoch(n, 4, DistributedSampler.Tail.UNEVEN, epoch, jobs),
                        "n=" + n + " epoch " + epoch + " " + jobs);
            }
        }
    }

    @Test
    void twoRanksToThreeTrainEverySampleOnce() {
        List<Job> jobs = List.of(new Job(2, 7, 3), new Job(3, 0, 0));
        for (int n : new int[]{100, 101, 89}) {
            assertEachSampleOnce(n, trainEpoch(n, 5, DistributedSampler.Tail.UNEVEN, 1, jobs), "n=" + n + " " + jobs);
        }
    }

    @Test
    void fourRanksToOneTrainEverySampleOnce() {
        List<Job> jobs = List.of(new Job(4, 3, 1), new Job(1, 0, 0));
        for (int n : new int[]{100, 99, 61}) {
            assertEachSampleOnce(n, trainEpoch(n, 3, DistributedSampler.Tail.UNEVEN, 0, jobs), "n=" + n + " " + jobs);
        }
    }

    @Test
    void severalResetsInOneEpochTrainEverySampleOnce() {
        // 3 -> 2 -> 3 -> 4 -> 1, with commits at different batches and work lost after each.
        List<Job> jobs = List.of(new Job(3, 4, 2), new Job(2, 3, 1), new Job(3, 2, 0), new Job(4, 1, 3),
                new Job(1, 0, 0));
        for (int n : new int[]{200, 211, 199}) {
            assertEachSampleOnce(n, trainEpoch(n, 4, DistributedSampler.Tail.UNEVEN, 2, jobs), "n=" + n + " " + jobs);
        }
    }

    @Test
    void aCommitAtTheEpochsLastBatchLeavesNothingToResume() {
        // 3 ranks x batch 4 cover 12 samples per step: 9 steps are the whole of 100 (the last one short).
        Map<Long, Integer> trained = trainEpoch(100, 4, DistributedSampler.Tail.UNEVEN, 0,
                List.of(new Job(3, 9, 0), new Job(2, 0, 0)));
        assertEachSampleOnce(100, trained, "committed at the end");
        DistributedSampler s = new DistributedSampler(0, 2, 4, true, 5, DistributedSampler.Tail.PAD);
        s.resume(0, 100);
        assertEquals(0, s.indices(100, 0, 100).length);
    }

    @Test
    void paddedShardsRepeatOnlyInTheEpochsLastStepAndFewerThanTheRanks() {
        // PAD evens out the last job's shards by repeating a few of its remaining samples; nothing else repeats.
        for (List<Job> jobs : List.of(List.of(new Job(3, 5, 2), new Job(2, 0, 0)),
                List.of(new Job(2, 6, 1), new Job(3, 0, 0)), List.of(new Job(4, 3, 2), new Job(1, 0, 0)))) {
            for (int n : new int[]{100, 101, 103}) {
                Map<Long, Integer> trained = trainEpoch(n, 4, DistributedSampler.Tail.PAD, 0, jobs);
                assertEquals(n, trained.size(), "every sample trained: n=" + n + " " + jobs);
                int repeats = trained.values().stream().mapToInt(c -> c - 1).sum();
                int lastSize = jobs.getLast().size();
                assertTrue(repeats < lastSize && trained.values().stream().allMatch(c -> c <= 2),
                        repeats + " repeats for n=" + n + " " + jobs);
            }
        }
    }

    @Test
    void withoutAResetTheShardsAreTheOnesBefore() {
        // Resuming at 0 is the plain epoch: rank r takes every size-th sample of the permutation from r.
        DistributedSampler plain = new DistributedSampler(1, 3, 4, false, 5, DistributedSampler.Tail.PAD);
        assertEquals(List.of(1L, 4L, 7L, 0L), java.util.Arrays.stream(plain.indices(10, 0)).boxed().toList());
        // Resuming after 4 samples: the remaining 6 (4..9) dealt among 3 ranks.
        assertEquals(List.of(5L, 8L), java.util.Arrays.stream(plain.indices(10, 0, 4)).boxed().toList());
    }

    @Test
    void consumedAfterCountsWholeStepsOfEveryRankAndStopsAtTheEpochsEnd() {
        DistributedSampler s = new DistributedSampler(0, 3, 4, true, 5, DistributedSampler.Tail.PAD);
        s.sample(dataset(50));
        assertEquals(12, s.consumedAfter(0, 1));
        assertEquals(48, s.consumedAfter(12, 3));
        assertEquals(50, s.consumedAfter(48, 1));
        s.reshard(1, 2);
        assertEquals(26, s.consumedAfter(18, 1));
    }
}
