package io.kolo.launcher.mpi;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real one-node Slurm cluster for tests (Debian packages slurmd, slurmctld, slurm-client, munge): its own
 * munged, slurmctld and slurmd, configured in a fresh directory, on free loopback ports. Needs root, because
 * slurmd starts tasks as the submitting user. Call {@link #start()} and {@link #close()}.
 */
final class SlurmCluster implements AutoCloseable {
    private static final String NODE = "kolo-node";
    private final Path dir;
    private final List<Process> daemons = new ArrayList<>();

    private SlurmCluster(Path dir) {
        this.dir = dir;
    }

    /** Starts the cluster, or skips the calling test with the reason it cannot run here. */
    static SlurmCluster start() throws Exception {
        for (String bin : List.of("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/srun",
                "/usr/bin/sinfo")) {
            Assumptions.assumeTrue(Files.isExecutable(Path.of(bin)),
                    "skipped: " + bin + " is missing (apt-get install slurmd slurmctld slurm-client munge)");
        }
        Assumptions.assumeTrue("0".equals(exec(List.of("id", "-u")).trim()),
                "skipped: a test Slurm cluster needs root (slurmd runs tasks as their user)");
        Path dir = Files.createTempDirectory("kolo-slurm-");
        SlurmCluster c = new SlurmCluster(dir);
        try {
            c.launch();
            return c;
        } catch (Exception | AssertionError e) {
            c.close();
            throw e;
        }
    }

    /** The configuration file srun needs ({@code SLURM_CONF}) to find this cluster. */
    String conf() {
        return dir.resolve("slurm.conf").toString();
    }

    private void launch() throws Exception {
        for (String d : List.of("state", "spool", "munge")) {
            Files.createDirectory(dir.resolve(d), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
        }
        byte[] key = new byte[128];
        new SecureRandom().nextBytes(key);
        Path keyFile = Files.write(dir.resolve("munge/munge.key"), key);
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("r--------"));
        String host = exec(List.of("hostname", "-s")).trim();
        Files.writeString(dir.resolve("slurm.conf"), String.join("\n",
                "ClusterName=kolotest",
                "SlurmctldHost=" + host + "(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                "SlurmctldPort=" + freePort(),
                "SlurmdPort=" + freePort(),
                "AuthType=auth/munge",
                "CredType=cred/munge",
                "AuthInfo=socket=" + dir.resolve("munge/munge.socket"),
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none",
                "ReturnToService=2",
                "SchedulerType=sched/builtin",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SlurmdParameters=config_overrides",
                "StateSaveLocation=" + dir.resolve("state"),
                "SlurmdSpoolDir=" + dir.resolve("spool"),
                "SlurmctldPidFile=" + dir.resolve("slurmctld.pid"),
                "SlurmdPidFile=" + dir.resolve("slurmd.pid"),
                "SlurmctldLogFile=" + dir.resolve("slurmctld.log"),
                "SlurmdLogFile=" + dir.resolve("slurmd.log"),
                "NodeName=" + NODE + " NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN",
                "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE",
                ""));
        // munged daemonizes itself; it is stopped through its socket in close().
        exec(List.of("/usr/sbin/munged", "--force", "--socket=" + dir.resolve("munge/munge.socket"),
                "--key-file=" + keyFile, "--log-file=" + dir.resolve("munge/munged.log"),
                "--pid-file=" + dir.resolve("munge/munged.pid"), "--seed-file=" + dir.resolve("munge/seed")));
        daemons.add(daemon("/usr/sbin/slurmctld", "-D", "-i", "-f", conf()));
        daemons.add(daemon("/usr/sbin/slurmd", "-D", "-N", NODE, "-f", conf()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String state = "";
        while (System.nanoTime() < deadline) {
            state = run(List.of("/usr/bin/sinfo", "-h", "-o", "%T")).trim();
            if (state.equals("idle")) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the test Slurm node did not become idle within 60 s (state '" + state + "'); see "
                + dir + "/slurmctld.log and slurmd.log");
    }

    /** Runs {@code command} with this cluster's configuration, to completion, and returns its output. */
    String run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("SLURM_CONF", conf());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish in 30 s");
        }
        return out;
    }

    private Process daemon(String... command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve(Path.of(command[0]).getFileName() + ".out").toFile());
        pb.environment().put("SLURM_CONF", conf());
        return pb.start();
    }

    @Override
    public void close() throws Exception {
        for (Process d : daemons.reversed()) {
            d.descendants().forEach(ProcessHandle::destroy);
            d.destroy();
            if (!d.waitFor(10, TimeUnit.SECONDS)) {
                d.destroyForcibly();
            }
        }
        if (Files.exists(dir.resolve("munge/munge.socket"))) {
            exec(List.of("/usr/sbin/munged", "--stop", "--socket=" + dir.resolve("munge/munge.socket")));
        }
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    private static String exec(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(30, TimeUnit.SECONDS);
        return out;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
