package io.kolo.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.kolo.Communicator;
import io.kolo.bootstrap.RendezvousClient;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.launch.JobSecret;
import io.kolo.launch.RendezvousService;
import io.kolo.view.RankSnapshot;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A DistributedTrainer reports the loss its loop computed, and samples per second, at each step, with no code in the
 * loop: two ranks (threads joining over TCP through a launcher's store, KOLO_VIEW=1) train a small MLP with real
 * PyTorch, and the points are read back from the store as the job view reads them.
 */
@Timeout(120)
class TrainerReportsTest {
    private static final int FEATURES = 8;
    private static final int BATCH = 4;
    private static final int STEPS = 5;
    /** DJL's PyTorch engine allows one gradient collector per JVM at a time. */
    private static final Object COLLECTOR = new Object();

    @BeforeAll
    static void setUp() {
        KoloDjl.configureEngine(1);
    }

    @Test
    void eachStepReportsTheLoopsLossAndSamplesPerSecond() throws Exception {
        JobSecret secret = JobSecret.generate();
        try (RendezvousService service = RendezvousService.start(InetAddress.getLoopbackAddress(), 0, secret);
             RendezvousClient store = RendezvousClient.connect(service.address(), secret, Duration.ofSeconds(20))) {
            ExecutorService pool = Executors.newFixedThreadPool(2);
            List<Future<float[]>> ranks = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Map<String, String> env = Map.of("KOLO_RANK", Integer.toString(r), "KOLO_SIZE", "2",
                        "KOLO_RENDEZVOUS_ADDR", "127.0.0.1", "KOLO_RENDEZVOUS_SERVER", "launcher",
                        "KOLO_RENDEZVOUS_PORT", Integer.toString(service.address().getPort()),
                        "KOLO_SECRET", secret.toHex(), "KOLO_TRANSPORT", "tcp", "KOLO_VIEW", "1",
                        "KOLO_VIEW_INTERVAL_MS", "50");
                ranks.add(pool.submit(() -> {
                    try (Communicator comm = Communicator.fromEnvironment(env)) {
                        return train(comm);
                    }
                }));
            }
            List<float[]> losses = new ArrayList<>();
            for (Future<float[]> f : ranks) {
                losses.add(f.get(100, TimeUnit.SECONDS));
            }
            pool.shutdown();
            for (int r = 0; r < 2; r++) {
                RankSnapshot s = RankSnapshot.fromStoreValue(store.tryGet(StoreKeys.view(r)).orElseThrow());
                List<RankSnapshot.Point> loss = s.points().stream().filter(p -> p.name().equals("loss")).toList();
                assertEquals(STEPS, loss.size(), s.points().toString());
                for (int step = 0; step < STEPS; step++) {
                    assertEquals(step, loss.get(step).step());
                    assertEquals(losses.get(r)[step], loss.get(step).value(), 1e-6, "rank " + r + " step " + step);
                }
                List<RankSnapshot.Point> rate = s.points().stream().filter(p -> p.name().equals("samples/s")).toList();
                assertEquals(STEPS, rate.size());
                assertTrue(rate.stream().allMatch(p -> p.value() > 0), rate.toString());
                // The gradients were averaged by the engine, which counted them.
                assertTrue(s.ops() >= STEPS, "ops " + s.ops());
            }
        }
    }

    /** STEPS steps of this rank's batches; returns the loss the loop computed at each. */
    private static float[] train(Communicator comm) {
        Random random = new Random(comm.rank());
        float[] losses = new float[STEPS];
        try (Model model = Model.newInstance("mlp-" + comm.rank())) {
            model.setBlock(new SequentialBlock().add(Linear.builder().setUnits(8).build()).add(Activation::relu)
                    .add(Linear.builder().setUnits(2).build()));
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build())
                    .optDevices(new Device[]{Device.cpu()});
            try (DistributedTrainer trainer = new DistributedTrainer(model, config, comm, DistributedOptions.defaults())) {
                trainer.initialize(new Shape(1, FEATURES));
                for (int step = 0; step < STEPS; step++) {
                    float[][] x = new float[BATCH][FEATURES];
                    float[] y = new float[BATCH];
                    for (int i = 0; i < BATCH; i++) {
                        for (int j = 0; j < FEATURES; j++) {
                            x[i][j] = (float) random.nextGaussian();
                        }
                        y[i] = random.nextInt(2);
                    }
                    try (NDManager m = model.getNDManager().newSubManager()) {
                        NDArray data = m.create(x);
                        NDArray label = m.create(y);
                        synchronized (COLLECTOR) {
                            try (GradientCollector collector = trainer.newGradientCollector()) {
                                NDList prediction = trainer.forward(new NDList(data), new NDList(label));
                                NDArray loss = trainer.getLoss().evaluate(new NDList(label), prediction);
                                collector.backward(loss);
                                losses[step] = loss.getFloat();
                            }
                        }
                    }
                    trainer.step();
                }
            }
        }
        return losses;
    }
}
