package io.kolo.launcher;

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
interface HostDiscovery {
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
        return new HostDiscovery() {
            @Override
            public List<Hosts.Host> find() throws Failed {
                return parse(run(script), slotsPerHost, script);
            }

            @Override
            public boolean changes() {
                return true;
            }
        };
    }

    // A script that hangs must not stop the launcher from watching its workers.
    Duration SCRIPT_TIMEOUT = Duration.ofSeconds(10);

    private static String run(String script) throws Failed {
        Process p;
        try {
            p = new ProcessBuilder("sh", "-c", script).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new Failed("--host-discovery-script " + script + " cannot be started: " + e.getMessage());
        }
        try {
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readNBytes(1 << 20);
            if (!p.waitFor(SCRIPT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new Failed("--host-discovery-script " + script + " did not finish within "
                        + SCRIPT_TIMEOUT.toSeconds() + " s");
            }
            if (p.exitValue() != 0) {
                throw new Failed("--host-discovery-script " + script + " exited with code " + p.exitValue());
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new Failed("--host-discovery-script " + script + ": cannot read its output: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new Failed("interrupted while running --host-discovery-script " + script);
        }
    }

    /** Lines {@code host} or {@code host:slots}; blank lines and {@code #} comments skipped; a host listed twice adds up. */
    static List<Hosts.Host> parse(String output, int slotsPerHost, String script) throws Failed {
        List<Hosts.Host> hosts = new ArrayList<>();
        for (String raw : output.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                List<Hosts.Host> one = Hosts.parseList(line.indexOf(':') < 0 ? line + ":" + slotsPerHost : line);
                for (Hosts.Host h : one) {
                    int at = indexOf(hosts, h.name());
                    if (at < 0) {
                        hosts.add(h);
                    } else {
                        hosts.set(at, new Hosts.Host(h.name(), hosts.get(at).slots() + h.slots()));
                    }
                }
            } catch (UsageException e) {
                throw new Failed("--host-discovery-script " + script + " printed '" + line + "': " + e.getMessage()
                        + " (expected 'host' or 'host:slots' per line)");
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
