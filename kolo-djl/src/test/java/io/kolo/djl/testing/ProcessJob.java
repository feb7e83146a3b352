package io.kolo.djl.testing;



import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Kolo job of separate JVMs on loopback, without the launcher: the environment contract by hand,
 * rank 0 serving the rendezvous store. Each rank's output goes to files in {@code dir}.
 */
public final class ProcessJob {
    public record Rank(int exitCode, String out, String err) {
    }

    private ProcessJob() {
    }

    public static List<Rank> run(int np, Path dir, long timeoutSeconds, String mainClass, String... args)
            throws IOException, InterruptedException {
        return run(np, dir, timeoutSeconds, Map.of(), mainClass, args);
    }

    /** The same, with {@code extraEnv} added to every rank's environment. */
    public static List<Rank> run(int np, Path dir, long timeoutSeconds, Map<String, String> extraEnv, String mainClass,
                                 String... args) throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        String secret = java.util.HexFormat.of().formatHex(key);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        try {
            for (int r = 0; r < np; r++) {
                List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m",
                        "-cp", System.getProperty("java.class.path"), mainClass));
                cmd.addAll(List.of(args));
                ProcessBuilder pb = new ProcessBuilder(cmd)
                        .redirectOutput(dir.resolve("rank" + r + ".out").toFile())
                        .redirectError(dir.resolve("rank" + r + ".err").toFile());
                Map<String, String> env = pb.environment();
                env.putAll(Map.of("KOLO_RANK", "" + r, "KOLO_SIZE", "" + np, "KOLO_LOCAL_RANK", "" + r,
                        "KOLO_LOCAL_SIZE", "" + np, "KOLO_RENDEZVOUS_PORT", "" + port,
                        "KOLO_RENDEZVOUS_SERVER", "rank0", "KOLO_SECRET", secret, "KOLO_DJL_THREADS", "1",
                        "KOLO_TIMEOUT_SECONDS", "60"));
                env.putAll(extraEnv);
                processes.add(pb.start());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            for (Process p : processes) {
                long left = deadline - System.nanoTime();
                if (!p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
                    throw new AssertionError("the job did not finish within " + timeoutSeconds + " s:\n"
                            + report(dir, np));
                }
            }
            List<Rank> out = new ArrayList<>();
            for (int r = 0; r < np; r++) {
                out.add(new Rank(processes.get(r).exitValue(), Files.readString(dir.resolve("rank" + r + ".out")),
                        Files.readString(dir.resolve("rank" + r + ".err"))));
            }
            return out;
        } finally {
            for (Process p : processes) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    public static String report(Path dir, int np) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < np; r++) {
            for (String stream : new String[]{"out", "err"}) {
                Path f = dir.resolve("rank" + r + "." + stream);
                if (Files.exists(f)) {
                    sb.append("--- rank ").append(r).append(' ').append(stream).append('\n').append(Files.readString(f));
                }
            }
        }
        return sb.toString();
    }

}
