package io.kolo.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.loss.Loss;
import io.kolo.Communicator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mistakes that only one rank can see (its model, its disk) fail every rank with the reason, at once: a rank left
 * waiting in a collective its peers never reach would otherwise hang, or fail later naming only a shutdown.
 */
@Timeout(120)
class FailsOnEveryRankTest {

    @BeforeAll
    static void setUp() {
        KoloDjl.configureEngine(1);
    }

    /** Runs {@code body} on two ranks (threads of this JVM); each returns its exception's message, or "finished". */
    private static List<String> onTwoRanks(Function<Communicator, String> body) throws Exception {
        List<Communicator> comms = Communicator.local(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<String>> outcomes = new ArrayList<>();
            for (Communicator comm : comms) {
                outcomes.add(pool.submit(() -> {
                    try {
                        return body.apply(comm);
                    } catch (RuntimeException e) {
                        return e.getMessage();
                    }
                }));
            }
            List<String> out = new ArrayList<>();
            for (Future<String> f : outcomes) {
                out.add(f.get(30, TimeUnit.SECONDS));   // well before any stall warning: no rank may hang
            }
            return out;
        } finally {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    private static String initialize(Communicator comm, SequentialBlock block) {
        try (Model model = Model.newInstance("m" + comm.rank())) {
            model.setBlock(block);
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.l2Loss()).optDevices(new Device[]{Device.cpu()});
            try (DistributedTrainer trainer = new DistributedTrainer(model, config, comm, DistributedOptions.defaults())) {
                trainer.initialize(new Shape(1, 4));
                return "finished";
            }
        }
    }

    @Test
    void aModelWithMoreLayersOnOneRankFailsEveryRankNamingTheFirstDifference() throws Exception {
        List<String> outcomes = onTwoRanks(comm -> {
            SequentialBlock block = new SequentialBlock().add(Linear.builder().setUnits(8).build());
            if (comm.rank() == 1) {
                block.add(Activation::relu).add(Linear.builder().setUnits(3).build());
            }
            return initialize(comm, block);
        });
        for (String outcome : outcomes) {
            assertEquals("the ranks' models differ: rank 0 has 2 parameters, rank 1 has 4; the first difference is"
                    + " parameter 3: rank 0 has none, rank 1 has 03Linear_weight FLOAT32 (3, 8); build the same model"
                    + " on every rank", outcome);
        }
    }

    @Test
    void aLayerOfAnotherWidthOnOneRankFailsEveryRankNamingItsShapes() throws Exception {
        List<String> outcomes = onTwoRanks(comm -> initialize(comm,
                new SequentialBlock().add(Linear.builder().setUnits(comm.rank() == 0 ? 8 : 6).build())));
        for (String outcome : outcomes) {
            assertEquals("the ranks' models differ: the first difference is parameter 1: rank 0 has 01Linear_weight"
                    + " FLOAT32 (8, 4), rank 1 has 01Linear_weight FLOAT32 (6, 4); build the same model on every rank",
                    outcome);
        }
    }

    @Test
    void aCheckpointRankZeroCannotWriteFailsEveryRankWithItsReason(@TempDir Path dir) throws Exception {
        Path notADirectory = Files.createFile(dir.resolve("file"));
        Path target = notADirectory.resolve("checkpoints");
        List<String> outcomes = onTwoRanks(comm -> {
            try (Model model = Model.newInstance("ckpt")) {
                model.setBlock(Linear.builder().setUnits(2).build());
                model.getBlock().initialize(model.getNDManager(), ai.djl.ndarray.types.DataType.FLOAT32, new Shape(1, 3));
                new RankZero(comm).saveCheckpoint(model, target, 1);
                return "finished";
            }
        });
        for (String outcome : outcomes) {
            assertTrue(outcome.startsWith("rank 0 could not save a checkpoint in " + target + ": "), outcome);
            assertTrue(outcome.contains("Not a directory"), outcome);
        }
    }

    @Test
    void parametersOutOfSyncAreNamedByRankOnEveryRank() throws Exception {
        List<String> outcomes = onTwoRanks(comm -> {
            try (Model model = Model.newInstance("m" + comm.rank())) {
                model.setBlock(new SequentialBlock().add(Linear.builder().setUnits(3).build()));
                DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.l2Loss()).optDevices(new Device[]{Device.cpu()});
                try (DistributedTrainer trainer = new DistributedTrainer(model, config, comm,
                        DistributedOptions.defaults())) {
                    trainer.initialize(new Shape(1, 4));
                    if (comm.rank() == 1) {
                        ai.djl.ndarray.NDArray weight = model.getBlock().getParameters().valueAt(0).getArray();
                        float[] drifted = weight.toFloatArray();
                        drifted[0] += 1;
                        weight.set(java.nio.FloatBuffer.wrap(drifted));
                    }
                    trainer.checkParametersInSync();
                    return "finished";
                }
            }
        });
        for (String outcome : outcomes) {
            assertTrue(outcome.startsWith("parameters differ between ranks: rank 1 differs from rank 0 (checksums "),
                    outcome);
        }
    }
}
