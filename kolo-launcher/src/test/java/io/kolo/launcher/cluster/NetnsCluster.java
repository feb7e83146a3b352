package io.kolo.launcher.cluster;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Several "hosts" on this machine for real multi-host tests: one Linux network namespace per host, each
 * running a real OpenSSH {@code sshd} on port 22 of its own address on {@code eth0}, joined by veth pairs to a
 * bridge (also called {@code eth0}, so one interface name works everywhere) in a launcher namespace, where the test runs {@code kolo run} (or mpirun). Addresses (10.77.0.0/24) exist only
 * inside these namespaces and none of them has a route anywhere else, so no test traffic can leave them.
 *
 * <p>Host {@code i} is called {@code job-worker-i.job.ns.svc} (the names an MPIJob's workers get) through
 * a hosts file that {@code ip netns exec} bind-mounts over {@code /etc/hosts} in the launcher namespace
 * only; its resolver points at the namespace's own loopback, where nothing answers, so a name the file
 * lacks fails at once, and {@link #revealName} adds a name later (a pod that is still starting). The
 * user key pair comes from {@code kolo keys generate}; ssh clients use {@link #sshConfig()} and never
 * read or write {@code ~/.ssh}.
 *
 * <p>{@link #start} skips the calling test (JUnit assumption, reason printed) when not root, or when
 * {@code ip netns}, {@code sshd} or {@code ssh} is missing. {@link #close} kills every process in the
 * namespaces and deletes them and their files; namespaces left by a test JVM that died are removed by
 * the next {@link #start}.
 */
public final class NetnsCluster implements AutoCloseable {
    public static final String SUBNET = "10.77.0.";
    public static final String LAUNCHER_ADDRESS = SUBNET + "1";
    private static final String PREFIX = "kt";
    private static final Pattern OURS = Pattern.compile("^" + PREFIX + "(\\d+)x\\d+-\\w+");
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final String SSHD = "/usr/sbin/sshd";

    private final String id;
    private final int hosts;
    private final Path dir;
    private final Path keys;
    private final List<Process> sshds = new ArrayList<>();
    private final boolean[] named;
    private final boolean withSshd;
    private boolean namesOnHosts;
    private boolean closed;

    private NetnsCluster(String id, int hosts, Path dir, boolean withSshd) {
        this.withSshd = withSshd;
        this.id = id;
        this.hosts = hosts;
        this.dir = dir;
        this.keys = dir.resolve("keys");
        this.named = new boolean[hosts];
        Arrays.fill(named, true);
    }

    /**
     * Makes {@code hosts} hosts with sshd running and answering, files under {@code dir}; skips the test
     * with a printed reason when this machine cannot.
     */
    public static NetnsCluster start(int hosts, Path dir) {
        return start(hosts, dir, true);
    }

    /**
     * Makes {@code hosts} hosts without sshd, as the pods of a training operator's MPIJob v1: reached only through an
     * rsh agent that runs a command in a host's namespace ({@link #hostNs}).
     */
    public static NetnsCluster startPods(int hosts, Path dir) {
        return start(hosts, dir, false);
    }

    private static NetnsCluster start(int hosts, Path dir, boolean withSshd) {
        assume(isRoot(), "needs root (network namespaces" + (withSshd ? " and sshd)" : ")"));
        assume(Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip"))
                || Files.isExecutable(Path.of("/usr/bin/ip")), "needs iproute2 (ip netns)");
        if (withSshd) {
            assume(Files.isExecutable(Path.of(SSHD)), "needs OpenSSH's sshd (apt-get install openssh-server)");
            assume(which("ssh"), "needs the ssh client (apt-get install openssh-client)");
            assume(which("ssh-keygen"), "needs ssh-keygen (apt-get install openssh-client)");
        }
        removeLeftovers();
        String id = PREFIX + ProcessHandle.current().pid() + "x" + COUNTER.incrementAndGet();
        // Probe: some containers are root without the right to make namespaces.
        ExecResult probe = exec(List.of("ip", "netns", "add", id + "-l"));
        assume(probe.code == 0, "cannot create network namespaces here: " + probe.output.strip());
        NetnsCluster c = new NetnsCluster(id, hosts, dir, withSshd);
        Runtime.getRuntime().addShutdownHook(new Thread(c::close, "netns-cluster-cleanup"));
        boolean ok = false;
        try {
            c.build();
            ok = true;
            return c;
        } finally {
            if (!ok) {
                c.close();
            }
        }
    }

    private void build() {
        try {
            Files.createDirectories(dir);
            String l = launcherNs();
            run("ip", "-n", l, "link", "set", "lo", "up");
            run("ip", "-n", l, "link", "add", "eth0", "type", "bridge");
            run("ip", "-n", l, "addr", "add", LAUNCHER_ADDRESS + "/24", "dev", "eth0");
            run("ip", "-n", l, "link", "set", "eth0", "up");
            for (int i = 0; i < hosts; i++) {
                String h = hostNs(i);
                run("ip", "netns", "add", h);
                run("ip", "-n", h, "link", "set", "lo", "up");
                run("ip", "-n", l, "link", "add", "vh" + i, "type", "veth", "peer", "name", "eth0", "netns", h);
                run("ip", "-n", l, "link", "set", "vh" + i, "master", "eth0", "up");
                run("ip", "-n", h, "addr", "add", address(i) + "/24", "dev", "eth0");
                run("ip", "-n", h, "link", "set", "eth0", "up");
                writeEtc(h, "");
            }
            writeEtc(l, hostsLines());
            if (!withSshd) {
                return;
            }
            // kolo keys generate makes the user key pair, as a user would for a self-managed cluster.
            int code = io.kolo.launcher.TestAccess.kolo("keys", "generate", "--out", keys.toString());
            if (code != 0) {
                throw new IllegalStateException("kolo keys generate failed with " + code);
            }
            Files.writeString(dir.resolve("ssh_config"), String.join("\n",
                    "Host *",
                    "  User root",
                    "  IdentityFile " + keys.resolve("id_ed25519"),
                    "  IdentitiesOnly yes",
                    "  IdentityAgent none",
                    "  StrictHostKeyChecking no",
                    "  UserKnownHostsFile /dev/null",
                    "  GlobalKnownHostsFile /dev/null",
                    "  LogLevel ERROR",
                    ""));
            Files.createDirectories(Path.of("/run/sshd"));
            for (int i = 0; i < hosts; i++) {
                startSshd(i);
            }
            for (int i = 0; i < hosts; i++) {
                awaitSsh(i);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void startSshd(int i) throws IOException {
        Path hd = dir.resolve("host" + i);
        Files.createDirectories(hd);
        Path hostKey = hd.resolve("ssh_host_ed25519_key");
        if (!Files.exists(hostKey)) {
            run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey.toString());
        }
        Path config = hd.resolve("sshd_config");
        Files.writeString(config, String.join("\n",
                "Port 22",
                "ListenAddress " + address(i),
                "HostKey " + hostKey,
                "PidFile none",
                "AuthorizedKeysFile " + keys.resolve("authorized_keys"),
                "PermitRootLogin yes",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                // The test's temporary directory is not owned the way StrictModes wants a home to be.
                "StrictModes no",
                "PrintMotd no",
                "LogLevel ERROR",
                ""));
        // Each host also gets its own host name and its own /dev/shm, as separate machines have: otherwise
        // Kolo would rightly see one machine and use shared memory between "hosts" instead of TCP.
        // unshare and sh exec in place, so the process we start is still the sshd listener.
        String ownHost = "hostname job-worker-" + i + " && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "
                + SSHD + " -D -e -f '" + config + "'";
        Process p = new ProcessBuilder("ip", "netns", "exec", hostNs(i), "unshare", "--uts", "--mount",
                "--propagation", "private", "sh", "-c", ownHost)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(hd.resolve("sshd.log").toFile()))
                .start();
        synchronized (sshds) {
            while (sshds.size() <= i) {
                sshds.add(null);
            }
            sshds.set(i, p);
        }
    }

    private void awaitSsh(int i) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        ExecResult last;
        do {
            last = exec(inLauncherNs(sshCommand(address(i), "true")));
            if (last.code == 0) {
                return;
            }
            sleep(100);
        } while (System.nanoTime() < deadline);
        String log = "";
        try {
            log = Files.readString(dir.resolve("host" + i).resolve("sshd.log"));
        } catch (IOException ignored) {
            // Reported without it.
        }
        throw new IllegalStateException("sshd on host " + i + " (" + address(i) + ") does not answer: "
                + last.output.strip() + "; sshd said: " + log.strip());
    }

    /** Number of hosts. */
    public int hosts() {
        return hosts;
    }

    /** Host {@code i}'s name as an MPIJob gives it: {@code job-worker-i.job.ns.svc}. */
    public String hostName(int i) {
        return "job-worker-" + i + ".job.ns.svc";
    }

    /** Host {@code i}'s address (only inside the cluster's namespaces). */
    public String address(int i) {
        return SUBNET + (10 + i);
    }

    /** The launcher namespace's name (bridge, launcher address, hosts file). */
    public String launcherNs() {
        return id + "-l";
    }

    /** Host {@code i}'s namespace name. */
    public String hostNs(int i) {
        return id + "-h" + i;
    }

    /** The ssh client configuration every client in the tests uses. */
    public Path sshConfig() {
        return dir.resolve("ssh_config");
    }

    /** The key directory written by {@code kolo keys generate}. */
    public Path keys() {
        return keys;
    }

    /** The ssh command line as one string, e.g. for {@code KOLO_SSH_COMMAND} or mpirun's rsh agent. */
    public String sshCommandLine() {
        return "ssh -F " + sshConfig();
    }

    /** {@code ssh -F config HOST COMMAND}. */
    public List<String> sshCommand(String host, String command) {
        return List.of("ssh", "-F", sshConfig().toString(), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host,
                command);
    }

    /** Variables that make {@code kolo run} use the test's ssh configuration. */
    public Map<String, String> launcherEnv() {
        return Map.of("KOLO_SSH_COMMAND", sshCommandLine());
    }

    /** {@code command} run in the launcher namespace, where the host names resolve. */
    public List<String> inLauncherNs(List<String> command) {
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", launcherNs()));
        argv.addAll(command);
        return argv;
    }

    /** A hostfile in the MPI Operator's format ({@code name slots=N}) for the first {@code count} hosts. */
    public Path hostfile(int count, int slots) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < count; i++) {
            sb.append(hostName(i)).append(" slots=").append(slots).append('\n');
        }
        Path f = dir.resolve("hostfile-" + count + "x" + slots);
        try {
            Files.writeString(f, sb.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return f;
    }

    /**
     * Host names resolve on the hosts too, not only in the launcher namespace (hosts that find each other by name,
     * as pods of one Kubernetes job do); {@link #hideName} and {@link #revealName} then apply there as well.
     */
    public synchronized void resolveNamesOnHosts() {
        namesOnHosts = true;
        rewriteHosts();
    }

    /**
     * {@code command} run on host {@code i} as its own machine, as its sshd runs (own host name, own
     * {@code /dev/shm}), without ssh: e.g. a per-node {@code kolo run}. Every step execs, so the process started
     * is the command itself.
     */
    public List<String> onHost(int i, List<String> command) {
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", hostNs(i), "unshare", "--uts", "--mount",
                "--propagation", "private", "sh", "-c", "hostname job-worker-" + i
                        + " && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec \"$@\"", "sh"));
        argv.addAll(command);
        return argv;
    }

    /** Removes host {@code i}'s name from the hosts file: it no longer resolves (a pod not created yet). */
    public synchronized void hideName(int i) {
        named[i] = false;
        rewriteHosts();
    }

    /** Adds host {@code i}'s name back: it resolves from now on. */
    public synchronized void revealName(int i) {
        named[i] = true;
        rewriteHosts();
    }

    /** Stops host {@code i}'s sshd listener (the host is "down": connections are refused). */
    public void stopSshd(int i) {
        Process p;
        synchronized (sshds) {
            p = i < sshds.size() ? sshds.get(i) : null;
        }
        if (p != null) {
            p.destroy();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** PIDs of the processes running in host {@code i}'s namespace, sshd included. */
    public List<Long> pidsIn(int i) {
        return pidsInNs(hostNs(i));
    }

    /**
     * PIDs of the processes in host {@code i}'s namespace other than its sshd listener (ip netns exec
     * execs sshd, so the listener is the process we started): what a job left behind there.
     */
    public List<Long> jobPidsIn(int i) {
        Process p;
        synchronized (sshds) {
            p = i < sshds.size() ? sshds.get(i) : null;
        }
        long listener = p == null ? -1 : p.pid();
        return pidsIn(i).stream().filter(pid -> pid != listener).toList();
    }

    /**
     * Waits (10 s at most per host) until no job process is left on any host, as after a job ends the ssh sessions
     * and ranks take a moment to go; a description of what is still left, empty when nothing is.
     */
    public String leftOnHosts() throws InterruptedException {
        StringBuilder left = new StringBuilder();
        for (int i = 0; i < hosts; i++) {
            List<Long> pids = jobPidsIn(i);
            for (int attempt = 0; attempt < 100 && !pids.isEmpty(); attempt++) {
                Thread.sleep(100);
                pids = jobPidsIn(i);
            }
            for (long pid : pids) {
                left.append("host ").append(i).append(": ").append(pid).append(' ')
                        .append(ProcessHandle.of(pid).flatMap(h -> h.info().commandLine()).orElse("?")).append('\n');
            }
        }
        return left.toString();
    }

    private static List<Long> pidsInNs(String ns) {
        ExecResult r = exec(List.of("ip", "netns", "pids", ns));
        if (r.code != 0) {
            return List.of();
        }
        return r.output.lines().map(String::strip).filter(s -> s.matches("\\d+")).map(Long::parseLong).toList();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        synchronized (sshds) {
            sshds.stream().filter(p -> p != null).forEach(Process::destroyForcibly);
        }
        List<String> namespaces = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            namespaces.add(hostNs(i));
        }
        namespaces.add(launcherNs());
        destroy(namespaces);
    }

    private static void destroy(List<String> namespaces) {
        for (String ns : namespaces) {
            for (long pid : pidsInNs(ns)) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        for (String ns : namespaces) {
            for (int attempt = 0; attempt < 50 && !pidsInNs(ns).isEmpty(); attempt++) {
                pidsInNs(ns).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                sleep(100);
            }
            exec(List.of("ip", "netns", "del", ns));
            deleteTree(Path.of("/etc/netns", ns));
        }
    }

    /** Namespaces of ours whose test JVM is gone (killed before its cleanup ran). */
    private static void removeLeftovers() {
        ExecResult r = exec(List.of("ip", "netns", "list"));
        List<String> stale = new ArrayList<>();
        for (String line : r.output.lines().toList()) {
            String name = line.strip().split("\\s+")[0];
            Matcher m = OURS.matcher(name);
            if (m.find() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                stale.add(name);
            }
        }
        destroy(stale);
    }

    private String hostsLines() {
        StringBuilder sb = new StringBuilder("127.0.0.1 localhost\n" + LAUNCHER_ADDRESS + " launcher\n");
        for (int i = 0; i < hosts; i++) {
            if (named[i]) {
                sb.append(address(i)).append(' ').append(hostName(i)).append(' ')
                        .append("job-worker-").append(i).append('\n');
            }
        }
        return sb.toString();
    }

    private void rewriteHosts() {
        // In place (same inode): ip netns exec bind-mounts this very file, so a new file would go unseen.
        List<String> namespaces = new ArrayList<>(List.of(launcherNs()));
        for (int i = 0; namesOnHosts && i < hosts; i++) {
            namespaces.add(hostNs(i));
        }
        try {
            for (String ns : namespaces) {
                Files.writeString(Path.of("/etc/netns", ns, "hosts"), hostsLines(), StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeEtc(String ns, String hostsFile) throws IOException {
        Path etc = Path.of("/etc/netns", ns);
        Files.createDirectories(etc);
        Files.writeString(etc.resolve("hosts"), hostsFile.isEmpty() ? "127.0.0.1 localhost\n" : hostsFile);
        // Nothing listens on the namespace's own loopback, so a name missing from the hosts file fails at once.
        Files.writeString(etc.resolve("resolv.conf"), "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
        Files.writeString(etc.resolve("nsswitch.conf"), "passwd: files\ngroup: files\nshadow: files\n"
                + "hosts: files dns\n");
    }

    private static void deleteTree(Path p) {
        if (!Files.exists(p)) {
            return;
        }
        try (var files = Files.walk(p)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException ignored) {
                    // Best effort.
                }
            });
        } catch (IOException ignored) {
            // Best effort.
        }
    }

    private static void run(String... argv) {
        ExecResult r = exec(List.of(argv));
        if (r.code != 0) {
            throw new IllegalStateException(String.join(" ", argv) + " failed (" + r.code + "): " + r.output.strip());
        }
    }

    /** Exit code and merged output of a finished command. */
    public record ExecResult(int code, String output) {
    }

    /** Runs {@code argv} to completion (60 s at most) and returns its code and merged output. */
    public static ExecResult exec(List<String> argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new ExecResult(-1, new String(out, StandardCharsets.UTF_8) + " (timed out)");
            }
            return new ExecResult(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return new ExecResult(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new ExecResult(-1, "interrupted");
        }
    }

    private static boolean isRoot() {
        ExecResult r = exec(List.of("id", "-u"));
        return r.code == 0 && r.output.strip().equals("0");
    }

    private static boolean which(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    private static void assume(boolean ok, String reason) {
        if (!ok) {
            System.out.println("SKIPPED multi-host test: " + reason);
        }
        Assumptions.assumeTrue(ok, reason);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
