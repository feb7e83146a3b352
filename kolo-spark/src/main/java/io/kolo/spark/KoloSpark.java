package io.kolo.spark;

import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;

/**
 * Runs a Kolo job on a Spark cluster, in the spirit of {@code horovod.spark.run}: {@code numProc} ranks as the tasks of
 * one barrier stage, each with its own {@link io.kolo.Communicator}. Several tasks in one executor are several ranks
 * in one JVM; ranks on one host talk through shared memory, ranks on different hosts over TCP. Nothing to install on
 * the cluster beyond the application's jars, no {@code mpirun}, no SSH.
 *
 * <pre>{@code
 * SparkSession spark = SparkSession.builder().getOrCreate();
 * List<float[]> sums = KoloSpark.run(spark, 4, comm -> {
 *     float[] x = {comm.rank(), 1};
 *     return comm.allreduce(x, ReduceOp.SUM);     // {6, 4} on every rank
 * });                                              // results in rank order
 * }</pre>
 *
 * <p>Each run makes a new job with its own secret, sent to the executors with the tasks: turn on
 * {@code spark.authenticate} and {@code spark.network.crypto.enabled} to keep it from the network. When a rank fails
 * (its task throws, its executor dies) every other rank fails at once, naming it; Spark then retries the whole stage as
 * it retries any barrier stage ({@code spark.task.maxFailures}, {@code spark.stage.maxConsecutiveAttempts}), and each
 * attempt is a new job. {@code KOLO_*} settings come from the driver's environment and
 * {@code spark.executorEnv.KOLO_*}. See docs/spark.md.
 */
public final class KoloSpark {
    private KoloSpark() {
    }

    /**
     * Runs {@code task} on {@code numProc} ranks and returns what each returned, in rank order.
     *
     * @throws KoloSparkException when the cluster has fewer than {@code numProc} task slots after the start timeout,
     *                            when dynamic allocation is on, or when a rank failed (naming it and its exception)
     */
    public static <R> List<R> run(SparkSession spark, int numProc, KoloTask<R> task) {
        if (numProc < 1) {
            throw new IllegalArgumentException("numProc must be at least 1, not " + numProc);
        }
        // Else each rank fails on the executors with an NPE naming a variable of Kolo's.
        Objects.requireNonNull(task, "task must not be null: the KoloTask each rank runs");
        SparkContext sc = spark.sparkContext();
        List<Integer> ranks = IntStream.range(0, numProc).boxed().toList();
        RDD<Integer> rdd = JavaSparkContext.fromSparkContext(sc).parallelize(new ArrayList<>(ranks), numProc).rdd();
        return runStage(sc, rdd, numProc, true, Options.none(), (comm, ignored) -> task.call(comm));
    }

    /**
     * As {@link #run(SparkSession, int, KoloTask)}, with {@code options}: the job view served by rank 0's task on its
     * executor ({@link Options#dashboard}), a report written there when rank 0 leaves ({@link Options#report}).
     */
    public static <R> List<R> run(SparkSession spark, int numProc, Options options, KoloTask<R> task) {
        if (numProc < 1) {
            throw new IllegalArgumentException("numProc must be at least 1, not " + numProc);
        }
        Objects.requireNonNull(options, "options must not be null: KoloSpark.Options.none() for none");
        Objects.requireNonNull(task, "task must not be null: the KoloTask each rank runs");
        SparkContext sc = spark.sparkContext();
        List<Integer> ranks = IntStream.range(0, numProc).boxed().toList();
        RDD<Integer> rdd = JavaSparkContext.fromSparkContext(sc).parallelize(new ArrayList<>(ranks), numProc).rdd();
        return runStage(sc, rdd, numProc, true, options, (comm, ignored) -> task.call(comm));
    }

    /**
     * How one {@link #run(SparkSession, int, Options, KoloTask)} watches its job. Each option is a {@code KOLO_*}
     * setting of the ranks (docs/jobs.md), over those of the driver's environment and {@code spark.executorEnv}.
     */
    public static final class Options {
        private final Map<String, String> settings;

        private Options(Map<String, String> settings) {
            this.settings = Map.copyOf(settings);
        }

        /** No option: the same as the run without options. */
        public static Options none() {
            return new Options(Map.of());
        }

        /**
         * Rank 0's task serves the job view (the page, {@code /api/job}, {@code /metrics}) on {@code port} of its
         * executor's host while the job runs ({@code KOLO_DASHBOARD_PORT}; 0: a free port). Its URL is printed on
         * that executor's stderr; the driver says where to look.
         */
        public Options dashboard(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("dashboard port " + port + " is out of range: give a TCP port from"
                        + " 1 to 65535, or 0 for a free one");
            }
            return with("KOLO_DASHBOARD_PORT", Integer.toString(port));
        }

        /** The address the view is served on ({@code KOLO_DASHBOARD_BIND}; 127.0.0.1 unless given, then a token). */
        public Options dashboardBind(String address) {
            return with("KOLO_DASHBOARD_BIND", Objects.requireNonNull(address));
        }

        /** Rank 0's task writes the job's report to {@code path} on its executor's host ({@code KOLO_REPORT}). */
        public Options report(String path) {
            return with("KOLO_REPORT", Objects.requireNonNull(path));
        }

        Map<String, String> settings() {
            return settings;
        }

        private Options with(String name, String value) {
            Map<String, String> next = new java.util.HashMap<>(settings);
            next.put(name, value);
            return new Options(next);
        }

        @Override
        public String toString() {
            return "KoloSpark.Options" + settings;
        }
    }

    /**
     * Runs {@code task} on {@code numProc} ranks over {@code data}, repartitioned to {@code numProc} partitions: rank
     * {@code r} reads partition {@code r}'s rows where they lie. Returns what each rank returned, in rank order.
     *
     * <pre>{@code
     * List<Double> means = KoloSpark.run(spark, df, 2, (comm, rows) -> {
     *     double[] sumAndCount = new double[2];
     *     rows.forEachRemaining(r -> { sumAndCount[0] += r.getDouble(0); sumAndCount[1]++; });
     *     comm.allreduce(sumAndCount, ReduceOp.SUM);
     *     return sumAndCount[0] / sumAndCount[1];     // the column's mean, on every rank
     * });
     * }</pre>
     */
    public static <R> List<R> run(SparkSession spark, Dataset<Row> data, int numProc, KoloPartitionTask<R> task) {
        if (numProc < 1) {
            throw new IllegalArgumentException("numProc must be at least 1, not " + numProc);
        }
        Objects.requireNonNull(task, "task must not be null: the KoloPartitionTask each rank runs");
        return runStage(spark.sparkContext(), data.repartition(numProc).rdd(), numProc, true, Options.none(), task::call);
    }

    /** As {@link #run(SparkSession, Dataset, int, KoloPartitionTask)}, one rank per partition {@code data} has now. */
    public static <R> List<R> run(SparkSession spark, Dataset<Row> data, KoloPartitionTask<R> task) {
        Objects.requireNonNull(task, "task must not be null: the KoloPartitionTask each rank runs");
        RDD<Row> rdd = data.rdd();
        if (rdd.getNumPartitions() < 1) {
            // A barrier stage of no tasks "succeeds" at once, and the caller would get no result and no error.
            throw new IllegalArgumentException("the DataFrame has no partitions, so there would be no rank to run the"
                    + " task: pass numProc (KoloSpark.run(spark, data, numProc, task) repartitions it)");
        }
        return runStage(spark.sparkContext(), rdd, rdd.getNumPartitions(), false, Options.none(), task::call);
    }

    private static <T, R> List<R> runStage(SparkContext sc, RDD<T> rdd, int numProc, boolean numProcGiven,
                                           Options options, BarrierRank.Work<T, R> work) {
        JobSpec spec = JobSpec.forRun(sc.conf(), System.getenv(), options.settings());
        TaskSlots.require(sc, numProc, spec.startTimeout(), numProcGiven);
        String port = spec.settings().get("KOLO_DASHBOARD_PORT");
        if (port != null) {
            // The driver learns nothing from the tasks before they end: rank 0's task prints the URL where it runs.
            System.err.println("kolo: rank 0's task serves the job view on " + (port.equals("0") ? "a free port"
                    : "port " + port) + " of its executor's host; its URL is on that executor's stderr"
                    + " (\"kolo: job view at ...\")");
            System.err.flush();
        }
        @SuppressWarnings("unchecked")
        ClassTag<RankResult<R>> tag = (ClassTag<RankResult<R>>) (ClassTag<?>) ClassTag$.MODULE$.apply(RankResult.class);
        RDD<RankResult<R>> ranks = rdd.barrier().mapPartitions(new BarrierRank<>(spec, work), false, tag);
        List<RankResult<R>> results;
        try {
            // Through a shuffle rather than collected from the barrier stage itself: Spark never retries a failed
            // barrier result stage (it may have committed output), but it retries a failed barrier map stage as a
            // whole, and that retry is a new Kolo job.
            results = JavaRDD.fromRDD(ranks, tag).repartition(1).collect();
        } catch (Exception e) {
            // Spark's SparkException is a checked exception that Scala throws undeclared.
            throw StageFailure.explain(numProc, e);
        }
        List<R> inRankOrder = new ArrayList<>(Collections.nCopies(numProc, null));
        for (RankResult<R> r : results) {
            inRankOrder.set(r.rank(), r.value());
        }
        return inRankOrder;
    }
}
