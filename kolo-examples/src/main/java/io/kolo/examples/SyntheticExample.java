package io.kolo.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import io.kolo.Communicator;
import io.kolo.Compression;
import io.kolo.Kolo;
import io.kolo.djl.DistributedOptions;
import io.kolo.djl.DistributedTrainer;
import io.kolo.djl.KoloDjl;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Horovod's synthetic benchmark for DJL: training throughput on random data, per rank and in total, with
 * the scaling efficiency against one rank when asked. Run it with
 * {@code ./kolo run -np 2 --example synthetic -- --model resnet18 --baseline}. With {@code --compare}, PyTorch DDP
 * trains the same model in the same run, taking turns with Kolo ({@link DdpPeer}).
 */
public final class SyntheticExample {
    private static final String USAGE = "usage: synthetic [--model mlp|mlp-deep|resnet18|resnet34] [--batch-size N]"
            + " [--image-size N] [--num-warmup-batches N] [--num-batches-per-iter N] [--num-iters N]"
            + " [--threads N] [--compression none|fp16|bf16] [--baseline] [--ceiling] [--compare] [--json FILE]";

    private SyntheticExample() {
    }

    /** {@code compare} (PyTorch DDP beside Kolo) implies {@code baseline} and {@code ceiling}; {@code json} may be null. */
    record Settings(String model, int batchSize, int imageSize, int warmup, int batchesPerIter, int iters,
                    Integer threads, Compression compression, boolean baseline, boolean ceiling, boolean compare,
                    java.nio.file.Path json) {
    }

    // Set on rank 0 when --json could not be written after all: the run then ends with a non-zero code.
    private static volatile boolean jsonLost;

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
        if (s.json() != null && Kolo.rank() == 0) {
            // Rank 0 writes the results: a file it cannot write fails now, not after the whole benchmark.
            try {
                Writable.file(s.json());
            } catch (IllegalArgumentException e) {
                System.err.println("synthetic: --json " + s.json() + ": rank 0 cannot write there: " + e.getMessage());
                Kolo.shutdown();
                System.exit(2);
            }
        }
        int threads = s.threads() != null ? KoloDjl.configureEngine(s.threads()) : KoloDjl.configureEngine();
        try {
            run(s, threads);
        } finally {
            Kolo.shutdown();
        }
        if (jsonLost) {
            System.exit(1);
        }
    }

    private static void run(Settings s, int threads) {
        boolean image = s.model().startsWith("resnet");
        Shape input = image ? new Shape(s.batchSize(), 3, s.imageSize(), s.imageSize()) : new Shape(s.batchSize(), 1024);
        try (Model model = Model.newInstance("synthetic-" + s.model())) {
            model.setBlock(SyntheticModels.block(s.model(), s.imageSize()));
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.01f)).build())
                    .optDevices(new Device[]{KoloDjl.device()});
            NDManager manager = model.getNDManager();
            NDArray data = manager.randomUniform(0, 1, input);
            NDArray labels = manager.randomInteger(0, 1000, new Shape(s.batchSize()), DataType.INT32);
            DistributedOptions options = DistributedOptions.defaults().withCompression(s.compression());
            Shape sample = new Shape(1).addAll(input.slice(1));
            List<SyntheticMode> modes = new ArrayList<>();
            DdpPeer ddp = null;
            try {
                if (s.baseline()) {
                    modes.add(SyntheticMode.alone(SyntheticMode.Kind.BASELINE, Kolo.rank() == 0, s, config, options,
                            sample));
                }
                if (s.ceiling()) {
                    modes.add(SyntheticMode.alone(SyntheticMode.Kind.CEILING, true, s, config, options, sample));
                }
                DistributedTrainer trainer = new DistributedTrainer(model, config, options);
                SyntheticMode distributed = new SyntheticMode(SyntheticMode.Kind.DISTRIBUTED, trainer, null, null,
                        false, s.iters(), s.batchesPerIter());
                modes.add(distributed);
                trainer.initialize(sample);
                if (s.compare()) {
                    // Started once Kolo's models are built, and waited for: its start-up then slows no measurement.
                    ddp = DdpPeer.start(s, threads);
                }
                if (Kolo.rank() == 0) {
                    System.out.printf(Locale.ROOT, "Model: %s (%,d parameters), batch size %d per rank, %d rank(s), "
                                    + "%d compute thread(s) per rank, gradients %s%n", s.model(), parameters(model),
                            s.batchSize(), Kolo.size(), threads, s.compression().name().toLowerCase(Locale.ROOT));
                    if (modes.size() > 1) {
                        System.out.println("Each iteration runs " + String.join(", then ", modes.stream()
                                .map(m -> m.kind.title).toList()) + (ddp != null && ddp.failure() == null
                                ? ", then PyTorch DDP at np=1 and np=" + Kolo.size() : "")
                                + ", so that all see the machine alike");
                    }
                    System.out.println("Running warmup...");
                }
                for (SyntheticMode m : modes) {
                    m.warmUp(s, data, labels);
                }
                if (ddp != null) {
                    ddp.takeTurn();
                }
                if (Kolo.rank() == 0) {
                    System.out.println("Running benchmark...");
                }
                List<DdpPeer.Turn> turns = new ArrayList<>();
                for (int it = 0; it < s.iters(); it++) {
                    for (SyntheticMode m : modes) {
                        m.iteration(it, s, data, labels);
                    }
                    DdpPeer.Turn t = ddp != null ? ddp.takeTurn() : null;
                    if (t != null) {
                        turns.add(t);
                        System.out.printf(Locale.ROOT, "Iter #%d: %.1f img/sec (PyTorch DDP, np=1), %.1f img/sec"
                                + " total (PyTorch DDP, np=%d)%n", it, t.np1(), t.total(), Kolo.size());
                    }
                }
                SyntheticResults.DdpFigures ddpFigures = ddp == null ? null : ddp.failure() != null
                        ? SyntheticResults.DdpFigures.skipped(ddp.failure())
                        : new SyntheticResults.DdpFigures(null, ddp.ready().parameters(), ddp.ready().shapes(),
                        ddp.ready().torchVersion(), turns);
                report(s, threads, model, modes, distributed, ddpFigures);
            } finally {
                if (ddp != null) {
                    ddp.close();
                }
                for (SyntheticMode m : modes) {
                    m.close();
                }
            }
        }
    }

    private static void report(Settings s, int threads, Model model, List<SyntheticMode> modes,
                               SyntheticMode distributed, SyntheticResults.DdpFigures ddp) {
        DistributedTrainer trainer = distributed.trainer;
        double averagingMs = distributed.averagingMillisPerStep();
        double stepMs = distributed.stepMillis();
        // Every rank's figure: a rank that waits long for the others tells which rank is slower.
        float[] perRankAveraging = Kolo.allgather(new float[]{(float) averagingMs});
        double ownMs = SyntheticMode.ownAveragingMillis(Kolo.allgather(distributed.stepAveragingMillis), Kolo.size());
        double mean = mean(distributed.rates);
        double conf = 1.96 * std(distributed.rates, mean);
        double total = trainer.sumAcrossRanks("synthetic.total", Math.round(mean * 1000))[0] / 1000.0;
        // Each iteration's total, for the efficiency iteration by iteration (the rates are per rank).
        double[] totals = s.compare() ? Kolo.allreduce(distributed.rates.clone(), io.kolo.ReduceOp.SUM) : null;
        double[] baselines = null;
        double baseline = 0;
        double ceiling = 0;
        for (SyntheticMode m : modes) {
            if (m.kind == SyntheticMode.Kind.BASELINE) {
                baselines = m.rates;
            }
            if (m != distributed) {
                double v = m.meanPerTrainingRank();
                if (m.kind == SyntheticMode.Kind.BASELINE) {
                    baseline = v;
                } else {
                    ceiling = v;
                }
            }
        }
        if (Kolo.rank() != 0) {
            return;
        }
        System.out.printf(Locale.ROOT, "Img/sec per rank: %.1f +-%.1f%n", mean, conf);
        System.out.printf(Locale.ROOT, "Total img/sec on %d rank(s): %.1f +-%.1f%n", Kolo.size(), total,
                conf * Kolo.size());
        System.out.printf(Locale.ROOT, "Gradient averaging on rank 0: %.1f ms per step of %.1f ms%n",
                averagingMs, stepMs);
        if (perRankAveraging.length > 1) {
            StringBuilder line = new StringBuilder("Gradient averaging per step by rank (waiting for slower ranks"
                    + " included):");
            for (int r = 0; r < perRankAveraging.length; r++) {
                line.append(String.format(Locale.ROOT, " %d: %.1f ms", r, perRankAveraging[r]));
            }
            System.out.println(line);
            System.out.printf(Locale.ROOT, "Kolo's own averaging (per step, the shortest of the ranks': the rank whose"
                    + " backward pass ended last waits for nobody): %.1f ms, %.1f%% of the step%n", ownMs,
                    100 * ownMs / stepMs);
        }
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
        if (ddp == null && s.json() == null) {
            return;
        }
        SyntheticResults results = new SyntheticResults(s.model(), s.batchSize(), Kolo.size(), threads,
                parameters(model), shapes(model), new SyntheticResults.KoloFigures(mean, total, conf * Kolo.size(),
                baseline, ceiling, averagingMs, ownMs, stepMs,
                SyntheticResults.efficiencies(totals, baselines, Kolo.size())), ddp);
        results.table().forEach(System.out::println);
        if (s.json() != null) {
            try {
                results.writeJson(s.json());
            } catch (java.io.IOException e) {
                System.err.println("synthetic: cannot write " + s.json() + ": " + e.getMessage());
                jsonLost = true;
            }
        }
    }

    /** The trainable parameters' shapes in block order, as {@code 64x3x3x3}, to hold against DDP's model. */
    private static List<String> shapes(Model model) {
        List<String> out = new ArrayList<>();
        for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
            if (p.getValue().requiresGradient()) {
                StringBuilder b = new StringBuilder();
                for (long d : p.getValue().getArray().getShape().getShape()) {
                    b.append(b.isEmpty() ? "" : "x").append(d);
                }
                out.add(b.toString());
            }
        }
        return out;
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

    static double mean(double[] v) {
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        return sum / v.length;
    }

    static double std(double[] v, double mean) {
        double sum = 0;
        for (double x : v) {
            sum += (x - mean) * (x - mean);
        }
        return Math.sqrt(sum / v.length);
    }

    @Command(name = "synthetic")
    static final class Options {
        @Option(names = "--model")
        String model = "resnet18";
        @Option(names = "--batch-size", converter = ExampleArgs.Positive.class)
        int batch = 32;
        @Option(names = "--image-size", converter = ExampleArgs.Positive.class)
        int imageSize = 32;
        @Option(names = "--num-warmup-batches", converter = ExampleArgs.NonNegative.class)
        int warmup = 5;
        @Option(names = "--num-batches-per-iter", converter = ExampleArgs.Positive.class)
        int perIter = 5;
        @Option(names = "--num-iters", converter = ExampleArgs.Positive.class)
        int iters = 5;
        @Option(names = "--threads", converter = ExampleArgs.Positive.class)
        Integer threads;
        @Option(names = "--compression")
        String compression = "none";
        @Option(names = "--baseline")
        boolean baseline;
        @Option(names = "--ceiling")
        boolean ceiling;
        @Option(names = "--compare")
        boolean compare;
        @Option(names = "--json")
        java.nio.file.Path json;
        @Option(names = {"-h", "--help"}, usageHelp = true)
        boolean help;
    }

    private static Settings parse(String[] args) {
        Options o = new Options();
        if (ExampleArgs.parse(o, args)) {
            return null;
        }
        String model = o.model;
        Compression compression;
        try {
            compression = Compression.valueOf(o.compression.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--compression must be none, fp16 or bf16, not '" + o.compression + "'");
        }
        int batch = o.batch;
        int imageSize = o.imageSize;
        int warmup = o.warmup;
        int perIter = o.perIter;
        int iters = o.iters;
        Integer threads = o.threads;
        boolean baseline = o.baseline;
        boolean ceiling = o.ceiling;
        boolean compare = o.compare;
        java.nio.file.Path json = o.json;
        if (!java.util.List.of("mlp", "mlp-deep", "resnet18", "resnet34").contains(model)) {
            throw new IllegalArgumentException("--model must be mlp, mlp-deep, resnet18 or resnet34, not '" + model + "'");
        }
        // Scaling efficiency needs the np=1 run, and the ceiling says what any implementation could reach.
        return new Settings(model, batch, imageSize, warmup, perIter, iters, threads, compression, baseline || compare,
                ceiling || compare, compare, json);
    }
}
