package io.kolo.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import io.kolo.Communicator;
import io.kolo.Compression;
import io.kolo.ReduceOp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks as threads of this JVM (Communicator.local), each with its own DJL model and NDManager, training a
 * small MLP with real PyTorch and real Kolo allreduces.
 */
@Timeout(120)
class DistributedTrainerTest {
    private static final int FEATURES = 20;
    private static final int CLASSES = 3;
    private static final int SAMPLES = 96;
    private static final int STEPS = 4;
    // DJL's PyTorch engine allows one GradientCollector per JVM at a time; the rank threads take turns for
    // forward and backward, and run everything Kolo does (the allreduces) concurrently.
    private static final Object COLLECTOR = new Object();
    private static float[][] features;
    private static float[] labels;

    @BeforeAll
    static void setUp() {
        KoloDjl.configureEngine(1);
        Random random = new Random(7);
        features = new float[SAMPLES][FEATURES];
        labels = new float[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {
            for (int j = 0; j < FEATURES; j++) {
                features[i][j] = (float) random.nextGaussian();
            }
            labels[i] = random.nextInt(CLASSES);
        }
    }

    /** One rank's parameters after each step: [step][parameter][value]. */
    private record History(List<float[][]> steps) {
        float[][] last() {
            return steps.getLast();
        }
    }

    /** np ranks, each taking batch b of every global batch of np*b samples. */
    private static List<History> train(int np, int batch, int passesPerStep, DistributedOptions options)
            throws Exception {
        List<Communicator> comms = Communicator.local(np);
        ExecutorService pool = Executors.newFixedThreadPool(np);
        try {
            List<Future<History>> futures = new ArrayList<>();
            for (Communicator comm : comms) {
                futures.add(pool.submit(() -> rank(comm, batch, passesPerStep, options)));
            }
            List<History> out = new ArrayList<>();
            for (Future<History> f : futures) {
                out.add(f.get(100, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    private static History rank(Communicator comm, int batch, int passesPerStep, DistributedOptions options) {
        return rank(comm, batch, passesPerStep, options, STEPS, false);
    }

    private static History rank(Communicator comm, int batch, int passesPerStep, DistributedOptions options,
                                int steps, boolean joinAtEnd) {
        return rank(comm, batch, passesPerStep, options, steps, joinAtEnd, comm.rank(), comm.size());
    }

    /** As above, but taking the data rank {@code dataRank} of {@code dataNp} would take. */
    private static History rank(Communicator comm, int batch, int passesPerStep, DistributedOptions options,
                                int steps, boolean joinAtEnd, int dataRank, int dataNp) {
        int np = dataNp;
        try (Model model = Model.newInstance("mlp-" + comm.rank())) {
            SequentialBlock block = new SequentialBlock()
                    .add(Linear.builder().setUnits(16).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(CLASSES).build());
            model.setBlock(block);
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.5f)).build())
                    .optDevices(new Device[]{Device.cpu()});
            try (DistributedTrainer trainer = new DistributedTrainer(model, config, comm, options)) {
                trainer.initialize(new Shape(1, FEATURES));
                if (comm.rank() == 0) {
                    setKnownParameters(block.getParameters());
                }
                trainer.broadcastParameters();
                List<float[][]> history = new ArrayList<>();
                history.add(snapshot(block.getParameters()));
                int global = np * batch * passesPerStep;
                for (int step = 0; step < steps; step++) {
                    for (int pass = 0; pass < passesPerStep; pass++) {
                        int from = step * global + (pass * np + dataRank) * batch;
                        backward(trainer, model.getNDManager(), from, batch);
                        trainer.step();
                    }
                    history.add(snapshot(block.getParameters()));
                }
                if (joinAtEnd) {
                    trainer.join();
                    history.add(snapshot(block.getParameters()));
                }
                return new History(history);
            }
        }
    }

    private static void backward(DistributedTrainer trainer, NDManager parent, int from, int batch) {
        try (NDManager m = parent.newSubManager()) {
            float[][] x = java.util.Arrays.copyOfRange(features, from, from + batch);
            float[] y = java.util.Arrays.copyOfRange(labels, from, from + batch);
            NDArray data = m.create(x);
            NDArray label = m.create(y);
            synchronized (COLLECTOR) {
                try (GradientCollector collector = trainer.newGradientCollector()) {
                    NDArray prediction = trainer.forward(new NDList(data)).singletonOrThrow();
                    NDArray loss = trainer.getLoss().evaluate(new NDList(label), new NDList(prediction));
                    collector.backward(loss);
                }
            }
        }
    }

    private static void setKnownParameters(Iterable<Pair<String, Parameter>> parameters) {
        for (Pair<String, Parameter> p : parameters) {
            NDArray a = p.getValue().getArray();
            Random r = new Random(p.getKey().hashCode());
            float[] v = new float[Math.toIntExact(a.size())];
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (r.nextGaussian() * 0.3);
            }
            a.set(FloatBuffer.wrap(v));
        }
    }

    private static float[][] snapshot(Iterable<Pair<String, Parameter>> parameters) {
        List<float[]> out = new ArrayList<>();
        for (Pair<String, Parameter> p : parameters) {
            out.add(p.getValue().getArray().toFloatArray());
        }
        return out.toArray(float[][]::new);
    }

    private static void assertBitIdentical(List<History> ranks) {
        History first = ranks.getFirst();
        for (int r = 1; r < ranks.size(); r++) {
            for (int s = 0; s < first.steps().size(); s++) {
                float[][] a = first.steps().get(s);
                float[][] b = ranks.get(r).steps().get(s);
                for (int p = 0; p < a.length; p++) {
                    for (int i = 0; i < a[p].length; i++) {
                        assertEquals(Float.floatToRawIntBits(a[p][i]), Float.floatToRawIntBits(b[p][i]),
                                "rank " + r + " differs from rank 0 after step " + s + ", parameter " + p + "[" + i + "]");
                    }
                }
            }
        }
    }

    private static void assertClose(float[][] expected, float[][] actual, double tolerance) {
        for (int p = 0; p < expected.length; p++) {
            for (int i = 0; i < expected[p].length; i++) {
                double diff = Math.abs(expected[p][i] - actual[p][i]);
                assertTrue(diff <= tolerance * (1 + Math.abs(expected[p][i])),
                        "parameter " + p + "[" + i + "]: expected " + expected[p][i] + ", got " + actual[p][i]);
            }
        }
    }

    private static void assertTrained(History h) {
        float[][] start = h.steps().getFirst();
        float[][] end = h.last();
        assertNotEquals(java.util.Arrays.toString(start[0]), java.util.Arrays.toString(end[0]), "nothing was learned");
    }

    @Test
    void twoRanksAtBatchBEqualOneRankAtBatch2BAndStayBitIdentical() throws Exception {
        List<History> single = train(1, 16, 1, DistributedOptions.defaults());
        List<History> two = train(2, 8, 1, DistributedOptions.defaults());
        assertTrained(single.getFirst());
        assertBitIdentical(two);
        assertClose(single.getFirst().steps().getFirst(), two.getFirst().steps().getFirst(), 0);
        assertClose(single.getFirst().last(), two.getFirst().last(), 1e-5);
        assertClose(single.getFirst().last(), two.get(1).last(), 1e-5);
    }

    @Test
    void threeRanksAlsoMatchOneRank() throws Exception {
        List<History> single = train(1, 24, 1, DistributedOptions.defaults());
        List<History> three = train(3, 8, 1, DistributedOptions.defaults());
        assertBitIdentical(three);
        assertClose(single.getFirst().last(), three.get(2).last(), 1e-5);
    }

    @Test
    void accumulatedBackwardPassesEqualOneLargerBatch() throws Exception {
        List<History> single = train(1, 16, 1, DistributedOptions.defaults());
        List<History> accumulated = train(2, 4, 2, DistributedOptions.defaults().withBackwardPassesPerStep(2));
        assertBitIdentical(accumulated);
        assertClose(single.getFirst().last(), accumulated.getFirst().last(), 1e-5);
    }

    @Test
    void predivisionGivesTheSameAverage() throws Exception {
        List<History> single = train(1, 16, 1, DistributedOptions.defaults());
        List<History> predivided = train(2, 8, 1, DistributedOptions.defaults().withGradientPredivideFactor(2.0));
        assertBitIdentical(predivided);
        assertClose(single.getFirst().last(), predivided.getFirst().last(), 1e-5);
    }

    @Test
    void sixteenBitCompressionStaysCloseAndInSync() throws Exception {
        List<History> single = train(1, 16, 1, DistributedOptions.defaults());
        List<History> full = train(2, 8, 1, DistributedOptions.defaults());
        for (Compression c : new Compression[]{Compression.FP16, Compression.BF16}) {
            List<History> compressed = train(2, 8, 1, DistributedOptions.defaults().withCompression(c));
            assertBitIdentical(compressed);
            assertClose(single.getFirst().last(), compressed.getFirst().last(), c == Compression.FP16 ? 2e-3 : 2e-2);
            // The gradients did travel in 16 bits: the parameters are not those of the full-precision run.
            assertFalse(Arrays.deepEquals(full.getFirst().last(), compressed.getFirst().last()), c.toString());
        }
    }

    @Test
    void sumAddsInsteadOfAveraging() throws Exception {
        // Summing two ranks' gradients of batch 8 equals one rank's gradient of batch 16 times 2, i.e. the
        // single-rank run at twice the learning rate; that differs from the averaging run.
        List<History> average = train(2, 8, 1, DistributedOptions.defaults());
        List<History> sum = train(2, 8, 1, DistributedOptions.defaults().withOp(ReduceOp.SUM));
        assertBitIdentical(sum);
        float[][] a = average.getFirst().steps().get(1);
        float[][] s = sum.getFirst().steps().get(1);
        float[][] start = average.getFirst().steps().getFirst();
        for (int i = 0; i < a[0].length; i++) {
            double stepAverage = a[0][i] - start[0][i];
            double stepSum = s[0][i] - start[0][i];
            assertEquals(2 * stepAverage, stepSum, 1e-5 * (1 + Math.abs(stepSum)), "weight " + i);
        }
    }

    /** Horovod's Adasum optimizer: each rank steps on its own gradients, the steps combine by Adasum. */
    @Test
    void adasumCombinesTheRanksOwnStepsAndKeepsThemInSync() throws Exception {
        DistributedOptions adasum = DistributedOptions.defaults().withOp(ReduceOp.ADASUM);
        List<History> two = train(2, 8, 1, adasum);
        assertBitIdentical(two);
        assertTrained(two.getFirst());
        // Each rank's own first step, taken alone on the same data from the same start.
        List<float[][]> own = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            Communicator alone = Communicator.local(1).getFirst();
            try {
                own.add(rank(alone, 8, 1, DistributedOptions.defaults(), 1, false, r, 2).steps().get(1));
            } finally {
                alone.close();
            }
        }
        float[][] start = two.getFirst().steps().getFirst();
        float[][] expected = new float[start.length][];
        for (int p = 0; p < start.length; p++) {
            double[] a = new double[start[p].length];
            double[] b = new double[start[p].length];
            for (int i = 0; i < a.length; i++) {
                a[i] = own.get(0)[p][i] - start[p][i];
                b[i] = own.get(1)[p][i] - start[p][i];
            }
            double dot = 0;
            double aa = 0;
            double bb = 0;
            for (int i = 0; i < a.length; i++) {
                dot += a[i] * b[i];
                aa += a[i] * a[i];
                bb += b[i] * b[i];
            }
            double ca = aa == 0 ? 1 : 1 - dot / (2 * aa);
            double cb = bb == 0 ? 1 : 1 - dot / (2 * bb);
            expected[p] = new float[a.length];
            for (int i = 0; i < a.length; i++) {
                expected[p][i] = (float) (start[p][i] + ca * a[i] + cb * b[i]);
            }
        }
        assertClose(expected, two.getFirst().steps().get(1), 1e-5);
        // Not the average: the ranks' batches give different steps, which Adasum does not halve.
        float[][] averaged = train(2, 8, 1, DistributedOptions.defaults()).getFirst().steps().get(1);
        double differs = 0;
        for (int p = 0; p < averaged.length; p++) {
            for (int i = 0; i < averaged[p].length; i++) {
                differs = Math.max(differs, Math.abs(averaged[p][i] - two.getFirst().steps().get(1)[p][i]));
            }
        }
        assertTrue(differs > 1e-4, "Adasum gave the average step");
    }

    @Test
    void aRankOutOfDataJoinsAndEveryoneEndsWithTheLastStepper() throws Exception {
        List<Communicator> comms = Communicator.local(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            // Rank 0 has three batches, rank 1 only two: rank 1 joins early and contributes zeros to step 3.
            Future<History> r0 = pool.submit(() -> rank(comms.get(0), 8, 1, DistributedOptions.defaults(), 3, true));
            Future<History> r1 = pool.submit(() -> rank(comms.get(1), 8, 1, DistributedOptions.defaults(), 2, true));
            History h0 = r0.get(100, TimeUnit.SECONDS);
            History h1 = r1.get(100, TimeUnit.SECONDS);
            assertBitIdentical(List.of(new History(h0.steps().subList(0, 3)), new History(h1.steps().subList(0, 3))));
            assertClose(h0.steps().get(3), h0.last(), 0);
            assertClose(h0.last(), h1.last(), 0);
            assertNotEquals(java.util.Arrays.toString(h1.steps().get(2)[0]), java.util.Arrays.toString(h1.last()[0]),
                    "rank 1 must take rank 0's third step when it joins");
        } finally {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    @Test
    void onlyRankZeroWritesTheCheckpointAndEveryoneWaitsForIt(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        List<Communicator> comms = Communicator.local(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Boolean>> seen = new ArrayList<>();
            for (Communicator comm : comms) {
                seen.add(pool.submit(() -> {
                    try (Model model = Model.newInstance("ckpt")) {
                        model.setBlock(Linear.builder().setUnits(2).build());
                        model.getBlock().initialize(model.getNDManager(), ai.djl.ndarray.types.DataType.FLOAT32,
                                new Shape(1, 3));
                        java.nio.file.Path rankDir = dir.resolve("rank" + comm.rank());
                        new RankZero(comm).saveCheckpoint(model, rankDir, 1);
                        // After the barrier rank 0's file is complete, whichever rank looks.
                        return java.nio.file.Files.exists(dir.resolve("rank0/ckpt-0001.params"))
                                && !java.nio.file.Files.exists(rankDir.resolve("ckpt-0001.params")) == (comm.rank() != 0);
                    }
                }));
            }
            for (Future<Boolean> f : seen) {
                assertTrue(f.get(60, TimeUnit.SECONDS), () -> java.util.Arrays.toString(dir.toFile().list()));
            }
        } finally {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    @Test
    void gradientBuffersAreTheTensorsOwnMemory() {
        // What the zero-copy path relies on: PyTorch's direct buffer over a gradient is that gradient's memory.
        try (NDManager m = NDManager.newBaseManager()) {
            NDArray w = m.create(new float[]{1, 2, 3});
            w.setRequiresGradient(true);
            synchronized (COLLECTOR) {
                try (GradientCollector c = ai.djl.engine.Engine.getInstance().newGradientCollector()) {
                    c.backward(w.mul(w).sum());
                }
            }
            try (NDArray grad = w.getGradient()) {
                java.nio.ByteBuffer view = grad.toByteBuffer(true);
                assertTrue(view.isDirect());
                view.asFloatBuffer().put(1, 42f);
                try (NDArray again = w.getGradient()) {
                    assertEquals(java.util.List.of(2f, 42f, 6f), java.util.List.of(again.getFloat(0), again.getFloat(1),
                            again.getFloat(2)));
                }
            }
        }
    }

    @Test
    void badOptionsAreRejectedWithTheReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DistributedOptions.defaults().withOp(ReduceOp.MAX));
        assertTrue(e.getMessage().contains("AVERAGE, SUM or ADASUM"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DistributedOptions.defaults().withCompression(Compression.BF16).withOp(ReduceOp.ADASUM));
        assertTrue(e.getMessage().contains("uncompressed"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> DistributedOptions.defaults().withBackwardPassesPerStep(0));
        assertTrue(e.getMessage().contains("backwardPassesPerStep"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> DistributedOptions.defaults().withOp(ReduceOp.SUM).withGradientPredivideFactor(2));
        assertTrue(e.getMessage().contains("only applies to op AVERAGE"), e.getMessage());
    }
}
