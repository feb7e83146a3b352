package io.kolo.launcher.mpi;

import io.kolo.launcher.workers.MpiWorker;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs {@link MpiWorker} under the real Open MPI {@code mpirun}, as a user would. */
final class Mpirun {
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    static final String CP = System.getProperty("java.class.path");

    record Result(int code, String out, String err) {
        List<String> lines(String prefix) {
            return out.lines().filter(l -> l.startsWith(prefix)).sorted().toList();
        }

        /** The lines of the ranks' stderr (which mpirun passes to its own) that start with {@code prefix}. */
        List<String> errLines(String prefix) {
            return err.lines().filter(l -> l.startsWith(prefix)).sorted().toList();
        }

        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    private Mpirun() {
    }

    /** Skips the calling test, with the reason, when Open MPI's mpirun is not installed. */
    static Path require() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            Path p = Path.of(dir, "mpirun");
            if (Files.isExecutable(p)) {
                try {
                    Process v = new ProcessBuilder(p.toString(), "--version").redirectErrorStream(true).start();
                    String text = new String(v.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    v.waitFor(30, TimeUnit.SECONDS);
                    Assumptions.assumeTrue(text.contains("Open MPI"),
                            "skipped: " + p + " is not Open MPI's mpirun (apt-get install openmpi-bin)");
                    return p;
                } catch (IOException | InterruptedException e) {
                    Assumptions.abort("skipped: cannot run " + p + " --version: " + e.getMessage());
                }
            }
        }
        Assumptions.abort("skipped: mpirun is not installed (apt-get install openmpi-bin)");
        return null;
    }

    /**
     * {@code mpirun [mpirunArgs] java -cp CP MpiWorker [workerArgs]} with the test's environment minus any
     * {@code KOLO_*} variable, plus {@code env}.
     */
    static Result run(List<String> mpirunArgs, Map<String, String> env, String... workerArgs) throws Exception {
        return run(List.of(), mpirunArgs, env, workerArgs);
    }

    /** As {@link #run(List, Map, String...)}, with {@code wrapper} (e.g. {@code ip netns exec NS}) before mpirun. */
    static Result run(List<String> wrapper, List<String> mpirunArgs, Map<String, String> env, String... workerArgs)
            throws Exception {
        return run(wrapper, mpirunArgs, env, List.of(), workerArgs);
    }

    /** As above, with {@code beforeJava} (e.g. {@code env -u VAR}) between mpirun's arguments and java. */
    static Result run(List<String> wrapper, List<String> mpirunArgs, Map<String, String> env, List<String> beforeJava,
                      String... workerArgs) throws Exception {
        List<String> cmd = new ArrayList<>(wrapper);
        cmd.add(require().toString());
        cmd.addAll(mpirunArgs);
        cmd.addAll(beforeJava);
        // Native access for the PMIx calls, as the docs tell users to run it.
        cmd.addAll(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "-cp", CP, MpiWorker.class.getName()));
        cmd.addAll(List.of(workerArgs));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_"));
        // Tests run as root in CI; Open MPI refuses root unless told twice.
        pb.environment().put("OMPI_ALLOW_RUN_AS_ROOT", "1");
        pb.environment().put("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> slurp(p.getErrorStream()));
            String out = slurp(p.getInputStream());
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                throw new AssertionError("mpirun did not finish in 90 s: " + String.join(" ", cmd));
            }
            return new Result(p.exitValue(), out, err.get(10, TimeUnit.SECONDS));
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    /** mpirun's own daemons stay on loopback; more processes than cores is fine for a test. */
    static List<String> oneHost(int np, String... more) {
        List<String> args = new ArrayList<>(List.of("--mca", "oob_tcp_if_include", "lo", "--oversubscribe",
                "-np", Integer.toString(np)));
        args.addAll(List.of(more));
        return args;
    }

    /** The line every rank of a healthy {@link MpiWorker} job prints, sorted by rank. */
    static List<String> expectedLines(int np) {
        List<String> gathered = new ArrayList<>();
        for (int r = 0; r < np; r++) {
            gathered.add(r * 10 + ".0");
        }
        List<String> lines = new ArrayList<>();
        for (int r = 0; r < np; r++) {
            lines.add("rank " + r + " of " + np + " local " + r + " of " + np + ": sum=" + np * (np + 1) / 2
                    + " gathered=" + gathered + " broadcast=4242");
        }
        return lines;
    }

    private static String slurp(java.io.InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read: " + e.getMessage() + ")";
        }
    }
}
