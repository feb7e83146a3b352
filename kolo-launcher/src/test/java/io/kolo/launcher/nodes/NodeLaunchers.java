package io.kolo.launcher.nodes;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * Per-node launchers of one job ({@code kolo run --nnodes N}) as real processes, each a JVM of its own in a process
 * group of its own (so a test can kill a whole "node"), with the job secret every node shares.
 */
public final class NodeLaunchers implements AutoCloseable {
    public static final String CP = System.getProperty("java.class.path");
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    /** One node's launcher and what it printed so far. */
    public record Node(int rank, Process process, StringBuilder out, StringBuilder err, List<Thread> readers) {
        /** Waits (bounded) for the launcher to exit and its output to be read; its exit code. */
        public int await() throws InterruptedException {
            if (!process.waitFor(150, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("node " + rank + "'s kolo run did not finish: " + out + err);
            }
            for (Thread t : readers) {
                t.join(java.time.Duration.ofSeconds(30));
            }
            return process.exitValue();
        }

        public String output() {
            synchronized (out) {
                synchronized (err) {
                    return "node " + rank + " stdout:\n" + out + "node " + rank + " stderr:\n" + err;
                }
            }
        }
    }

    private final String secret;
    private final List<Node> nodes = new ArrayList<>();
    private final BiFunction<Integer, List<String>, List<String>> wrap;

    /** Launchers on this machine. */
    public NodeLaunchers() {
        this((node, cmd) -> cmd);
    }

    /** Launchers whose command lines {@code wrap} turns into the one that runs them on their node. */
    public NodeLaunchers(BiFunction<Integer, List<String>, List<String>> wrap) {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        this.secret = HexFormat.of().formatHex(b);
        this.wrap = wrap;
    }

    /** A TCP port free on this machine now. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Starts {@code kolo ARGS} as node {@code rank}'s launcher. */
    public Node start(int rank, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "-cp", CP,
                "io.kolo.launcher.Main"));
        cmd.addAll(args);
        List<String> argv = new ArrayList<>(List.of("setsid"));
        argv.addAll(wrap.apply(rank, cmd));
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().put("KOLO_SECRET", secret);
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process p = pb.start();
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        List<Thread> readers = List.of(Thread.ofVirtual().start(() -> collect(p.getInputStream(), out)),
                Thread.ofVirtual().start(() -> collect(p.getErrorStream(), err)));
        Node node = new Node(rank, p, out, err, readers);
        nodes.add(node);
        return node;
    }

    /** SIGKILL to the node's launcher and everything in its process group (its ranks): a node that dies. */
    public static void kill(Node node) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-KILL", "--", "-" + node.process().pid()).start().waitFor();
    }

    /** Waits until {@code count} lines of the node's stdout contain {@code word}. */
    public static void awaitLines(Node node, String word, int count) throws InterruptedException {
        for (int attempt = 0; attempt < 1200; attempt++) {
            synchronized (node.out()) {
                if (node.out().toString().lines().filter(l -> l.contains(word)).count() >= count) {
                    return;
                }
            }
            if (!node.process().isAlive()) {
                break;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("node " + node.rank() + "'s ranks did not all report '" + word + "': "
                + node.output());
    }

    private static void collect(InputStream in, StringBuilder sink) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (sink) {
                    sink.append(line).append('\n');
                }
            }
        } catch (IOException ignored) {
            // The process is gone; what arrived is what the test checks.
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        for (Node n : nodes) {
            if (n.process().isAlive()) {
                kill(n);
            }
        }
    }
}
