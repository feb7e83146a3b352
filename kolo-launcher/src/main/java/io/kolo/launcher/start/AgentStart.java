package io.kolo.launcher.start;

import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.Supervisor;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A worker on another host started through an rsh agent that is not ssh (the training operator's {@code kubexec.sh}:
 * {@code kubectl exec POD -- /bin/sh -c "$*"}): the agent is called as {@code AGENT HOST COMMAND}, the host name passed
 * on untouched, the command one POSIX shell line. Nothing travels on stdin: the command runs the {@link RankAgent},
 * which fetches the rank's environment from the launcher's {@link AgentOffice} with the one-time token on its command
 * line, runs the rank behind the {@link RankWrapper}, and ends it when the heartbeat with the launcher stops.
 *
 * <p>The agent's own failure (pod not found, exec refused) comes before the rank agent has fetched its environment: what
 * the agent printed until then is held back, and the launcher names the host with it in one line, exit code 127.
 */
public final class AgentStart implements WorkerStart {
    // The rank agent's JVM: small, quick to start, and it allocates almost nothing while the rank runs.
    private static final List<String> AGENT_JVM = List.of("-Xmx32m", "-Xss512k", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData");
    private static final int HELD_LIMIT = 4096;

    private final RshAgent agent;
    private final String host;
    private final AgentOffice office;
    private final int connectSeconds;
    private AgentOffice.Ticket ticket;
    private volatile HeldOutput held;

    /**
     * @param connectSeconds how long the rank agent keeps trying to reach the launcher (the start timeout)
     */
    public AgentStart(RshAgent agent, String host, AgentOffice office, int connectSeconds) {
        this.agent = agent;
        this.host = host;
        this.office = office;
        this.connectSeconds = connectSeconds;
    }

    @Override
    public synchronized List<String> command(List<String> program, String workingDirectory, Map<String, String> env) {
        if (ticket == null) {
            ticket = office.issue(host, env);
        }
        List<String> rank = new ArrayList<>(List.of("exec", Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()));
        rank.addAll(AGENT_JVM);
        rank.addAll(List.of("-cp", absoluteClassPath(), RankAgent.class.getName(),
                office.addresses(), ticket.token, Integer.toString(connectSeconds), workingDirectory));
        rank.addAll(program);
        List<String> argv = new ArrayList<>(agent.argv());
        argv.add(host);
        argv.add(RankEnvironment.shellQuote(rank));
        return RankWrapper.detached(argv);
    }

    /** This JVM's class path, each entry absolute: the agent starts in the pod's working directory, not ours. */
    private static String absoluteClassPath() {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            entries.add(entry.isEmpty() ? entry : Path.of(entry).toAbsolutePath().toString());
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    @Override
    public boolean offersStdin() {
        return false;
    }

    @Override
    public boolean remote() {
        return true;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public String describe(int rank) {
        return "rank " + rank + " on host " + host;
    }

    @Override
    public void check(List<String> program, String workingDirectory) {
        // Nothing can be checked here: the host is reached through the agent alone.
    }

    @Override
    public void handOver(Process p, Map<String, String> env) throws IOException {
        ticket().attach(p);
        p.getOutputStream().close();
    }

    @Override
    public InputStream errors(InputStream raw) {
        held = new HeldOutput(raw);
        return held;
    }

    @Override
    public int exitCode(int code) {
        return ticket().claimed() ? code : Supervisor.START_FAILED;
    }

    @Override
    public String ownFailure(int rank, int code) {
        AgentOffice.Ticket t = ticket();
        if (!t.claimed()) {
            HeldOutput h = held;
            String said = h == null ? "" : h.text();
            return "cannot start rank " + rank + " on host " + host + " through the rsh agent " + agent.describe()
                    + " (" + agent.source() + "): " + (said.isEmpty() ? "it exited with code " + code
                    + " before the rank started, saying nothing" : said);
        }
        if (t.lost() != null) {
            return describe(rank) + " was lost: " + t.lost() + " (the rank there stops by itself)";
        }
        return null;
    }

    @Override
    public void askToStop() {
        AgentOffice.Ticket t;
        synchronized (this) {
            t = ticket;
        }
        if (t != null) {
            t.requestStop();
        }
    }

    private synchronized AgentOffice.Ticket ticket() {
        return ticket;
    }

    /**
     * The agent's stderr as the launcher relays it: held back until the rank agent has fetched its environment (until
     * then it is the agent's own output, kept for the failure line), then passed on, held part first.
     */
    private final class HeldOutput extends InputStream {
        private final InputStream raw;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private byte[] pending;
        private int pendingAt;

        HeldOutput(InputStream raw) {
            this.raw = raw;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            while (true) {
                if (pending != null) {
                    int n = Math.min(len, pending.length - pendingAt);
                    System.arraycopy(pending, pendingAt, b, off, n);
                    pendingAt += n;
                    if (pendingAt == pending.length) {
                        pending = null;
                    }
                    return n;
                }
                int n = raw.read(b, off, len);
                if (n < 0) {
                    return -1;
                }
                AgentOffice.Ticket t = ticket();
                synchronized (kept) {
                    if (t != null && t.claimed()) {
                        if (kept.size() == 0) {
                            return n;
                        }
                        kept.write(b, off, n);
                        pending = kept.toByteArray();
                        pendingAt = 0;
                        kept.reset();
                        continue;
                    }
                    if (kept.size() < HELD_LIMIT) {
                        kept.write(b, off, Math.min(n, HELD_LIMIT - kept.size()));
                    }
                }
            }
        }

        @Override
        public void close() throws IOException {
            raw.close();
        }

        /** What the agent said before the rank started, as one line. */
        String text() {
            String all;
            synchronized (kept) {
                all = kept.toString(StandardCharsets.UTF_8);
            }
            return String.join("; ", all.lines().map(String::strip).filter(l -> !l.isEmpty()).toList());
        }
    }
}
