package io.kolo;

import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ranks as separate JVMs, each started from its own {@code KOLO_*} environment (rank 0 serves the rendezvous store,
 * as under mpirun without a launcher), running a test main class from this test class path.
 */
final class ProcessRanks {
    /** What one rank process printed (stdout and stderr together) and how it exited. */
    record Exit(int rank, int code, String output) {
    }

    private ProcessRanks() {
    }

    /**
     * Runs {@code main} with {@code args} as {@code size} ranks; {@code settings} are extra {@code KOLO_*} variables for
     * every rank. Kills every rank and fails when they have not all exited within {@code timeoutSeconds}.
     */
    static List<Exit> run(int size, Class<?> main, List<String> args, Map<String, String> settings,
                          long timeoutSeconds) throws IOException, InterruptedException {
        int port = Ranks.freePort();
        String secret = JobSecret.generate().toHex();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        try {
            for (int r = 0; r < size; r++) {
                List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                        "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-Xss1m", "-cp",
                        System.getProperty("java.class.path"), main.getName()));
                command.addAll(args);
                ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
                Map<String, String> env = pb.environment();
                env.keySet().removeIf(k -> k.startsWith("KOLO_") || k.startsWith("OMPI_") || k.startsWith("PMI")
                        || k.startsWith("SLURM_"));
                env.putAll(settings);
                env.put("KOLO_RANK", Integer.toString(r));
                env.put("KOLO_SIZE", Integer.toString(size));
                env.put("KOLO_RENDEZVOUS_ADDR", "127.0.0.1");
                env.put("KOLO_RENDEZVOUS_PORT", Integer.toString(port));
                env.put("KOLO_SECRET", secret);
                processes.add(pb.start());
            }
            List<Thread> readers = new ArrayList<>();
            String[] outputs = new String[size];
            for (int r = 0; r < size; r++) {
                int rank = r;
                readers.add(Thread.ofPlatform().daemon().start(() -> {
                    try {
                        outputs[rank] = new String(processes.get(rank).getInputStream().readAllBytes(),
                                StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        outputs[rank] = "(output unreadable: " + e + ")";
                    }
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            List<Exit> exits = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                long left = Math.max(1, deadline - System.nanoTime());
                if (!processes.get(r).waitFor(left, TimeUnit.NANOSECONDS)) {
                    throw new AssertionError("rank " + r + " still running after " + timeoutSeconds + " s");
                }
                readers.get(r).join(TimeUnit.SECONDS.toMillis(10));
                exits.add(new Exit(r, processes.get(r).exitValue(), outputs[r]));
            }
            return exits;
        } finally {
            for (Process p : processes) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }
}
