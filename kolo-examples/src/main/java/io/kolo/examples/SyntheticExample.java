package io.kolo.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
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
import io.kolo.Kolo;
import io.kolo.djl.Compression;
import io.kolo.djl.DistributedOptions;
import io.kolo.djl.DistributedTrainer;
import io.kolo.djl.KoloDjl;

import java.util.Locale;

/**
 * Horovod's synthetic benchmark for DJL: training throughput on random data, per rank and in total, with
 * the scaling efficiency against one rank when asked. Run it with
 * {@code ./kolo run -np 2 --example synthetic -- --model resnet18 --baseline}.
 */
public final class SyntheticExample {
    private static final String USAGE = "usage: synthetic [--model mlp|resnet18|resnet34] [--batch-size N]"
            + " [--image-size N] [--num-warmup-batches N] [--num-batches-per-iter N] [--num-iters N]"
            + " [--threads N] [--compression none|fp16|bf16] [--baseline] [--ceiling]";

    private SyntheticExample() {
    }

    private record Settings(String model, int batchSize, int imageSize, int warmup, int batchesPerIter, int iters,
                            Integer threads, Compression compression, boolean baseline, boolean ceiling) {
    }

    public static void main(String[] args) {
        Settings s;
        try {
            s = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("synthetic: " + e.getMessage() + " (" + USAGE + ")");
            System.exit(2);
            return;
        }
        if (s == null) {
            System.out.println(USAGE);
            return;
        }
        Kolo.init();
        int threads = s.threads() != null ? KoloDjl.configureEngine(s.threads()) : KoloDjl.configureEngine();
        try {
            run(s, threads);
        } finally {
            Kolo.shutdown();
        }
    }

    private static void run(Settings s, int threads) {
        boolean image = s.model().startsWith("resnet");
        Shape input = image ? new Shape(s.batchSize(), 3, s.imageSize(), s.imageSize()) : new Shape(s.batchSize(), 1024);
        try (Model model = Model.newInstance("synthetic-" + s.model())) {
            model.setBlock(block(s));
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.01f)).build())
                    .optDevices(new Device[]{KoloDjl.device()});
            NDManager manager = model.getNDManager();
            NDArray data = manager.randomUniform(0, 1, input);
            NDArray labels = manager.randomInteger(0, 1000, new Shape(s.batchSize()), DataType.INT32);
            DistributedOptions options = DistributedOptions.defaults().withCompression(s.compression());
            double baseline = 0;
            if (s.baseline()) {
                baseline = alone(config, options, data, labels, s, false);
            }
            double ceiling = 0;
            if (s.ceiling()) {
                ceiling = alone(config, options, data, labels, s, true);
            }
            try (DistributedTrainer trainer = new DistributedTrainer(model, config, options)) {
                trainer.initialize(new Shape(1).addAll(input.slice(1)));
                if (Kolo.rank() == 0) {
                    System.out.printf(Locale.ROOT, "Model: %s (%,d parameters), batch size %d per rank, %d rank(s), "
                                    + "%d compute thread(s) per rank, gradients %s%n", s.model(), parameters(model),
                            s.batchSize(), Kolo.size(), threads, s.compression().name().toLowerCase(Locale.ROOT));
                    System.out.println("Running warmup...");
                }
                double[] rates = measure(trainer, data, labels, s);
                double averagingMs = measuredAveragingMs;
                double mean = mean(rates);
                double conf = 1.96 * std(rates, mean);
                double total = trainer.sumAcrossRanks("synthetic.total", Math.round(mean * 1000))[0] / 1000.0;
                if (Kolo.rank() == 0) {
                    System.out.printf(Locale.ROOT, "Img/sec per rank: %.1f +-%.1f%n", mean, conf);
                    System.out.printf(Locale.ROOT, "Total img/sec on %d rank(s): %.1f +-%.1f%n", Kolo.size(), total,
                            conf * Kolo.size());
                    System.out.printf(Locale.ROOT, "Gradient averaging on rank 0: %.1f ms per step of %.1f ms%n",
                            averagingMs, 1000.0 * s.batchSize() / mean);
                    if (s.baseline()) {
                        System.out.printf(Locale.ROOT, "Baseline (np=1, the same model alone): %.1f img/sec; "
                                + "scaling efficiency %.1f%%%n", baseline, 100 * total / (Kolo.size() * baseline));
                    }
                    if (s.ceiling()) {
                        System.out.printf(Locale.ROOT, "Ceiling (every rank training alone at once, no averaging): "
                                + "%.1f img/sec per rank", ceiling);
                        if (s.baseline()) {
                            System.out.printf(Locale.ROOT, "; this machine allows %.1f%% with free communication, "
                                            + "Kolo's run reached %.1f%% of that%n", 100 * ceiling / baseline,
                                    100 * total / (Kolo.size() * ceiling));
                        } else {
                            System.out.println();
                        }
                    }
                }
            }
        }
    }

    /**
     * Training without gradient averaging, inside this job: with {@code everyRank} false rank 0 trains alone (the
     * np=1 baseline) while the other ranks wait, idle; with it true every rank trains a model of its own at the same
     * time (the ceiling: what the ranks would reach if communication cost nothing, since they still share the
     * machine's cores, caches and memory). Each trains through a one-rank communicator, so no allreduce runs.
     * Everyone meets at a barrier after each batch (not timed), so no wait comes near Kolo's stall warning or timeout
     * however slow a batch is. Returns the mean img/sec per training rank (0 on idle ranks).
     */
    private static double alone(DefaultTrainingConfig config, DistributedOptions options, NDArray data,
                                NDArray labels, Settings s, boolean everyRank) {
        boolean trains = everyRank || Kolo.rank() == 0;
        String label = everyRank ? "ceiling, every rank alone" : "baseline, np=1";
        // A model of its own: a second trainer on the measured model would re-initialise parameters that the
        // first one still references, and slows every later step of that model down several times.
        Model model = trains ? Model.newInstance((everyRank ? "ceiling-" : "baseline-") + s.model()) : null;
        Communicator alone = model != null ? Communicator.local(1).getFirst() : null;
        DistributedTrainer trainer = null;
        if (model != null) {
            model.setBlock(block(s));
            trainer = new DistributedTrainer(model, config, alone, options);
        }
        try {
            if (trainer != null) {
                if (Kolo.rank() == 0) {
                    System.out.println(everyRank ? "Running every rank alone at once, without gradient averaging..."
                            : "Running the np=1 baseline on rank 0 (the other ranks wait)...");
                }
                trainer.initialize(new Shape(1).addAll(data.getShape().slice(1)));
            }
            for (int i = 0; i < s.warmup(); i++) {
                if (trainer != null) {
                    batch(trainer, data, labels);
                }
                Kolo.barrier();
            }
            double[] rates = new double[s.iters()];
            for (int it = 0; it < s.iters(); it++) {
                long nanos = 0;
                for (int b = 0; b < s.batchesPerIter(); b++) {
                    long start = System.nanoTime();
                    if (trainer != null) {
                        batch(trainer, data, labels);
                    }
                    nanos += System.nanoTime() - start;
                    Kolo.barrier();
                }
                rates[it] = s.batchSize() * s.batchesPerIter() / (nanos / 1e9);
                if (Kolo.rank() == 0) {
                    System.out.printf(Locale.ROOT, "Iter #%d: %.1f img/sec (%s)%n", it, rates[it], label);
                }
            }
            double mine = trainer != null ? mean(rates) : 0;
            if (!everyRank) {
                return mine;
            }
            long[] sum = {Math.round(mine * 1000)};
            Kolo.allreduce(sum, io.kolo.ReduceOp.SUM);
            return sum[0] / 1000.0 / Kolo.size();
        } finally {
            if (trainer != null) {
                trainer.close();
                alone.close();
                model.close();
            }
        }
    }

    /** Gradient averaging per measured step on this rank, in ms (warm-up steps, with their one-time costs, left out). */
    private static double measuredAveragingMs;

    private static double[] measure(DistributedTrainer trainer, NDArray data, NDArray labels, Settings s) {
        for (int i = 0; i < s.warmup(); i++) {
            batch(trainer, data, labels);
        }
        long averagingBefore = trainer.gradientAveragingTime().toNanos();
        long averagesBefore = trainer.gradientAverages();
        if (Kolo.rank() == 0) {
            System.out.println("Running benchmark...");
        }
        double[] rates = new double[s.iters()];
        for (int it = 0; it < s.iters(); it++) {
            long start = System.nanoTime();
            for (int b = 0; b < s.batchesPerIter(); b++) {
                batch(trainer, data, labels);
            }
            rates[it] = s.batchSize() * s.batchesPerIter() / ((System.nanoTime() - start) / 1e9);
            if (Kolo.rank() == 0) {
                System.out.printf(Locale.ROOT, "Iter #%d: %.1f img/sec per rank%n", it, rates[it]);
            }
        }
        long averages = Math.max(1, trainer.gradientAverages() - averagesBefore);
        measuredAveragingMs = (trainer.gradientAveragingTime().toNanos() - averagingBefore) / 1e6 / averages;
        return rates;
    }

    private static void batch(DistributedTrainer trainer, NDArray data, NDArray labels) {
        try (GradientCollector collector = trainer.newGradientCollector()) {
            NDList out = trainer.forward(new NDList(data));
            NDArray loss = trainer.getLoss().evaluate(new NDList(labels), out);
            collector.backward(loss);
            out.close();
            loss.close();
        }
        trainer.step();
    }

    private static Block block(Settings s) {
        return switch (s.model()) {
            // 1024 -> 4096 -> 2048 -> 1000: 12.7 M parameters, little compute per byte of gradient.
            case "mlp" -> new SequentialBlock()
                    .add(Linear.builder().setUnits(4096).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(2048).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(1000).build());
            case "resnet18", "resnet34" -> ResNet.build(Integer.parseInt(s.model().substring("resnet".length())),
                    s.imageSize(), 1000);
            default -> throw new IllegalArgumentException("unknown model " + s.model());
        };
    }

    private static long parameters(Model model) {
        long n = 0;
        for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
            if (p.getValue().requiresGradient()) {
                n += p.getValue().getArray().size();
            }
        }
        return n;
    }

    private static double mean(double[] v) {
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        return sum / v.length;
    }

    private static double std(double[] v, double mean) {
        double sum = 0;
        for (double x : v) {
            sum += (x - mean) * (x - mean);
        }
        return Math.sqrt(sum / v.length);
    }

    private static Settings parse(String[] args) {
        String model = "resnet18";
        int batch = 32;
        int imageSize = 32;
        int warmup = 5;
        int perIter = 5;
        int iters = 5;
        Integer threads = null;
        Compression compression = Compression.NONE;
        boolean baseline = false;
        boolean ceiling = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--model" -> model = Args.value(args, ++i);
                case "--batch-size" -> batch = Args.positive(args, ++i);
                case "--image-size" -> imageSize = Args.positive(args, ++i);
                case "--num-warmup-batches" -> warmup = Integer.parseInt(Args.value(args, ++i));
                case "--num-batches-per-iter" -> perIter = Args.positive(args, ++i);
                case "--num-iters" -> iters = Args.positive(args, ++i);
                case "--threads" -> threads = Args.positive(args, ++i);
                case "--compression" -> {
                    String c = Args.value(args, ++i);
                    try {
                        compression = Compression.valueOf(c.toUpperCase(Locale.ROOT));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("--compression must be none, fp16 or bf16, not '" + c + "'");
                    }
                }
                case "--baseline" -> baseline = true;
                case "--ceiling" -> ceiling = true;
                case "-h", "--help" -> {
                    return null;
                }
                default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
            }
        }
        if (!java.util.List.of("mlp", "resnet18", "resnet34").contains(model)) {
            throw new IllegalArgumentException("--model must be mlp, resnet18 or resnet34, not '" + model + "'");
        }
        return new Settings(model, batch, imageSize, warmup, perIter, iters, threads, compression, baseline, ceiling);
    }
}
