package io.kolo.spark;

import org.apache.spark.sql.SparkSession;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Spark sessions for the tests, on loopback only: {@code local[N]} (every rank in this JVM) and Spark's own
 * {@code local-cluster[workers,cores,memory]}, a real Master and Workers in this JVM whose executors are separate JVM
 * processes started from the Spark home the build lays out in {@code target/spark-home} (its {@code jars/} are the
 * Spark jars the build resolved). Executors get this module's and kolo-core's classes through
 * {@code spark.executor.extraClassPath}: the test class path less what the Spark home already has.
 */
final class SparkClusters {
    private SparkClusters() {
    }

    static SparkSession local(int threads, Map<String, String> conf) {
        SparkSession.Builder b = base("local[" + threads + "]");
        conf.forEach(b::config);
        return b.getOrCreate();
    }

    static SparkSession localCluster(int workers, int coresPerWorker, int memoryMb, Map<String, String> conf) {
        Path home = Path.of(System.getProperty("kolo.spark.home", "target/spark-home"));
        Path jars = home.resolve("jars");
        assumeTrue(Files.isDirectory(jars), "skipped: no Spark home at " + home + " (mvn process-test-classes builds it)");
        String home2 = System.getenv("SPARK_HOME");
        assumeTrue(home2 != null && Path.of(home2).equals(home), "skipped: SPARK_HOME must be " + home
                + " for local-cluster's Workers (the kolo-spark pom sets it for surefire), is " + home2);
        Set<String> inHome;
        try (Stream<Path> files = Files.list(jars)) {
            inHome = files.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !inHome.contains(Path.of(e).getFileName().toString()))
                .map(e -> Path.of(e).toAbsolutePath().toString())
                .collect(Collectors.joining(File.pathSeparator));
        SparkSession.Builder b = base("local-cluster[" + workers + "," + coresPerWorker + "," + memoryMb + "]")
                .config("spark.home", home.toString())
                .config("spark.executor.memory", (memoryMb * 3 / 4) + "m")
                .config("spark.executor.extraClassPath", classPath)
                .config("spark.executor.extraJavaOptions", System.getProperty("kolo.spark.jvmOptions", ""));
        conf.forEach(b::config);
        return b.getOrCreate();
    }

    private static SparkSession.Builder base(String master) {
        return SparkSession.builder().master(master).appName("kolo-spark-test")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "4")
                // Spark's own slot check would otherwise wait minutes when KoloSpark's did not catch a shortfall.
                .config("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s")
                .config("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", "3");
    }

    /** Waits for the executors of a fresh local-cluster to register, so that tests may use a short start timeout. */
    static void awaitSlots(SparkSession spark, int slots) {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (TaskSlots.slots(spark.sparkContext()) < slots) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("local-cluster's executors did not register within 120 s: "
                        + TaskSlots.slots(spark.sparkContext()) + " of " + slots + " task slots");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
