package io.kolo.launcher.elastic;

import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.start.ProcessStopper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where an elastic job's hosts come from: the fixed {@code -H}/hostfile list, or a {@code --host-discovery-script}
 * run every second whose output lines are {@code host} or {@code host:slots} (Horovod's format; the MPI Operator's
 * {@code /etc/mpi/discover_hosts.sh} prints host names alone, which get {@code --slots-per-host}).
 */
public interface HostDiscovery {
    /** The hosts now, in the order given. @throws Failed when they cannot be found out this time */
    List<Hosts.Host> find() throws Failed;

    /** Whether hosts can change while the job runs (worth polling). */
    boolean changes();

    /** Why the hosts could not be found out, in one line. */
    final class Failed extends Exception {
        private static final long serialVersionUID = 1L;

        Failed(String message) {
            super(message);
        }
    }

    static HostDiscovery fixed(List<Hosts.Host> hosts) {
        List<Hosts.Host> copy = List.copyOf(hosts);
        return new HostDiscovery() {
            @Override
            public List<Hosts.Host> find() {
                return copy;
            }

            @Override
            public boolean changes() {
                return false;
            }
        };
    }

    /** {@code script} run by {@code sh -c} (so it may carry arguments), its lines parsed as above. */
    static HostDiscovery script(String script, int slotsPerHost) {
        return script(script, slotsPerHost, SCRIPT_TIMEOUT);
    }

    /** As {@link #script(String, int)}, giving up on a run of the script after {@code timeout}. */
    static HostDiscovery script(String script, int slotsPerHost, Duration timeout) {
        return new HostDiscovery() {
            @Override
            public List<Hosts.Host> find() throws Failed {
                return parse(run(script, timeout), slotsPerHost, script);
            }

            @Override
            public boolean changes() {
                return true;
            }
        };
    }

    // A script that hangs must not stop the launcher from watching its workers.
    Duration SCRIPT_TIMEOUT = Duration.ofSeconds(10);
    // The scripts running now, for stopAll(): a launcher stopped mid-run must not leave one behind.
    java.util.Set<Process> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The pids of the discovery scripts running now (children of the launcher, not orphans it adopted). */
    static java.util.Set<Long> runningPids() {
        return RUNNING.stream().map(Process::pid).collect(java.util.stream.Collectors.toSet());
    }

    /** Kills the discovery scripts running now, with what they started (the launcher is stopping). */
    static void stopAll() {
        java.util.List<ProcessHandle> all = new ArrayList<>();
        for (Process p : RUNNING) {
            p.descendants().forEach(all::add);
            all.add(p.toHandle());
        }
        ProcessStopper.stop(all, Duration.ofSeconds(1));
    }

    private static String run(String script, Duration timeout) throws Failed {
        // Its output goes to a file, not a pipe: reading a pipe waits for every process that holds it open to end,
        // which for a script that hangs, or leaves something running in the background, is never.
        java.nio.file.Path output;
        java.nio.file.Path errors;
        try {
            output = java.nio.file.Files.createTempFile("kolo-discovery-", ".out");
            errors = java.nio.file.Files.createTempFile("kolo-discovery-", ".err");
        } catch (IOException e) {
            throw new Failed("--host-discovery-script " + script + ": cannot create a file for its output: "
                    + e.getMessage());
        }
        try {
            Process p;
            try {
                p = new ProcessBuilder("sh", "-c", script).redirectError(errors.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                        .redirectOutput(output.toFile()).start();
            } catch (IOException e) {
                throw new Failed("--host-discovery-script " + script + " cannot be started: " + e.getMessage());
            }
            RUNNING.add(p);
            p.onExit().thenRun(() -> RUNNING.remove(p));
            try {
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                    throw new Failed("--host-discovery-script " + script + " did not finish within "
                            + timeout.toSeconds() + " s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new Failed("interrupted while running --host-discovery-script " + script);
            }
            if (p.exitValue() != 0) {
                // Its last error line is what says why (a command not found, an API server that refused).
                throw new Failed("--host-discovery-script " + script + " exited with code " + p.exitValue()
                        + lastLine(errors));
            }
            try (java.io.InputStream in = java.nio.file.Files.newInputStream(output)) {
                return new String(in.readNBytes(1 << 20), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new Failed("--host-discovery-script " + script + ": cannot read its output: " + e.getMessage());
            }
        } finally {
            try {
                java.nio.file.Files.deleteIfExists(output);
                java.nio.file.Files.deleteIfExists(errors);
            } catch (IOException ignored) {
                // A file in the temporary directory, left behind.
            }
        }
    }

    /** {@code ": "} and the last non-blank line of {@code errors} (its end, at most 300 characters), or "". */
    private static String lastLine(java.nio.file.Path errors) {
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(errors.toFile(), "r")) {
            long from = Math.max(0, f.length() - 4096);
            byte[] tail = new byte[(int) (f.length() - from)];
            f.seek(from);
            f.readFully(tail);
            String[] lines = new String(tail, StandardCharsets.UTF_8).strip().split("\n");
            String last = lines[lines.length - 1].strip();
            return last.isEmpty() ? "" : ": " + (last.length() > 300 ? "..." + last.substring(last.length() - 300) : last);
        } catch (IOException e) {
            return "";
        }
    }

    /** Lines {@code host} or {@code host:slots}; blank lines and {@code #} comments skipped; a host listed twice adds up. */
    static List<Hosts.Host> parse(String output, int slotsPerHost, String script) throws Failed {
        List<Hosts.Host> hosts = new ArrayList<>();
        String[] lines = output.split("\n");
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                Hosts.Host h = Hosts.parseEntry(line.indexOf(':') < 0 ? line + ":" + slotsPerHost : line,
                        "--host-discovery-script " + script + " printed '" + line + "' (line " + (n + 1) + ")");
                int at = indexOf(hosts, h.name());
                if (at < 0) {
                    hosts.add(h);
                } else {
                    hosts.set(at, new Hosts.Host(h.name(), hosts.get(at).slots() + h.slots()));
                }
            } catch (UsageException e) {
                throw new Failed(e.getMessage() + "; expected 'host' or 'host:slots' per line");
            }
        }
        return hosts;
    }

    private static int indexOf(List<Hosts.Host> hosts, String name) {
        for (int i = 0; i < hosts.size(); i++) {
            if (hosts.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }
}
